"""Benchmark (not a test): what a flooding bot costs the referee and the
other games in the same Trio loop.

Three runs, real bot processes, Chicago to 30 points:
1. a clean match (first-legal vs first-legal), alone;
2. a bot that writes 8 unsolicited lines with every reply (the most the cap
   allows without failing) against first-legal: the worst sustained cost;
3. the clean match again, while a match against a stale-id flood bot
   (restarted after every game) runs beside it in the same loop.

Prints decisions/s, the referee's CPU time per decision, and the clean
match's wall time alone and beside the flood.

Run: python tests/benchmarks/bench_flood.py [GAMES]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import trio

from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, MatchResult, run_match
from referee.seats.bot_command import BotSpec, resolve_command

ROOT = Path(__file__).resolve().parents[2]
FIRST = ROOT / "sample_bots" / "python" / "first_legal_bot.py"
BOTS = ROOT / "tests" / "bots"
GAME = get_game("chicago")
RULES = build_rules(GAME, None, {"target_score": 30})


def spec(path: Path, *args: str, name: str) -> BotSpec:
    return resolve_command([str(path), "bench-flood", *args], name=name)


def config(bots: list[BotSpec], games: int) -> MatchConfig:
    return MatchConfig(
        game=GAME,
        rules=RULES,
        bots=bots,
        games=games,
        seed=9,
        time_control=TimeControl(decision_ms=2000, startup_ms=10000),
    )


async def timed(cfg: MatchConfig) -> tuple[MatchResult, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = await run_match(cfg)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def report(label: str, result: MatchResult, wall: float, cpu: float | None) -> None:
    decisions = sum(r.decisions for r in result.records)
    fails = sorted({f.reason for r in result.records for f in r.failures})
    per = "   (shared)" if cpu is None else f"{cpu / max(1, decisions) * 1e6:6.1f} us"
    print(
        f"{label:<44}: {decisions / wall:8.0f} decisions/s, referee CPU {per} per decision, "
        f"wall {wall:5.2f} s, failures {fails or '-'}"
    )


async def main(games: int) -> None:
    clean = config([spec(FIRST, name="a"), spec(FIRST, name="b")], games)
    report("clean match, alone", *await timed(clean))
    early = config([spec(BOTS / "reader_early.py", "count=8", name="early"), spec(FIRST, name="b")], games)
    report("8 unsolicited lines per reply (under the cap)", *await timed(early))
    flood = config([spec(BOTS / "reader_flood.py", "mode=stale", name="flood"), spec(FIRST, name="b")], games)
    beside: dict[str, tuple[MatchResult, float, float]] = {}

    async def run(key: str, cfg: MatchConfig) -> None:
        beside[key] = await timed(cfg)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run, "flood", flood)
        nursery.start_soon(run, "clean", clean)
    result, wall, _ = beside["clean"]
    report("clean match, beside a stale-id flood match", result, wall, None)
    fr, fwall, _ = beside["flood"]
    print(
        f"{'the flood match':<44}: {len(fr.records)} games in {fwall:5.2f} s, failures "
        f"{sorted({f.reason for r in fr.records for f in r.failures})}"
    )


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 40)
