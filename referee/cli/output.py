"""Rendering match results: rich tables for people, a stable dict for scripts."""

from __future__ import annotations

import math
from typing import Any

import msgspec
from rich.markup import escape
from rich.table import Table

from referee.play.match import MatchResult
from referee.play.runner import GameRecord


def _num(x: float, digits: int = 1) -> str:
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "n/a"
    return f"{x:+.{digits}f}"


def match_table(result: MatchResult) -> Table:
    table = Table(title=f"{result.config.game.title}: {len(result.records)} games", title_justify="left")
    width = max(len(b.name) for b in result.bots)
    table.add_column("bot", no_wrap=True, min_width=width)
    for col in ("games", "wins", "win %", "avg score", "pts/deal", "avg place", "failures"):
        table.add_column(col, justify="left" if col == "failures" else "right")
    for b in result.bots:
        d = b.as_dict()
        fails = ", ".join(f"{k} {v}" for k, v in d["failures"].items()) or "-"
        table.add_row(  # a bot's name is its file name: text, never markup
            escape(b.name), str(b.games), str(b.wins), f"{100 * d['win_rate']:.1f}", f"{d['avg_score']:.1f}",
            f"{d['points_per_deal']:.2f}", f"{d['avg_place']:.2f}", fails,
        )
    return table


def elo_lines(result: MatchResult) -> list[str]:
    lines = []
    names = [b.name for b in result.bots]
    if result.stats is not None:
        s = result.stats
        lines.append(
            f"Elo {names[0]} vs {names[1]}: {_num(s.elo)} +/- {_num(s.err95).lstrip('+')} (95%)  "
            f"LOS {100 * s.los:.2f}%  over {s.samples} deal sets (pentanomial {result.pentanomial})"
        )
    if result.sprt is not None:
        p = result.sprt
        verdict = p.decision or "undecided"
        lines.append(f"SPRT: LLR {p.llr:.3f}, bounds ({p.lower:.3f}, {p.upper:.3f}): {verdict}")
    if result.ratings is not None:
        r = result.ratings
        parts = [f"{n} {_num(r.rating(n))} +/- {r.err(n):.0f}" for n in sorted(names, key=r.rating, reverse=True)]
        lines.append("Elo (pairwise from placements, mean 0): " + ", ".join(parts))
    if result.stopped:
        lines.append(result.stopped)
    return lines


def record_dict(rec: GameRecord) -> dict[str, Any]:
    return {
        "game_id": rec.game_id,
        "deal_set": rec.deal_set,
        "seed": rec.seed,
        "seats": rec.seat_names,
        "winner": rec.seat_names[rec.winner] if rec.winner is not None else None,
        "winner_seat": rec.winner,
        "scores": rec.scores,
        "placements": rec.placements,
        "reason": rec.reason,
        "deals": rec.deals,
        "decisions": rec.decisions,
        "failures": [
            {"seat": f.seat, "bot": rec.seat_names[f.seat], "reason": f.reason, "message": f.message}
            for f in rec.failures
        ],
        "log": rec.log_path,
    }


def match_dict(result: MatchResult) -> dict[str, Any]:
    cfg = result.config
    out: dict[str, Any] = {
        "game": cfg.game.name,
        "rules": msgspec.to_builtins(cfg.rules),
        "seed": cfg.seed,
        "games": len(result.records),
        "deal_sets": len({r.deal_set for r in result.records}),
        "time_control": msgspec.to_builtins(cfg.time_control),
        "failure_policy": msgspec.to_builtins(cfg.policy),
        "bots": [b.as_dict() for b in result.bots],
        "elo": None,
        "sprt": None,
        "ratings": None,
        "stopped": result.stopped or None,
        "referee_overhead_us_per_decision": round(
            sum(r.overhead_us * r.decisions for r in result.records) / max(1, sum(r.decisions for r in result.records)), 1
        ),
        "results": [record_dict(r) for r in result.records],
    }
    if result.stats is not None:
        s = result.stats
        out["elo"] = {
            "bot": result.bots[0].name, "opponent": result.bots[1].name,
            "elo": _finite(s.elo), "err95": _finite(s.err95), "los": round(s.los, 6),
            "deal_sets": s.samples, "pentanomial": result.pentanomial,
        }
    if result.sprt is not None:
        p = result.sprt
        out["sprt"] = {"llr": round(p.llr, 6), "lower": round(p.lower, 6), "upper": round(p.upper, 6),
                       "decision": p.decision}
    if result.ratings is not None:
        r = result.ratings
        out["ratings"] = [{"name": n, "elo": _finite(r.rating(n)), "err95": _finite(r.err(n))} for n in r.players]
    return out


def _finite(x: float) -> float | str:
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    return round(x, 3)
