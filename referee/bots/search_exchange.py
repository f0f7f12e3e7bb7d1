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
  (`LAST_TRICK_ODDS`, by rank);
* **the rounds ahead** (every round but the last): the `LOOKAHEAD` best
  discards by that figure are followed through the later rounds, the hand
  made going on through plain exchanges, and each later showdown (and the
  last trick) is added in (`FUTURE_DRAWS` draws each); at two seats the
  trick phase of `EXACT_AHEAD` of those draws is played out exactly
  against a hand the other seat could end with, a Chicago included;
* **two seats, the last round**: the `SHORTLIST` best discards by that
  quick figure are then played out exactly (`search_tricks.Solver`) against
  `TRICK_SAMPLES` hands the other seat could keep, for the last trick, and
  for a Chicago when this seat has the points to call one; the exact figure
  replaces the quick one.

The random stream is the decision's own, so the choice is reproducible.
"""

from __future__ import annotations

import bisect
import random
from typing import Any

from referee.bots.rollout import chicago_keep
from referee.bots.search_model import card_bits
from referee.bots.search_tricks import CALL_MARGIN_POINTS, Solver
from referee.games.cards import CARD_INT
from referee.games.poker import evaluate, hand_points

DRAWS = 300  # refills per discard
OPPONENT_HANDS = 400  # sampled hands of the others, for the chance of winning a showdown
# The chance that a hand whose best card has this rank takes the last trick
# (rank 12 = ace): a rough figure; an ace wins it unless beaten in suit or led around.
LAST_TRICK_ODDS = {12: 0.6, 11: 0.35, 10: 0.2, 9: 0.1}
OTHER_RANK_ODDS = 0.04
LOOKAHEAD = 6  # best discards by the quick figure that are followed into the later rounds
FUTURE_DRAWS = 100  # draws per later-rounds figure
EXACT_AHEAD = 40  # of those, draws whose trick phase is played out exactly (two seats)
SHORTLIST = 4  # best last-round exchanges by the quick figure that are then played out exactly (two seats)
TRICK_SAMPLES = 24  # refills and hands of the other seat per exact figure


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


def _kept(hand: list[int], action: Any) -> list[int]:
    """The cards of `hand` that the exchange `action` keeps."""
    discard = {CARD_INT[c] for c in action.discard}
    return [c for c in hand if c not in discard]


def best_exchange(
    view: Any, legal: list[Any], rules: Any, rng: random.Random, deadline: Any = None, model: Any = None
) -> Any:
    """The legal exchange with the best expected showdown (and, in the last
    round, last-trick) points; `legal[0]` if none can be scored."""
    hand = [CARD_INT[c] for c in view.hand]
    if len(hand) != 5:
        return None
    ex = _Exchange(view, rules, hand)
    their_hands = model.hands_after_exchange(rng, OPPONENT_HANDS) if model is not None else None
    opponents = ex.rival_values(their_hands, rng) if ex.scored else []
    refills = [rng.sample(ex.unseen, 5) for _ in range(DRAWS)]
    figures = [ex.quick_figure(_kept(hand, action), refills, opponents) for action in legal]
    shows = [show for show, _ in figures]  # the showdown part alone
    quick = [show + trick for show, trick in figures]  # the whole quick figure
    order = sorted(range(len(legal)), key=lambda i: quick[i], reverse=True)
    if len(order) <= 1:
        return legal[order[0]] if order else None
    if not ex.last:
        ahead = _later_rounds(
            rules,
            ex.round_index,
            hand,
            [legal[i] for i in order[:LOOKAHEAD]],
            ex.unseen,
            opponents,
            ex.others,
            rng,
            view,
            their_hands,
            deadline,
        )
        return legal[_rescored(order, quick, ahead)]
    if ex.trick_points and len(view.active) == 2:
        exact = _two_seat_trick_values(
            view, rules, hand, [legal[i] for i in order[:SHORTLIST]], refills, ex.unseen, rng, deadline, their_hands
        )
        if exact is not None:  # it replaces the quick last-trick figure
            return legal[_rescored(order, shows, exact)]
    return legal[order[0]]


class _Exchange:
    """One exchange to choose: this seat's hand, what the round is played
    for (a showdown after it, the last trick after the last round), and the
    cards this seat has not seen."""

    def __init__(self, view: Any, rules: Any, hand: list[int]) -> None:
        self.round_index = max(1, view.exchange_round) - 1
        self.last = self.round_index + 1 >= rules.exchanges
        self.scored = rules.showdown_after[self.round_index] or (self.last and rules.final_showdown)
        self.ace_low = rules.ace_low_straight
        self.table = dict(rules.hand_points)
        self.trick_points = rules.last_trick_points if self.last else 0
        mine = set(hand)
        self.unseen = [c for c in range(52) if c not in mine]
        self.others = max(1, len(view.active) - 1)

    def rival_values(self, their_hands: list[list[int]] | None, rng: random.Random) -> list[Any]:
        """Sorted hand values the others could show: the model's hands, else plain exchanges of random ones."""
        if their_hands is not None:
            return sorted(evaluate(h, self.ace_low) for h in their_hands)
        return _opponent_values(self.unseen, rng, self.ace_low, self.last)

    def quick_figure(self, keep: list[int], refills: list[list[int]], opponents: list[Any]) -> tuple[float, float]:
        """A keep's mean showdown points (each times its chance of beating
        every other hand) and last-trick points (by its best card's rank),
        over `refills`."""
        need = 5 - len(keep)
        total_opp = len(opponents)
        show = trick = 0.0
        for refill in refills:
            made = keep + refill[:need]
            if self.scored:
                value = evaluate(made, self.ace_low)
                points = hand_points(value, self.table)
                if points:
                    beats = bisect.bisect_left(opponents, value) / total_opp
                    show += points * beats**self.others
            if self.trick_points:
                top = max(made) >> 2
                trick += self.trick_points * LAST_TRICK_ODDS.get(top, OTHER_RANK_ODDS)
        return show / DRAWS, trick / DRAWS


