"""What the arena shows everyone: the leaderboard, a bot's page data, the
finished games. Public by construction: nothing here reads a build log, a
check report, a bot's stderr or its source, and a running game is in no
table until it has ended.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from referee.arena.online import DEFAULT_MU, DEFAULT_SIGMA
from referee.arena.submissions import IN_PLAY, Submission, disqualification, disqualifications, submissions_of_bot
from referee.arena.units import GameRow

ORDER = "online rating, conservative: mu - 3 sigma (Plackett-Luce, openskill); mle_elo: refitted each minute"


def _counts(conn: sqlite3.Connection) -> dict[int, tuple[int, int]]:
    """Per submission: (games, units) finished, as counted when each was recorded."""
    return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT submission, games, units FROM tallies")}


def _rating(mu: float | None, sigma: float | None) -> dict[str, float]:
    mu = DEFAULT_MU if mu is None else mu
    sigma = DEFAULT_SIGMA if sigma is None else sigma
    return {
        "mu": round(mu, 3),
        "sigma": round(sigma, 3),
        "ordinal": round(mu - 3 * sigma, 3),
        "low": round(mu - 2 * sigma, 3),  # about 95 % of the belief lies between low and high
        "high": round(mu + 2 * sigma, 3),
    }


def leaderboard(conn: sqlite3.Connection) -> dict[str, Any]:
    """Every active version, best first by the conservative online rating; the
    disqualified bots apart, with the host's reason."""
    rows = conn.execute(
        "SELECT s.id, s.bot, b.owner, s.version, s.language, s.active_since, r.mu, r.sigma, m.elo, m.err95, m.fitted"
        " FROM submissions s JOIN bots b ON b.name = s.bot LEFT JOIN ratings r ON r.submission = s.id"
        f" LEFT JOIN mle_elo m ON m.submission = s.id WHERE {IN_PLAY}"
    ).fetchall()
    counts = _counts(conn)
    entries = []
    for sid, bot, owner, version, language, since, mu, sigma, elo, err95, fitted in rows:
        games, units = counts.get(sid, (0, 0))
        mle = None if elo is None else {"elo": round(elo, 1), "err95": round(err95, 1), "fitted": fitted}
        entries.append(
            {
                "bot": bot,
                "owner": owner,
                "version": version,
                "submission": sid,
                "language": language,
                "rating": _rating(mu, sigma),
                "mle_elo": mle,
                "games": games,
                "units": units,
                "active_since": since,
            }
        )
    entries.sort(key=lambda e: (-e["rating"]["ordinal"], e["bot"]))
    for rank, e in enumerate(entries, start=1):
        e["rank"] = rank
    out = [{"bot": d.bot, **d.as_dict(host_view=False)} for d in disqualifications(conn)]
    return {"order": ORDER, "bots": entries, "disqualified": out}


def names(conn: sqlite3.Connection, submissions: list[int]) -> dict[int, str]:
    """`bot.vN` for each submission id."""
    if not submissions:
        return {}
    marks = ",".join("?" * len(submissions))
    rows = conn.execute(f"SELECT id, bot, version FROM submissions WHERE id IN ({marks})", submissions)
    return {r[0]: f"{r[1]}.v{r[2]}" for r in rows}


def game_dict(game: GameRow, shown: dict[int, str]) -> dict[str, Any]:
    return {
        "id": game.id,
        "unit": game.unit,
        "rotation": game.rotation,
        "seats": [shown.get(s, str(s)) for s in game.seats],
        "scores": game.scores,
        "placements": game.placements,
        "reason": game.reason,
        "failures": [{"seat": seat, "reason": reason} for seat, reason in game.failures],
        "finished": game.finished,
        "log_sha256": game.log_sha256,
    }


def bot_page(conn: sqlite3.Connection, bot: str) -> dict[str, Any] | None:
    """A bot's owner, its versions (public fields) and each version's rating and counts."""
    versions: list[Submission] = submissions_of_bot(conn, bot)
    if not versions:
        return None
    counts = _counts(conn)
    ratings = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT submission, mu, sigma FROM ratings")}
    shown = []
    for v in versions:
        d = v.as_dict()
        d.pop("reason", None)
        games, units = counts.get(v.id, (0, 0))
        d.update(games=games, units=units)
        if v.id in ratings:
            d["rating"] = _rating(*ratings[v.id])
        shown.append(d)
    active = next((v.version for v in versions if v.status == "active"), None)
    out = disqualification(conn, bot)
    return {
        "bot": bot,
        "owner": versions[0].owner,
        "active_version": active,
        "disqualified": None if out is None else out.as_dict(host_view=False),
        "versions": shown,
    }
