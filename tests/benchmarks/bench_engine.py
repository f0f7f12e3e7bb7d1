"""Benchmark (not a test): in-process random play through the Chicago engine.

Prints decisions/s and games/s for 2 and 4 players on one core.
Run: python tests/benchmarks/bench_engine.py [seconds]
"""

from __future__ import annotations

import random
import sys
import time

from referee.games.playout import new_game


def measure(n_players: int, seconds: float, options: dict | None = None) -> tuple[float, float]:
    rng = random.Random(1)
    decisions = games = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        state = new_game("chicago", n_players, games, options=options)
        games += 1
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            decisions += 1
    dt = time.perf_counter() - t0
    return decisions / dt, games / dt


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    print(f"Swedish Chicago, uniform random play, {seconds:.0f} s each, one core")
    for n in (2, 4):
        dps, gps = measure(n, seconds)
        print(f"  {n} players, preset gamerules      : {dps:9.0f} decisions/s {gps:8.1f} games/s")
    for n in (2, 4):
        dps, gps = measure(n, seconds, {"chicago_enabled": False})
        print(f"  {n} players, no Chicago calls      : {dps:9.0f} decisions/s {gps:8.1f} games/s")


if __name__ == "__main__":
    main()
