"""Benchmark (not a test): how fast determinization samples positions.

For positions met in seeded random play it reads the seat's knowledge once,
then prints samples/s of `sample` alone and of `sample` followed by building
a playable state (`state_from_position`), on one core.
Run: python tests/benchmarks/bench_determinize.py [seconds]
"""

from __future__ import annotations

import itertools
import random
import sys
import time

from referee.games import PUBLIC, new_game, seat_knowledge, state_from_position

TABLES = [("chicago", 2, None), ("chicago", 4, None), ("ghost_euchre", 3, None)]


def knowledge_at(game: str, n: int, moments: int = 12) -> list:
    """Seat knowledge at a spread of moments of one seeded random game."""
    state = new_game(game, n, 3, options={"max_deals": 40} if game == "chicago" else {"max_hands": 25})
    rng = random.Random(3)
    out = []
    for step in itertools.count():
        if state.is_terminal() or len(out) == moments:
            break
        if step % 7 == 3:
            seat = state.current_player()
            events = [e for a, e in state.events if a in (PUBLIC, seat)]
            out.append((seat_knowledge(state.view(seat), events, state.rules), state.rules))
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    return out


def measure(cases: list, seconds: float, build: bool) -> float:
    rng = random.Random(1)
    done = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for knowledge, rules in cases:
            for _ in range(50):
                position = knowledge.sample(rng)
                if build:
                    state_from_position(position, rules)
                done += 1
    return done / (time.perf_counter() - t0)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    print(f"Determinization, {seconds:.0f} s each, one core")
    for game, n, _ in TABLES:
        cases = knowledge_at(game, n)
        sample = measure(cases, seconds, build=False)
        built = measure(cases, seconds, build=True)
        print(f"  {game:12s} {n} players: {sample:9.0f} samples/s  {built:9.0f} samples+states/s")


if __name__ == "__main__":
    main()
