"""Rendering match results: rich tables for people, a stable dict for scripts."""

from __future__ import annotations

import math
from typing import Any

import msgspec
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from referee.logs.gamelog import evidence_text
from referee.play.game_spec import GameRecord
from referee.play.match import MatchResult
from referee.visible import visible


def _num(x: float, digits: int = 1) -> str:
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "n/a"
    return f"{x:+.{digits}f}"


def say_phrases(console: Console, phrases: list[str], sep: str = ",") -> None:
    """Phrases joined by `sep` (a phrase that ends in a colon takes none) and
    wrapped only between them, so no header line breaks in the middle of a
    phrase at 80 columns (continuation lines are indented); a phrase longer
    than the screen keeps a line of its own."""
    width = console.width or 80
    lines: list[str] = []
    line = ""
    for i, phrase in enumerate(phrases):
        piece = phrase + (sep if i < len(phrases) - 1 and not phrase.endswith(":") else "")
        if line and cell_len(visible(line)) + 1 + cell_len(visible(piece)) > width:
            lines.append(line)
            line = "  " + piece
        else:
            line = f"{line} {piece}" if line else piece
    lines.append(line)
    for text in lines:
        console.print(text, highlight=False, markup=False, soft_wrap=True)


def plural(n: int, word: str) -> str:
    """'1 deal set', '2 deal sets'."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# Columns in the order they are dropped when a table does not fit: least important first.
_OPTIONAL = ("pts/deal", "avg place", "avg score")


def match_table(result: MatchResult, width: int = 80) -> Table:
    """The standings, fitted to `width` columns: less important columns are
    dropped before anything is cut, and bot names are never cut."""
    d = {b.name: b.as_dict() for b in result.bots}
    cells = {
        "games": lambda b: str(b.games),
        "wins": lambda b: str(b.wins),
        "win %": lambda b: f"{100 * d[b.name]['win_rate']:.1f}",
        "avg score": lambda b: f"{d[b.name]['avg_score']:.1f}",
        "pts/deal": lambda b: f"{d[b.name]['points_per_deal']:.2f}",
        "avg place": lambda b: f"{d[b.name]['avg_place']:.2f}",
        "failures": lambda b: str(sum(b.failures.values())) if b.failures else "-",
    }
    columns = list(cells)
    while True:
        table = Table(
            title=f"{result.config.game.title}: {plural(len(result.records), 'game')}",
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        table.add_column("bot", no_wrap=True)
        for col in columns:
            table.add_column(col, justify="right", no_wrap=True)
        for b in result.bots:
            table.add_row(escape(visible(b.name)), *(cells[c](b) for c in columns))  # a name is text, never markup
        droppable = [c for c in _OPTIONAL if c in columns]
        if not droppable or _width(table) <= width:
            return table
        columns.remove(droppable[0])


def _width(table: Table) -> int:
    return Console(width=10_000).measure(table).maximum


def failure_lines(result: MatchResult) -> list[str]:
    """One line per bot and reason code, whole, with one example message."""
    examples: dict[tuple[str, str], tuple[int, str, str]] = {}
    for rec in result.records:
        for i, f in enumerate(rec.failures):
            evidence = rec.evidence[i] if i < len(rec.evidence) else ""
            examples.setdefault((rec.seat_names[f.seat], f.reason), (rec.game_id, f.message, evidence))
    lines = []
    for b in result.bots:
        for reason, count in sorted(b.failures.items()):
            game_id, message, evidence = examples.get((b.name, reason), (0, "", ""))
            example = f": game {game_id}: {_shorten(message)}" if message else ""
            lines.append(f"{b.name} {reason} x{count}{example}")
            if evidence:
                lines.append(f"  what it wrote: {evidence_text(evidence)}")
    return lines


def time_lines(result: MatchResult) -> list[str]:
    """Per bot: wall and CPU time per decision (CPU counts every process of the
    bot; a bot whose CPU is far below its wall time was waiting, one far above
    it ran in parallel)."""
    lines = []
    for b in result.bots:
        if not b.asked:
            continue
        d = b.as_dict()
        cpu = "CPU not measured" if d["cpu_ms_per_decision"] is None else f"{d['cpu_ms_per_decision']:.2f} ms CPU"
        lines.append(f"{b.name}: {d['ms_per_decision']:.2f} ms wall, {cpu} per decision ({b.asked} decisions)")
    return lines


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def elo_lines(result: MatchResult) -> list[str]:
    lines = []
    names = [b.name for b in result.bots]
    if result.stats is not None:
        s = result.stats
        sets = plural(s.samples, "deal set")
        if math.isinf(s.elo):
            best, other = (names[0], names[1]) if s.elo > 0 else (names[1], names[0])
            los = s.los if best == names[0] else 1 - s.los  # s.los is the first bot's
            every = "the only deal set" if s.samples == 1 else f"all {sets}"
            lines.append(f"{best} won {every}; Elo is unbounded (LOS of {best} over {other} {100 * los:.2f}%)")
        elif math.isnan(s.err95):
            lines.append(
                f"Elo {names[0]} vs {names[1]}: {_num(s.elo)}; too few deal sets "
                f"for an error bar (over {sets}, pentanomial {result.pentanomial})"
            )
        else:
            lines.append(
                f"Elo {names[0]} vs {names[1]}: {_num(s.elo)} +/- {s.err95:.1f} (95%)  "
                f"LOS of {names[0]} {100 * s.los:.2f}%  over {sets} (pentanomial {result.pentanomial})"
            )
    if result.sprt is not None:
        p = result.sprt
        verdict = p.decision or "undecided"
        lines.append(f"SPRT: LLR {p.llr:.3f}, bounds ({p.lower:.3f}, {p.upper:.3f}): {verdict}")
    if result.ratings is not None:
        r = result.ratings
        parts = [
            f"{n} {_num(r.rating(n))} +/- {r.err(n):.0f}"
            if math.isfinite(r.rating(n)) and math.isfinite(r.err(n))
            else f"{n} {_num(r.rating(n))} (unbounded)"
            for n in sorted(names, key=r.rating, reverse=True)
        ]
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
            {
                "seat": f.seat,
                "bot": rec.seat_names[f.seat],
                "reason": f.reason,
                "message": f.message,
                "evidence": rec.evidence[i] if i < len(rec.evidence) else "",
            }
            for i, f in enumerate(rec.failures)
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
        "start": cfg.start,
        "bots": [b.as_dict() for b in result.bots],
        "elo": None,
        "sprt": None,
        "ratings": None,
        "stopped": result.stopped or None,
        "referee_overhead_us_per_decision": round(
            sum(r.overhead_us * r.decisions for r in result.records) / max(1, sum(r.decisions for r in result.records)),
            1,
        ),
        "results": [record_dict(r) for r in result.records],
    }
    if result.stats is not None:
        s = result.stats
        out["elo"] = {
            "bot": result.bots[0].name,
            "opponent": result.bots[1].name,
            "elo": _finite(s.elo),
            "err95": _finite(s.err95),
            "los": round(s.los, 6),
            "deal_sets": s.samples,
            "pentanomial": result.pentanomial,
            # Elo is unbounded when one side won every deal set: "elo" is null and this names the side.
            "won_every_deal_set": (result.bots[0].name if s.elo > 0 else result.bots[1].name)
            if math.isinf(s.elo)
            else None,
        }
    if result.sprt is not None:
        p = result.sprt
        out["sprt"] = {
            "llr": round(p.llr, 6),
            "lower": round(p.lower, 6),
            "upper": round(p.upper, 6),
            "decision": p.decision,
        }
    if result.ratings is not None:
        r = result.ratings
        out["ratings"] = [
            {"name": n, "elo": _finite(r.rating(n)), "err95": _finite(r.err(n)), "unbounded": math.isinf(r.rating(n))}
            for n in r.players
        ]
    return out


def _finite(x: float) -> float | None:
    """JSON numbers are numbers: an infinite or undefined value is null (a flag beside it says why)."""
    return round(x, 3) if math.isfinite(x) else None
