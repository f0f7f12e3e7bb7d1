"""Benchmark (not a test): what one search iteration costs in the engine.

Prints, per game and seat count, the rate of (a) sampling a deal from a
seat's knowledge and building a playable state, (b) `state.clone()`, and
(c) a playout to the end of the deal with `referee.bots.rollout`, from a
clone (pimc's unit of work) and from a fresh sample (ismcts's). The search
bots' `ITERATIONS_PER_MS` were set from these figures, with room to spare.

Run: python tests/benchmarks/bench_search.py [seconds]
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

from referee.bots.rollout import finish_deal
from referee.games import new_game, seat_knowledge, state_from_position

TABLES = (("chicago", 2), ("chicago", 3), ("chicago", 4), ("ghost_euchre", 3))


def rate(work: Callable[[], object], seconds: float) -> float:
    count = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        work()
        count += 1
    return count / (time.perf_counter() - t0)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    print(f"per second, {seconds:.0f} s each, one core")
    print(f"{'table':<16} {'sample+state':>13} {'clone':>9} {'clone+playout':>14} {'sample+playout':>15}")
    for game, seats in TABLES:
        rng = random.Random(1)
        state = new_game(game, seats, 5)
        seat = state.current_player()
        knowledge = seat_knowledge(state.view(seat), [(a, e) for a, e in state.events if a in (-1, seat)], state.rules)
        base = state_from_position(knowledge.sample(rng), state.rules)
        sample = rate(lambda: state_from_position(knowledge.sample(rng), state.rules), seconds)
        clone = rate(base.clone, seconds)
        from_clone = rate(lambda: finish_deal(base.clone(), rng), seconds)
        from_sample = rate(lambda: finish_deal(state_from_position(knowledge.sample(rng), state.rules), rng), seconds)
        print(f"{game + '/' + str(seats):<16} {sample:13.0f} {clone:9.0f} {from_clone:14.0f} {from_sample:15.0f}")


if __name__ == "__main__":
    main()