def _rescored(order: list[int], figure: list[float], extra: list[float]) -> int:
    """Of the first `len(extra)` indices in `order`, the one with the best
    `figure` plus its `extra` (ties: the earlier in `order`)."""
    return order[max(range(len(extra)), key=lambda j: (figure[order[j]] + extra[j], -j))]


def _later_rounds(
    rules: Any,
    round_index: int,
    hand: list[int],
    actions: list[Any],
    unseen: list[int],
    opponents: list[int],
    others: int,
    rng: random.Random,
    view: Any = None,
    their_hands: list[list[int]] | None = None,
    deadline: Any = None,
) -> list[float]:
    """What each of `actions` is worth in the rounds after this one: the hand
    it makes goes on through plain exchanges (`rollout.chicago_keep`), and
    each later showdown counts as this one does. The trick phase counts its
    best card's share of the last trick, or, at a two-seat table, the exact
    last trick or Chicago against a hand the other seat could end with
    (`_ExactTricks`), unless the clock runs short first. The same draws for
    every action."""
    later = range(round_index + 1, rules.exchanges)
    draws = [rng.sample(unseen, 5 * (1 + len(later))) for _ in range(FUTURE_DRAWS)]
    exact = _ExactTricks(view, rules, their_hands, rng) if view is not None and len(view.active) == 2 else None
    values = _score_later(rules, hand, actions, later, draws, opponents, others, exact, deadline)
    if values is None:  # the clock ran short: the rough odds, for every action alike
        values = _score_later(rules, hand, actions, later, draws, opponents, others, None, None)
        assert values is not None  # without a deadline every action is scored
    return values


def _score_later(
    rules: Any,
    hand: list[int],
    actions: list[Any],
    later: range,
    draws: list[list[int]],
    opponents: list[int],
    others: int,
    exact: Any,
    deadline: Any,
) -> list[float] | None:
    """`_later_rounds` on given draws; None if `deadline` passed first."""
    ace_low = rules.ace_low_straight
    table = dict(rules.hand_points)
    total_opp = max(1, len(opponents))
    values = []
    for action in actions:
        if deadline is not None and deadline.passed():
            return None
        keep = _kept(hand, action)
        total = 0.0
        tricks = 0.0
        for k, pool in enumerate(draws):
            made = keep + pool[: 5 - len(keep)]
            used = set(made)
            fresh = [c for c in pool[5:] if c not in used]
            for r in later:
                last = r + 1 >= rules.exchanges
                kept = chicago_keep(made, last)
                made = kept + fresh[: 5 - len(kept)]
                fresh = fresh[5 - len(kept) :]
                if rules.showdown_after[r] or (last and rules.final_showdown):
                    value = evaluate(made, ace_low)
                    points = hand_points(value, table)
                    if points and opponents:
                        total += points * (bisect.bisect_left(opponents, value) / total_opp) ** others
            if rules.last_trick_points:
                if exact is None:
                    tricks += rules.last_trick_points * LAST_TRICK_ODDS.get(max(made) >> 2, OTHER_RANK_ODDS)
                elif k < EXACT_AHEAD:
                    tricks += exact.value(made, k, set(pool) | set(hand))
        trick_draws = FUTURE_DRAWS if exact is None else min(EXACT_AHEAD, FUTURE_DRAWS)
        values.append(total / FUTURE_DRAWS + tricks / trick_draws)
    return values


