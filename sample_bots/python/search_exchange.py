"""Chicago exchanges for the search bots, by many cheap draws instead of
playouts.

Full-deal playouts judge an exchange badly: each one adds the noise of a
whole deal (the other exchanges, the tricks) to a choice that turns on one
thing, the showdown that follows it. So the search bots score every legal
discard directly:

* **draws**: `DRAWS` random refills of the discard from the cards this seat
  has not seen, the same refills for every discard (a paired comparison);
* **the showdown**: each hand made is worth its showdown points times the
  chance that it beats every other hand at the table; that chance is read
  off a sorted sample of `OPPONENT_HANDS` hands the others could hold after
  a plain exchange of their own (`rollout.chicago_keep`), so a small pair,
  which seldom wins, is worth less than its one point;
* **the last round** (trick play follows): the best card of the hand made
  is also worth the last trick's points times the chance it takes it
  (`LAST_TRICK_ODDS`, by rank).

The random stream is the decision's own, so the choice is reproducible.
"""

from __future__ import annotations

import bisect
import random
from typing import Any

from referee.games.cards import CARD_INT
from referee.games.poker import evaluate, hand_points
from referee.games.rollout import chicago_keep

DRAWS = 300  # refills per discard
OPPONENT_HANDS = 400  # sampled hands of the others, for the chance of winning a showdown
# The chance that a hand whose best card has this rank takes the last trick
# (rank 12 = ace): a rough figure; an ace wins it unless beaten in suit or led around.
LAST_TRICK_ODDS = {12: 0.6, 11: 0.35, 10: 0.2, 9: 0.1}
OTHER_RANK_ODDS = 0.04


def _opponent_values(unseen: list[int], rng: random.Random, ace_low: bool, last: bool) -> list[int]:
    """Sorted hand values the others could show after a plain exchange."""
    values = []
    for _ in range(OPPONENT_HANDS):
        pool = rng.sample(unseen, 10)
        hand = pool[:5]
        keep = chicago_keep(hand, last)
        made = keep + pool[5 : 5 + 5 - len(keep)]
        values.append(evaluate(made, ace_low))
    values.sort()
    return values


def best_exchange(view: Any, legal: list[Any], rules: Any, rng: random.Random) -> Any:
    """The legal exchange with the best expected showdown (and, in the last
    round, last-trick) points; `legal[0]` if none can be scored."""
    hand = [CARD_INT[c] for c in view.hand]
    if len(hand) != 5:
        return None
    round_index = max(1, view.exchange_round) - 1
    last = round_index + 1 >= rules.exchanges
    scored = rules.showdown_after[round_index] or (last and rules.final_showdown)
    ace_low = rules.ace_low_straight
    table = dict(rules.hand_points)
    mine = set(hand)
    unseen = [c for c in range(52) if c not in mine]
    others = max(1, len(view.active) - 1)
    opponents = _opponent_values(unseen, rng, ace_low, last) if scored else []
    refills = [rng.sample(unseen, 5) for _ in range(DRAWS)]
    trick_points = rules.last_trick_points if last else 0
    total_opp = len(opponents)
    best_action, best_score = None, float("-inf")
    for action in legal:
        discard = {CARD_INT[c] for c in action.discard}
        keep = [c for c in hand if c not in discard]
        need = 5 - len(keep)
        score = 0.0
        for refill in refills:
            made = keep + refill[:need]
            if scored:
                value = evaluate(made, ace_low)
                points = hand_points(value, table)
                if points:
                    beats = bisect.bisect_left(opponents, value) / total_opp
                    score += points * beats**others
            if trick_points:
                top = max(made) >> 2
                score += trick_points * LAST_TRICK_ODDS.get(top, OTHER_RANK_ODDS)
        if score > best_score:
            best_action, best_score = action, score
    return best_action
