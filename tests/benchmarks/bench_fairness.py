"""Benchmark (not a test): what fairness costs per decision.

1. Reading a bot's CPU time: the sandbox's cgroup (one pread of cpuacct.usage
   or cpu.stat) and a process tree in /proc (schedstat of each thread, stat
   of each process), each timed alone; the runner reads twice per decision.
2. freeze_idle: sandboxed matches of first-legal against first-legal with
   and without it, rounds interleaved in alternating order (decisions/s,
   medians), and one freeze plus thaw of a cgroup timed alone.

Run as root on a machine that can sandbox: python tests/benchmarks/bench_fairness.py [ROUNDS]
Figures of a shared, busy machine are noisy: compare ratios within one run.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import trio

from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, run_match
from referee.seats.bot_command import resolve_command
from referee.seats.cgroups import BotCgroup
from referee.seats.cputime import ProcessTreeCpu
from referee.seats.sandbox import SandboxLimits, require_sandbox

ROOT = Path(__file__).resolve().parents[2]
FIRST = ROOT / "sample_bots" / "python" / "first_legal_bot.py"
GAME = get_game("chicago")
RULES = build_rules(GAME, None, {"target_score": 30})


def per_call_us(fn, n: int = 20000) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def reading_costs() -> None:
    proc = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(60)"])
    try:
        tree = ProcessTreeCpu(proc.pid)
        tree.seconds()
        print(f"CPU read, /proc process tree (1 process, 1 thread): {per_call_us(tree.seconds):6.1f} us")
        host = require_sandbox().cgroups
        if "cpuacct" in host.usable:
            group = BotCgroup(host, f"{os.getpid()}-bench", 256 << 20, 8, freeze="freezer" in host.usable)
            try:
                print(
                    f"CPU read, cgroup ({'v2 cpu.stat' if host.v2_parent else 'v1 cpuacct.usage'}): "
                    f"{per_call_us(group.cpu_seconds):6.1f} us"
                )
                if group.can_freeze:
                    sleeper = subprocess.Popen(["sleep", "60"], preexec_fn=group.join_self)  # noqa: PLW1509 (joins its group before exec; no threads here)
                    group.admit(sleeper.pid)  # its v2 groups (v1: it joined them itself)
                    group.close_fds()

                    def cycle() -> None:
                        group.freeze()
                        group.thaw()

                    try:
                        print(
                            f"freeze + thaw of a group with one process ({'v2' if host.freezer_v2 else 'v1'}): "
                            f"{per_call_us(cycle, 2000):6.1f} us"
                        )
                    finally:
                        sleeper.kill()
                        sleeper.wait()
            finally:
                group.remove()
    finally:
        proc.kill()
        proc.wait()


async def match_rate(freeze: bool, games: int) -> float:
    bots = [resolve_command(str(FIRST), name="a"), resolve_command(str(FIRST), name="b")]
    config = MatchConfig(
        game=GAME,
        rules=RULES,
        bots=bots,
        games=games,
        seed=7,
        time_control=TimeControl(decision_ms=5000, startup_ms=20000),
        sandbox=dataclasses.replace(SandboxLimits(), freeze_idle=freeze),
    )
    t0 = time.perf_counter()
    result = await run_match(config)
    elapsed = time.perf_counter() - t0
    return sum(r.decisions for r in result.records) / elapsed


async def main(rounds: int) -> None:
    reading_costs()
    rates: dict[bool, list[float]] = {False: [], True: []}
    for r in range(rounds + 1):  # round 0 warms up
        for freeze in (False, True) if r % 2 else (True, False):
            rate = await match_rate(freeze, 4)
            if r:
                rates[freeze].append(rate)
    off, on = statistics.median(rates[False]), statistics.median(rates[True])
    print(f"sandboxed match, decisions/s (medians of {rounds} rounds, start-ups included):")
    print(f"  without freeze_idle: {off:8.0f}")
    print(f"  with freeze_idle   : {on:8.0f}   ({100 * on / off:.1f} %)")


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 6)
