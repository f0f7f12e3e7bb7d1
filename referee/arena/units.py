"""Units and their games, as the arena records them.

A unit is one deal set at one table, played under every rotation of the
seats, so card luck cancels within it. A unit's row is written when it
starts (with its seed), each game's row the moment that game ends (in its
own transaction, keyed by unit and rotation, so it is counted once), and the
unit is closed, with its members' summed scores, when its last game is in.
After a crash, a unit still `running` is played again from its seed: the
games already recorded are kept, the missing rotations are played.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from referee.arena.online import Rating
from referee.play.game_spec import GameRecord

UNITS_SCHEMA = """
CREATE TABLE IF NOT EXISTS units (
    id INTEGER PRIMARY KEY,
    members TEXT NOT NULL,               -- JSON: submission ids at the table, in table order
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'done')),
    started TEXT NOT NULL,
    started_epoch REAL NOT NULL,
    finished TEXT,
    done_order INTEGER UNIQUE,           -- 1, 2, 3... in the order units were closed: the ratings' order
    totals TEXT                          -- JSON: each member's summed score, once done
);
CREATE INDEX IF NOT EXISTS units_by_status ON units (status);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    unit INTEGER NOT NULL REFERENCES units(id),
    rotation INTEGER NOT NULL,
    seats TEXT NOT NULL,                 -- JSON: submission id per seat
    scores TEXT NOT NULL,                -- JSON: score per seat
    placements TEXT NOT NULL,            -- JSON: place per seat, 1 = first
    reason TEXT NOT NULL,                -- how the game ended
    failures TEXT NOT NULL,              -- JSON: [seat, reason code] per failure
    log_name TEXT NOT NULL,
    log_sha256 TEXT NOT NULL,
    finished TEXT NOT NULL,
    UNIQUE (unit, rotation)
);
CREATE TABLE IF NOT EXISTS game_seats (
    game INTEGER NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    submission INTEGER NOT NULL REFERENCES submissions(id),
    PRIMARY KEY (game, seat)
);
CREATE INDEX IF NOT EXISTS game_seats_by_submission ON game_seats (submission, game);
CREATE TABLE IF NOT EXISTS tallies (      -- per version: finished games and units, kept with them
    submission INTEGER PRIMARY KEY REFERENCES submissions(id),
    games INTEGER NOT NULL DEFAULT 0,
    units INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS mle_elo (      -- the last background fit of the MLE Elo (refit.py)
    submission INTEGER PRIMARY KEY REFERENCES submissions(id),
    elo REAL NOT NULL,
    err95 REAL NOT NULL,
    units INTEGER NOT NULL,              -- closed units the fit used
    fitted TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ratings (         -- the online rating after the last unit; replayable from units
    submission INTEGER PRIMARY KEY REFERENCES submissions(id),
    mu REAL NOT NULL,
    sigma REAL NOT NULL
);
"""
# Version 2: each member's online rating after each unit, for the charts (rebuilt from the units on resume).
RATING_HISTORY_SCHEMA = """
CREATE TABLE IF NOT EXISTS rating_history (  -- each member's online rating after each unit, for the charts
    submission INTEGER NOT NULL REFERENCES submissions(id),
    done_order INTEGER NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (submission, done_order)
);
"""


@dataclass(frozen=True)
class Unit:
    id: int
    members: tuple[int, ...]  # submission ids, in table order
    seed: int
    status: str


@dataclass(frozen=True)
class GameRow:
    """A finished game as the API shows it."""

    id: int
    unit: int
    rotation: int
    seats: list[int]
    scores: list[int]
    placements: list[int]
    reason: str
    failures: list[list[Any]]
    log_name: str
    log_sha256: str
    finished: str


def log_name(unit: int, rotation: int) -> str:
    return f"u{unit:07d}-r{rotation}.jsonl"


def start_unit(conn: sqlite3.Connection, members: tuple[int, ...], seed: int, now: str, epoch: float) -> Unit:
    cur = conn.execute(
        "INSERT INTO units (members, seed, status, started, started_epoch) VALUES (?, ?, 'running', ?, ?)",
        (json.dumps(list(members)), seed, now, epoch),
    )
    return Unit(id=int(cur.lastrowid or 0), members=members, seed=seed, status="running")


def running_units(conn: sqlite3.Connection) -> list[Unit]:
    rows = conn.execute("SELECT id, members, seed, status FROM units WHERE status = 'running' ORDER BY id").fetchall()
    return [Unit(id=r[0], members=tuple(json.loads(r[1])), seed=r[2], status=r[3]) for r in rows]


def recorded_rotations(conn: sqlite3.Connection, unit: int) -> set[int]:
    return {r[0] for r in conn.execute("SELECT rotation FROM games WHERE unit = ?", (unit,))}


def record_game(
    conn: sqlite3.Connection,
    unit: int,
    rotation: int,
    seats: tuple[int, ...],
    rec: GameRecord,
    log_sha256: str,
    now: str,
) -> int:
    """One finished game (inside a transaction); a second record of the same rotation is a bug."""
    failures = [[f.seat, f.reason] for f in rec.failures]
    cur = conn.execute(
        "INSERT INTO games (unit, rotation, seats, scores, placements, reason, failures, log_name, log_sha256,"
        " finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            unit,
            rotation,
            json.dumps(list(seats)),
            json.dumps(rec.scores),
            json.dumps(rec.placements),
            rec.reason,
            json.dumps(failures),
            log_name(unit, rotation),
            log_sha256,
            now,
        ),
    )
    game = int(cur.lastrowid or 0)
    conn.executemany(
        "INSERT INTO game_seats (game, seat, submission) VALUES (?, ?, ?)",
        [(game, seat, sub) for seat, sub in enumerate(seats)],
    )
    conn.executemany(
        "INSERT INTO tallies (submission, games) VALUES (?, 1)"
        " ON CONFLICT (submission) DO UPDATE SET games = games + 1",
        [(sub,) for sub in seats],
    )
    return game


def unit_totals(conn: sqlite3.Connection, unit: Unit) -> list[int]:
    """Each member's score summed over the unit's games."""
    totals = dict.fromkeys(unit.members, 0)
    for seats_json, scores_json in conn.execute("SELECT seats, scores FROM games WHERE unit = ?", (unit.id,)):
        for sub, score in zip(json.loads(seats_json), json.loads(scores_json)):
            totals[sub] += score
    return [totals[m] for m in unit.members]


def finish_unit(conn: sqlite3.Connection, unit: Unit, totals: list[int], now: str) -> int:
    """Close a unit; returns its place in the order units were closed (and rated)."""
    conn.execute(
        "UPDATE units SET status = 'done', finished = ?, totals = ?,"
        " done_order = (SELECT coalesce(max(done_order), 0) + 1 FROM units) WHERE id = ?",
        (now, json.dumps(totals), unit.id),
    )
    conn.executemany(
        "INSERT INTO tallies (submission, units) VALUES (?, 1)"
        " ON CONFLICT (submission) DO UPDATE SET units = units + 1",
        [(m,) for m in unit.members],
    )
    return int(conn.execute("SELECT done_order FROM units WHERE id = ?", (unit.id,)).fetchone()[0])


def save_history(conn: sqlite3.Connection, done_order: int, ratings: dict[int, Rating]) -> None:
    """The members' ratings after the unit closed `done_order`-th."""
    conn.executemany(
        "INSERT OR REPLACE INTO rating_history (submission, done_order, mu, sigma) VALUES (?, ?, ?, ?)",
        [(sub, done_order, r.mu, r.sigma) for sub, r in ratings.items()],
    )


def rating_history(conn: sqlite3.Connection, submission: int) -> list[tuple[int, float, float]]:
    """(done_order, mu, sigma) after each of a version's units, oldest first."""
    rows = conn.execute(
        "SELECT done_order, mu, sigma FROM rating_history WHERE submission = ? ORDER BY done_order", (submission,)
    )
    return [(int(r[0]), float(r[1]), float(r[2])) for r in rows]


def done_units(conn: sqlite3.Connection) -> list[tuple[int, tuple[int, ...], list[int]]]:
    """(unit id, members, totals) of every finished unit, in the order they were closed (and rated)."""
    rows = conn.execute("SELECT id, members, totals FROM units WHERE status = 'done' ORDER BY done_order")
    return [(r[0], tuple(json.loads(r[1])), json.loads(r[2])) for r in rows]


_GAME_COLUMNS = "id, unit, rotation, seats, scores, placements, reason, failures, log_name, log_sha256, finished"


def _game(r: tuple[Any, ...]) -> GameRow:
    return GameRow(
        id=r[0],
        unit=r[1],
        rotation=r[2],
        seats=json.loads(r[3]),
        scores=json.loads(r[4]),
        placements=json.loads(r[5]),
        reason=r[6],
        failures=json.loads(r[7]),
        log_name=r[8],
        log_sha256=r[9],
        finished=r[10],
    )


# A unit's games are shown once the unit is whole (a row at a time: a lookup by the unit's key).
_PUBLIC = "EXISTS (SELECT 1 FROM units u WHERE u.id = games.unit AND u.status = 'done')"


def get_game_row(conn: sqlite3.Connection, game: int) -> GameRow | None:
    """A game whose unit has finished, or None."""
    r = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ? AND {_PUBLIC}", (game,)).fetchone()
    return None if r is None else _game(r)


def games_page(conn: sqlite3.Connection, submissions: list[int] | None, after: int, limit: int) -> list[GameRow]:
    """Games of finished units after id `after`, oldest first; only those of `submissions` if given."""
    if submissions is None:
        query = f"SELECT {_GAME_COLUMNS} FROM games WHERE id > ? AND {_PUBLIC} ORDER BY id LIMIT ?"
        rows = conn.execute(query, (after, limit)).fetchall()
    else:
        marks = ",".join("?" * len(submissions))
        query = (
            f"SELECT {_GAME_COLUMNS} FROM games WHERE id > ? AND {_PUBLIC} AND id IN "
            f"(SELECT game FROM game_seats WHERE submission IN ({marks})) ORDER BY id LIMIT ?"
        )
        rows = conn.execute(query, (after, *submissions, limit)).fetchall()
    return [_game(r) for r in rows]


def newest_games(conn: sqlite3.Connection, submissions: list[int], limit: int) -> list[GameRow]:
    """The last `limit` games of finished units that these versions played, newest first."""
    marks = ",".join("?" * len(submissions))
    query = (
        f"SELECT {_GAME_COLUMNS} FROM games WHERE {_PUBLIC} AND id IN "
        f"(SELECT game FROM game_seats WHERE submission IN ({marks})) ORDER BY id DESC LIMIT ?"
    )
    return [_game(r) for r in conn.execute(query, (*submissions, limit)).fetchall()]


def save_ratings(conn: sqlite3.Connection, ratings: dict[int, Rating]) -> None:
    conn.executemany(
        "INSERT INTO ratings (submission, mu, sigma) VALUES (?, ?, ?)"
        " ON CONFLICT (submission) DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma",
        [(sub, r.mu, r.sigma) for sub, r in ratings.items()],
    )


def saved_ratings(conn: sqlite3.Connection) -> dict[int, Rating]:
    return {r[0]: Rating(mu=r[1], sigma=r[2]) for r in conn.execute("SELECT submission, mu, sigma FROM ratings")}


def unit_starts(conn: sqlite3.Connection) -> list[tuple[tuple[int, ...], float]]:
    """(members, start time) of every unit, in the order they started: what matchmaking counts."""
    rows = conn.execute("SELECT members, started_epoch FROM units ORDER BY id")
    return [(tuple(json.loads(r[0])), r[1]) for r in rows]
