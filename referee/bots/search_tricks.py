"""Two-seat Chicago trick play and the Chicago call, searched exactly in
sampled worlds, with the other seat's hand inferred from its whole deal.

**Worlds that look like real hands.** A uniform sample of the unseen cards
gives the other seat a random hand, but it kept cards in every exchange and
its showdowns said how strong it was. The worlds come from
`search_model.world_source`: the other seat's deal played forward as a particle
filter over its exchange counts, showdowns, shown hands and plays
(`HistoryModel`), or, where that has nothing to go on, sampled positions
filtered by its last exchange (`PlausibleHands`).

**Exact play in each world.** With two seats the rest of the trick phase is
small: at most five cards each, and only the last trick (or, after a
Chicago call, whether the declarer takes every trick) scores. `Solver`
plays it out exactly (minimax over both hands, memoised by the cards left),
so every card is judged by its best continuation in each world, not by one
random playout. The move played is the one with the best mean over the
worlds (Perfect Information Monte Carlo with an exact search, as the bridge
program GIB did); the Chicago call is made when it beats not calling by
`CALL_MARGIN_POINTS` on average.
"""

from __future__ import annotations

from typing import Any

from protocol.chicago import CallChicago
from protocol.common import PlayCard
from referee.bots.search_model import bits_cards, card_bits, world_source
from referee.games.cards import CARD_INT

TRICK_WORLDS = 120  # worlds per trick decision
CALL_WORLDS = 120  # worlds for the Chicago question
CALL_MARGIN_POINTS = 2.0  # a call must beat not calling by this many points on average


def worlds_for(decision: Any, at_default: int) -> int:
    """How many worlds a search of `at_default` worlds at the default budget gets."""
    return max(8, round(at_default * decision.share))


class Solver:
    """Exact value of the rest of a two-seat trick phase for seat `me`, in
    points (mine minus the other seat's): the last trick, or a Chicago.

    A spot is `(mine, theirs, my_turn, led, declarer)`: both hands as card
    bitmasks, whether `me` acts, the card on the table (-1: the seat to act
    leads) and the Chicago declarer (1 me, -1 the other seat, 0 none)."""

    def __init__(self, rules: Any) -> None:
        self.last_trick = rules.last_trick_points
        self.two_bonus = rules.last_trick_two_bonus
        self.chicago = rules.chicago_points
        self.penalty = rules.chicago_penalty
        self.memo: dict[tuple[int, int, bool, int, int], int] = {}
        self.cards_of: dict[int, list[int]] = {}
        self.top = {0: max(self.last_trick, self.two_bonus or 0), 1: self.chicago, -1: self.penalty}
        self.bottom = {0: -self.top[0], 1: -self.penalty, -1: -self.chicago}

    def choices(self, spot: tuple[int, int, bool, int, int]) -> list[int]:
        """The cards the seat to act may play (it must follow suit if it can)."""
        mine, theirs, my_turn, led, _ = spot
        hand = mine if my_turn else theirs
        cards = self.cards_of.get(hand)
        if cards is None:
            cards = self.cards_of[hand] = bits_cards(hand)
        if led >= 0:
            follow = [c for c in cards if c & 3 == led & 3]
            return follow or cards
        return cards

    def after(self, spot: tuple[int, int, bool, int, int], card: int) -> tuple[int | None, Any]:
        """Play `card` for the seat to act: (the final value, None) if that
        ends the trick phase, else (None, the next spot)."""
        mine, theirs, my_turn, led, declarer = spot
        if my_turn:
            mine &= ~(1 << card)
        else:
            theirs &= ~(1 << card)
        if led < 0:
            return None, (mine, theirs, not my_turn, card, declarer)
        follower_wins = card & 3 == led & 3 and card > led
        i_win = follower_wins == my_turn
        if declarer and (declarer == 1) != i_win:
            # The declarer lost a trick: the Chicago fails and nobody scores the last trick.
            return (-self.penalty if declarer == 1 else self.penalty), None
        if not mine:
            if declarer:
                return (self.chicago if declarer == 1 else -self.chicago), None
            points = self.last_trick
            if self.two_bonus is not None and (card if follower_wins else led) >> 2 == 0:
                points = self.two_bonus
            return (points if i_win else -points), None
        return None, (mine, theirs, i_win, -1, declarer)

    def outcome(self, spot: tuple[int, int, bool, int, int], card: int) -> int:
        """The exact value after the seat to act plays `card`."""
        final, nxt = self.after(spot, card)
        return final if final is not None else self.value(nxt)

    def value(self, spot: tuple[int, int, bool, int, int]) -> int:
        got = self.memo.get(spot)
        if got is not None:
            return got
        my_turn, declarer = spot[2], spot[4]
        goal = self.top[declarer] if my_turn else self.bottom[declarer]
        best = None
        for c in self.choices(spot):
            v = self.outcome(spot, c)
            if best is None or (v > best if my_turn else v < best):
                best = v
                if best == goal:
                    break  # nothing can do better for the seat to act
        assert best is not None
        self.memo[spot] = best
        return best


