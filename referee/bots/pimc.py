"""The built-in bot `pimc`: Perfect Information Monte Carlo search, for Swedish
Chicago (2-4 seats) and Ghost Hand Euchre.

For each decision it samples worlds (full deals consistent with everything
this seat has seen: `referee.games.seat_knowledge`), and in each world plays
every candidate action followed by a playout to the end of the deal
(`rollout`: plain poker exchanges, shed low and save the best
card for the last trick, cheapest winners in Euchre). It plays the candidate
with the best mean reward over the worlds. Every candidate meets the same
worlds and the same playout random stream, so the comparison is paired and
a few dozen worlds separate close options.

Chicago exchanges and the face-up card are not searched (see
`search`: exchanges by cheap draws in `search_exchange`).

Late tricks are solved, not played out: at two seats the whole trick phase
(`search_tricks`), at three and four seats the last three tricks
(`search_endgame`), in worlds drawn from the other seats' hand models.

Candidates: every legal action. The
playouts are shared out by sequential halving (Karnin, Koren and Somekh
2013): a few worlds for every candidate, then more for the better half, and
so on, so close choices get most of the budget.

Reward: a seat's score change over the deal minus the mean of the others',
plus a bonus for winning the game (`search.rewards`): the showdown
points, the last trick, a Chicago made or failed, Euchre contracts made or
set all count as the game counts them.

Time and reproducibility (see `search`): `--budget-ms N` (default
200) buys a fixed number of playouts (`ITERATIONS_PER_MS` per millisecond),
so a seeded match replays exactly; the clock in each request caps the search
at 30 % of the decision limit, so it never times out. `--iterations N` sets the
number of playouts outright.

    chicago-referee match "pimc --budget-ms 100" greedy
"""

from __future__ import annotations

import math
import random
from typing import Any

from referee.bots.rollout import finish_deal
from referee.bots.search import Decision, main, rewards
from referee.bots.search_endgame import endgame, pimc_endgame
from referee.bots.search_tricks import pimc_two_seat, two_seat
from referee.games import state_from_position

ITERATIONS_PER_MS = 2.5  # playouts per millisecond of budget (measured on a 2-core machine)


def _sample_world(decision: Decision) -> Any:
    """One sampled world, as an engine state. `Any`, as `rollout` takes states:
    the search calls `clone` and reads `deal_number`, which `GameState` does not promise."""
    return state_from_position(decision.knowledge.sample(decision.rng), decision.rules)


def pimc(decision: Decision) -> object:
    """The candidate with the best mean reward over sampled worlds, found by
    sequential halving: every round plays the surviving candidates in fresh
    worlds (each candidate the same worlds) and keeps the better half, so
    the budget goes where the choice is close."""
    if two_seat(decision.view):
        return pimc_two_seat(decision)
    if endgame(decision.view):
        return pimc_endgame(decision)
    candidates = list(decision.legal)
    seat = decision.seat
    rounds = max(1, math.ceil(math.log2(len(candidates))))
    per_round = decision.iterations / rounds
    totals = dict.fromkeys(range(len(candidates)), 0.0)
    counts = dict.fromkeys(totals, 0)
    alive = list(totals)
    out_of_time = False
    played = 0
    while len(alive) > 1 and not out_of_time:
        worlds = max(1, int(per_round / len(alive)))
        for _ in range(worlds):
            world = _sample_world(decision)
            playout_seed = decision.rng.getrandbits(32)
            for i in alive:
                # Checked before every playout, not every world: a world of
                # 32 candidates can take longer than the clock allows.
                if played and decision.deadline.passed():
                    out_of_time = True
                    break
                state = world.clone()
                state.apply_action(candidates[i])
                gains = finish_deal(state, random.Random(playout_seed))
                totals[i] += rewards(gains, state)[seat]
                counts[i] += 1
                played += 1
            if out_of_time:
                break
        else:
            alive.sort(key=lambda i: (-totals[i] / max(1, counts[i]), i))
            alive = alive[: (len(alive) + 1) // 2]
    means = [totals[i] / counts[i] if counts[i] else -math.inf for i in range(len(candidates))]
    return candidates[max(alive, key=lambda i: (means[i], -i))]


if __name__ == "__main__":
    main("pimc", pimc, ITERATIONS_PER_MS)