class _TrickWorth:
    """What a two-seat trick phase is worth to this seat, played out exactly
    (`search_tricks.Solver`): the last trick, or a Chicago when this seat has
    the points to call one, less the call's margin. Half the swing: this
    seat's own points, as the showdown figure counts them."""

    def __init__(self, view: Any, rules: Any) -> None:
        self.solver = Solver(rules)
        me = view.seat
        self.i_lead = (view.dealer + 1) % 2 == me
        self.i_lead_called = rules.chicago_leader == "declarer" or self.i_lead
        self.may_call = rules.chicago_enabled and view.scores[me] >= rules.chicago_min_score

    def __call__(self, mine: int, theirs: int) -> float:
        value: float = self.solver.value((mine, theirs, self.i_lead, -1, 0))
        if self.may_call:
            value = max(value, self.solver.value((mine, theirs, self.i_lead_called, -1, 1)) - CALL_MARGIN_POINTS)
        return value / 2


class _ExactTricks:
    """A looked-ahead hand's trick phase (`_TrickWorth`) against a hand the
    other seat could end the deal with: one of its model's hands (or a
    random one) put through a plain last exchange, the same for every action."""

    def __init__(self, view: Any, rules: Any, their_hands: list[list[int]] | None, rng: random.Random) -> None:
        self.worth = _TrickWorth(view, rules)
        self.rng = rng
        self.their_hands = their_hands or []
        self.theirs: dict[int, int] = {}  # by draw

    def _their_final(self, k: int, taken: set[int]) -> int:
        got = self.theirs.get(k)
        if got is None:
            rng = self.rng
            start = self.their_hands[k % len(self.their_hands)] if self.their_hands else []
            start = [c for c in start if c not in taken]
            spare = [c for c in range(52) if c not in taken and c not in start]
            rng.shuffle(spare)
            start += spare[: 5 - len(start)]
            kept = chicago_keep(start, True)
            rest = [c for c in spare[5:] if c not in kept and c not in start]
            got = self.theirs[k] = card_bits(kept + rest[: 5 - len(kept)])
        return got

    def value(self, made: list[int], k: int, taken: set[int]) -> float:
        """`made`'s worth in draw `k`; `taken` holds this seat's hand and every card `made` can hold."""
        return self.worth(card_bits(made), self._their_final(k, taken))


def _two_seat_trick_values(
    view: Any,
    rules: Any,
    hand: list[int],
    actions: list[Any],
    refills: list[list[int]],
    unseen: list[int],
    rng: random.Random,
    deadline: Any,
    their_hands: list[list[int]] | None = None,
) -> list[float] | None:
    """What each of `actions` (a last exchange at a two-seat table) is worth
    in the trick phase, in points: the last trick (or a Chicago, when this
    seat may call one) played out exactly against plausible hands of the
    other seat, `TRICK_SAMPLES` of them, the same for every action. None if
    the clock ran out first (the quick figure stands then)."""
    worth = _TrickWorth(view, rules)
    opponents = []
    spare = iter(their_hands or [])
    for refill in refills[:TRICK_SAMPLES]:
        drawn = set(refill)
        theirs = next((h for h in spare if drawn.isdisjoint(h)), None)
        if theirs is None:
            pool = rng.sample([c for c in unseen if c not in drawn], 10)
            kept = chicago_keep(pool[:5], True)
            theirs = kept + pool[5 : 5 + 5 - len(kept)]
        opponents.append(card_bits(theirs))
    values = []
    for action in actions:
        if deadline is not None and deadline.passed():
            return None
        keep = _kept(hand, action)
        need = 5 - len(keep)
        total = 0.0
        for refill, their_bits in zip(refills, opponents):
            total += worth(card_bits(keep + refill[:need]), their_bits)
        values.append(total / len(opponents))
    return values