def trick_spot(view: Any, theirs: int) -> tuple[int, int, bool, int, int]:
    """The spot of a two-seat trick phase, from `view` and the other seat's cards."""
    mine = card_bits([CARD_INT[c] for c in view.hand])
    declarer = 0 if view.chicago_declarer is None else (1 if view.chicago_declarer == view.seat else -1)
    led = CARD_INT[view.trick[0].card] if view.trick else -1
    return (mine, theirs, True, led, declarer)


def two_seat(view: Any) -> bool:
    """Is this a two-seat Chicago call or trick, which `Solver` can play exactly?"""
    return view.n_players == 2 and len(view.active) == 2 and view.phase in ("trick", "chicago_call")


def pimc_two_seat(decision: Any) -> Any:
    """Flat PIMC for a two-seat Chicago call or trick: each card's exact value
    averaged over plausible worlds; None when this is not such a decision."""
    view = decision.view
    if not two_seat(view):
        return None
    solver = Solver(decision.rules)
    if view.phase == "chicago_call":
        return chicago_call(decision, solver)
    options = [a for a in decision.legal if isinstance(a, PlayCard)]
    if len(options) <= 1:
        return options[0] if options else None
    other = 1 - view.seat
    totals = [0.0] * len(options)
    hands = world_source(decision)
    for i in range(worlds_for(decision, TRICK_WORLDS)):
        if i and decision.deadline.passed():
            break
        spot = trick_spot(view, card_bits(hands.draw(decision.rng)[other]))
        for j, action in enumerate(options):
            totals[j] += solver.outcome(spot, CARD_INT[action.card])
    best = max(range(len(options)), key=lambda j: (totals[j], -j))
    return options[best]


def call_gain(decision: Any, solver: Solver, theirs: int) -> tuple[int, int]:
    """Points of calling and of not calling, both played out exactly, if the
    other seat holds `theirs` (a card bitmask)."""
    view = decision.view
    me = view.seat
    eldest = (view.dealer + 1) % 2
    i_lead_called = decision.rules.chicago_leader == "declarer" or eldest == me
    mine = card_bits([CARD_INT[c] for c in view.hand])
    return solver.value((mine, theirs, i_lead_called, -1, 1)), solver.value((mine, theirs, eldest == me, -1, 0))


def call_estimate(decision: Any, solver: Solver) -> float:
    """The mean gain of calling over plausible worlds."""
    other = 1 - decision.view.seat
    gain = 0.0
    worlds = 0
    hands = world_source(decision)
    for i in range(worlds_for(decision, CALL_WORLDS)):
        if i and decision.deadline.passed():
            break
        called, not_called = call_gain(decision, solver, card_bits(hands.draw(decision.rng)[other]))
        gain += called - not_called
        worlds += 1
    return gain / max(1, worlds)


def chicago_call(decision: Any, solver: Solver) -> CallChicago | None:
    """Call Chicago when, over plausible worlds, calling beats not calling by
    `CALL_MARGIN_POINTS` on average, both played out exactly."""
    calls = [a for a in decision.legal if isinstance(a, CallChicago) and a.call]
    passes = [a for a in decision.legal if isinstance(a, CallChicago) and not a.call]
    if not calls or not passes:
        offered = calls or passes
        return offered[0] if offered else None
    return calls[0] if call_estimate(decision, solver) > CALL_MARGIN_POINTS else passes[0]
