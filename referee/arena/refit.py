"""The MLE Elo beside the online rating, refitted in the background.

The online rating follows play at once but depends on the order of the
units; the maximum-likelihood Elo (referee/stats/mle.py, checked against
Ordo) does not, and has honest error bars. The server refits it over the
closed units among the versions in play (active, of a bot not disqualified)
at most once a minute, on a thread, and keeps the last fit in the `mle_elo`
table, which the leaderboard shows.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from referee.arena.online import UnitResult, elo_comparisons
from referee.arena.submissions import IN_PLAY
from referee.arena.units import done_units
from referee.stats.mle import fit_ratings
from referee.stats.ratings import RatingError

REFIT_EVERY_S = 60.0


@dataclass(frozen=True)
class Fit:
    """One refit: Elo and its 95 % error per submission, or why there is none yet."""

    elo: dict[int, tuple[float, float]]
    units: int
    note: str | None = None


def fit_active(conn: sqlite3.Connection) -> Fit:
    """The MLE Elo of the versions in play from the closed units among them (a read)."""
    active = {r[0] for r in conn.execute(f"SELECT s.id FROM submissions s WHERE {IN_PLAY}")}
    units = [
        UnitResult(tuple(str(m) for m in members), tuple(float(t) for t in totals))
        for _id, members, totals in done_units(conn)
        if set(members) <= active
    ]
    players = sorted({s for u in units for s in u.seats}, key=int)
    if len(players) < 2:
        return Fit({}, len(units), "fewer than two active versions have played")
    try:
        fitted = fit_ratings(elo_comparisons(units), players)
    except RatingError as exc:
        return Fit({}, len(units), str(exc))
    return Fit({int(p): (e, err) for p, e, err in zip(fitted.players, fitted.elo, fitted.err95)}, len(units))


def save_fit(conn: sqlite3.Connection, fit: Fit, now: str) -> None:
    """Replace the last fit (inside a transaction)."""
    conn.execute("DELETE FROM mle_elo")
    conn.executemany(
        "INSERT INTO mle_elo (submission, elo, err95, units, fitted) VALUES (?, ?, ?, ?, ?)",
        [(sub, elo, err, fit.units, now) for sub, (elo, err) in fit.elo.items()],
    )
