"""Sample bot `pimc`: Perfect Information Monte Carlo search, for Swedish
Chicago (2-4 seats) and Ghost Hand Euchre.

For each decision it samples worlds (full deals consistent with everything
this seat has seen: `referee.games.seat_knowledge`), and in each world plays
every candidate action followed by a playout to the end of the deal
(`referee.games.rollout`: plain poker exchanges, shed low and save the best
card for the last trick, cheapest winners in Euchre). It plays the candidate
with the best mean reward over the worlds. Every candidate meets the same
worlds and the same playout random stream, so the comparison is paired and
a few dozen worlds separate close options.

Candidates: every legal action, except in a Chicago exchange where the 32
discards are cut to a handful (the plain keep, one card more or fewer,
standing pat, changing all five: `rollout.exchange_candidates`).

Reward: a seat's score change over the deal minus the mean of the others',
plus a bonus for winning the game (`search_common.rewards`): the showdown
points, the last trick, a Chicago made or failed, Euchre contracts made or
set all count as the game counts them.

Time and reproducibility (see `search_common`): `--budget-ms N` (default
200) buys a fixed number of playouts (`ITERATIONS_PER_MS` per millisecond),
so a seeded match replays exactly; the clock in each request caps the search
at half the decision limit, so it never times out. `--iterations N` sets the
number of playouts outright.

    chicago-referee match "sample_bots/python/pimc_bot.py --budget-ms 100" sample_bots/python/greedy_bot.py
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_common import Decision, main, rewards  # noqa: E402

from referee.games import state_from_position  # noqa: E402
from referee.games.rollout import finish_deal, search_actions  # noqa: E402

ITERATIONS_PER_MS = 2.5  # playouts per millisecond of budget (measured on a 2-core machine)
MIN_WORLDS = 2


def pimc(decision: Decision) -> object:
    """The candidate with the best mean reward over sampled worlds."""
    rng = decision.rng
    first = state_from_position(decision.knowledge.sample(rng), decision.rules)
    candidates = [a for a in (decision.legal_match(c) for c in search_actions(first)) if a is not None]
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    totals = [0.0] * len(candidates)
    seat = decision.seat
    worlds = max(MIN_WORLDS, decision.iterations // len(candidates))
    world = first
    for w in range(worlds):
        if w:
            if decision.deadline.passed():
                break
            world = state_from_position(decision.knowledge.sample(rng), decision.rules)
        playout_seed = rng.getrandbits(32)
        for i, action in enumerate(candidates):
            state = world.clone()
            state.apply_action(action)
            stream = random.Random(playout_seed)
            gains = finish_deal(state, stream)
            totals[i] += rewards(gains, state)[seat]
    best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
    return candidates[best]


if __name__ == "__main__":
    main("pimc", pimc, ITERATIONS_PER_MS)
