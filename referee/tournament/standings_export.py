"""The standings as data: the JSON of `standings --json` and the live
pages, and the CSV of `standings --csv`. Numbers stay numbers: an undefined
or unbounded value is null in JSON and empty in CSV."""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from referee.tournament.standings import RATINGS_NOTE, Standings


def _finite(x: float, digits: int = 3) -> float | None:
    """JSON numbers are numbers: an undefined or unbounded value is null (the
    bot's `flag`, '>' or '<', says when its Elo is unbounded)."""
    return round(x, digits) if math.isfinite(x) else None


def to_dict(st: Standings) -> dict[str, Any]:
    r = st.ratings
    out: dict[str, Any] = {
        "tournament": st.name,
        "game": st.game,
        "format": st.format,
        "table_size": st.table_size,
        "scheduled_games": st.scheduled,
        "finished_games": st.finished,
        "ratings_note": st.rating_note or RATINGS_NOTE,
        "standings": [
            {
                "rank": b.rank,
                "bot": b.name,
                "elo": _finite(b.elo),
                "err95": _finite(b.err95),
                "flag": b.flag,
                "games": b.games,
                "points": b.points,
                "pair_games": b.pair_games,
                "score": _finite(b.score, 6),
                "pair_wins": b.pair_wins,
                "pair_losses": b.pair_losses,
                "pair_draws": b.pair_draws,
                "wins": b.wins,
                "no_results": b.no_results,
                "avg_place": _finite(b.avg_place, 4),
                "avg_points": _finite(b.avg_points, 4),
                "failures": dict(sorted(b.failures.items())),
                "seats": [
                    {"seat": s, "games": x.games, "wins": x.wins, "avg_place": _finite(x.avg_place, 4)}
                    for s, x in enumerate(b.seats)
                ],
            }
            for b in st.bots
        ],
        "los": None,
        "crosstable": {
            a: {b: {"w": w[0], "l": w[1], "d": w[2]} for b, w in sorted(row.items())}
            for a, row in st.crosstable.items()
            if row
        },
        "seat_totals": [
            {"seat": s, "games": x.games, "wins": x.wins, "avg_place": _finite(x.avg_place, 4)}
            for s, x in enumerate(st.seat_totals)
        ],
        "seed": st.seed,
    }
    if r is not None:
        out["los"] = {a: {b: _finite(r.los(a, b), 6) for b in r.players if b != a} for a in r.players}
    return out


CSV_COLUMNS = (
    "rank",
    "bot",
    "elo",
    "err95",
    "flag",
    "games",
    "points",
    "score_pct",
    "pair_wins",
    "pair_losses",
    "pair_draws",
    "wins",
    "avg_place",
    "avg_points",
    "failures",
)


def to_csv(st: Standings) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for b in st.bots:
        w.writerow(
            [
                b.rank,
                b.name,
                _csvnum(b.elo, 1),
                _csvnum(b.err95, 1),
                b.flag,
                b.games,
                f"{b.points:g}",
                _csvnum(100 * b.score, 2),
                b.pair_wins,
                b.pair_losses,
                b.pair_draws,
                b.wins,
                _csvnum(b.avg_place, 3),
                _csvnum(b.avg_points, 2),
                sum(b.failures.values()),
            ]
        )
    return buf.getvalue()


def _csvnum(x: float, digits: int) -> str:
    return "" if not math.isfinite(x) else f"{x:.{digits}f}"
