"""Everything the arena has played, for the host: every unit, every game and
every rating, in full, as JSON or as CSV (a header row, then one row each).

The rows are those of the database, read in one read transaction (one
consistent state) on a connection of their own (`ArenaStore.read_snapshot`),
on a thread: a large export neither stalls the games nor mixes two moments.
What stays hidden from everyone stays hidden here too: a running unit's seed
(it deals the rotations still being played) and its games (they show that
deal). Lists are JSON in a CSV cell; no cell holds text a competitor wrote
(bot and user names are restricted; reasons are the referee's codes).
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from typing import Any

from referee.arena.online import Rating
from referee.arena.store import now_text

UNIT_COLUMNS = ("id", "status", "members", "member_names", "seed", "started", "finished", "done_order", "totals")
GAME_COLUMNS = (
    "id",
    "unit",
    "rotation",
    "seats",
    "seat_names",
    "scores",
    "placements",
    "reason",
    "failures",
    "log_name",
    "log_sha256",
    "finished",
)
RATING_COLUMNS = (
    "submission",
    "bot",
    "version",
    "owner",
    "status",
    "disqualified",
    "mu",
    "sigma",
    "ordinal",
    "games",
    "units",
    "mle_elo",
    "mle_err95",
    "mle_units",
    "mle_fitted",
)


def _names(conn: sqlite3.Connection) -> dict[int, str]:
    return {r[0]: f"{r[1]}.v{r[2]}" for r in conn.execute("SELECT id, bot, version FROM submissions")}


def unit_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every unit, oldest first; a running one without its seed (and without totals: it has none yet)."""
    names = _names(conn)
    rows = []
    query = "SELECT id, status, members, seed, started, finished, done_order, totals FROM units ORDER BY id"
    for uid, status, members_json, seed, started, finished, done_order, totals in conn.execute(query):
        members = json.loads(members_json)
        rows.append(
            {
                "id": uid,
                "status": status,
                "members": members,
                "member_names": [names.get(m, str(m)) for m in members],
                "seed": seed if status == "done" else None,
                "started": started,
                "finished": finished,
                "done_order": done_order,
                "totals": None if totals is None else json.loads(totals),
            }
        )
    return rows


def game_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every game of a finished unit, oldest first."""
    names = _names(conn)
    query = (
        "SELECT g.id, g.unit, g.rotation, g.seats, g.scores, g.placements, g.reason, g.failures, g.log_name,"
        " g.log_sha256, g.finished FROM games g JOIN units u ON u.id = g.unit WHERE u.status = 'done' ORDER BY g.id"
    )
    rows = []
    for gid, unit, rotation, seats_json, scores, placements, reason, failures, log_name, sha, finished in conn.execute(
        query
    ):
        seats = json.loads(seats_json)
        rows.append(
            {
                "id": gid,
                "unit": unit,
                "rotation": rotation,
                "seats": seats,
                "seat_names": [names.get(s, str(s)) for s in seats],
                "scores": json.loads(scores),
                "placements": json.loads(placements),
                "reason": reason,
                "failures": [{"seat": seat, "reason": why} for seat, why in json.loads(failures)],
                "log_name": log_name,
                "log_sha256": sha,
                "finished": finished,
            }
        )
    return rows


def rating_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every version with an online rating or a place in the last MLE fit: the
    rating's mu and sigma at full precision, its counts, and that fit."""
    query = (
        "SELECT s.id, s.bot, s.version, b.owner, s.status, d.bot IS NOT NULL, r.mu, r.sigma,"
        " coalesce(t.games, 0), coalesce(t.units, 0), m.elo, m.err95, m.units, m.fitted"
        " FROM submissions s JOIN bots b ON b.name = s.bot"
        " LEFT JOIN ratings r ON r.submission = s.id LEFT JOIN mle_elo m ON m.submission = s.id"
        " LEFT JOIN tallies t ON t.submission = s.id LEFT JOIN disqualifications d ON d.bot = s.bot"
        " WHERE r.submission IS NOT NULL OR m.submission IS NOT NULL ORDER BY s.id"
    )
    rows = []
    for sid, bot, version, owner, status, out, mu, sigma, games, units, elo, err95, fit_units, fitted in conn.execute(
        query
    ):
        rows.append(
            {
                "submission": sid,
                "bot": bot,
                "version": version,
                "owner": owner,
                "status": status,
                "disqualified": bool(out),
                "mu": mu,
                "sigma": sigma,
                "ordinal": None if mu is None else Rating(mu, sigma).ordinal,
                "games": games,
                "units": units,
                "mle_elo": elo,
                "mle_err95": err95,
                "mle_units": fit_units,
                "mle_fitted": fitted,
            }
        )
    return rows


CSV_TABLES = {
    "units": (UNIT_COLUMNS, unit_rows),
    "games": (GAME_COLUMNS, game_rows),
    "ratings": (RATING_COLUMNS, rating_rows),
}


def export_json(conn: sqlite3.Connection, arena: str) -> bytes:
    """The three tables in one JSON document (call inside one read transaction)."""
    doc = {
        "arena": arena,
        "exported": now_text(),
        "units": unit_rows(conn),
        "games": game_rows(conn),
        "ratings": rating_rows(conn),
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"))
    return value


def export_csv(conn: sqlite3.Connection, table: str) -> bytes:
    """One table as CSV: a header row, then its rows (lists as JSON, nothing as an empty cell)."""
    columns, rows = CSV_TABLES[table]
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows([_cell(row[key]) for key in columns] for row in rows(conn))
    return out.getvalue().encode("utf-8")
