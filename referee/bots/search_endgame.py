"""The last tricks of a three- or four-seat Chicago deal, played exactly in
a sampled world.

At two seats `search_tricks.Solver` solves the whole trick phase. Beyond
two seats a playout plays the rest of the deal by a rule (shed low, save the
best card), which misjudges the endgame: who wins the fourth trick leads the
fifth, and a seat that can lead a suit the others are void in takes the
scoring last trick with any card of it. With three cards or fewer in each
hand the rest is small enough to search in full (at most 3!^4 lines at four
seats), so the playout's rule is replaced there by exact play.

**Several players.** Each seat plays to maximise its own points minus the
others' mean (max^n, Luckhardt and Irani 1986), the same reward the search
bots use. Only one seat takes the last trick, so the others are often
indifferent between their cards; such a tie goes against the searching seat
(the paranoid reading, Sturtevant and Korf 2000), so that a line is not
counted on that needs an opponent's goodwill.

`EndgameSolver.finish` plays a world's engine state to the end of the trick
phase by that rule, so the deal's remaining scoring (the final showdown, the
game's end) is the engine's own, as after a playout.
"""

from __future__ import annotations

import random
from typing import Any

from protocol.common import PlayCard
from referee.bots.search_table import table_hands
from referee.bots.search_tricks import TRICK_WORLDS, worlds_for
from referee.games import state_from_position
from referee.games.cards import CARD_INT, CARD_STR

ENDGAME_CARDS = 3  # exact play once the seat to act holds this many cards or fewer

_PLAY = {c: PlayCard(card=CARD_STR[c]) for c in range(52)}


def _cards(bits: int) -> list[int]:
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


class EndgameSolver:
    """Exact max^n play of the rest of a trick phase, for the seats in
    `active` (play order clockwise), searched for `me` (ties go against it).

    A node is `(hands, to_act, led, win_seat, win_card, played)`: every
    seat's hand as a card bitmask (a tuple indexed by seat), the seat to
    act, the led card's suit (-1: the seat to act leads), the card winning
    the trick so far and its seat, and the cards played to the trick. Its
    value is the points each seat gets from the rest of the trick phase."""

    def __init__(self, rules: Any, active: list[int], n_players: int, me: int, declarer: int | None) -> None:
        self.n = n_players
        self.active = sorted(active)
        self.me = me
        self.declarer = declarer
        self.last_trick = rules.last_trick_points
        self.two_bonus = rules.last_trick_two_bonus
        self.chicago = rules.chicago_points
        self.penalty = rules.chicago_penalty
        self.after_seat = {s: self.active[(i + 1) % len(self.active)] for i, s in enumerate(self.active)}
        self.memo: dict[tuple[Any, ...], tuple[tuple[int, ...], int]] = {}

    def _points(self, seat: int, pts: int) -> tuple[int, ...]:
        out = [0] * self.n
        out[seat] = pts
        return tuple(out)

    def utility(self, points: tuple[int, ...], seat: int) -> float:
        return points[seat] - (sum(points) - points[seat]) / (len(self.active) - 1)

    def after(self, node: tuple[Any, ...], card: int) -> tuple[tuple[int, ...] | None, tuple[Any, ...] | None]:
        """(the final points, None) if `card` ends the trick phase, else (None, the next node)."""
        hands, seat, led, win_seat, win_card, played = node
        hands = hands[:seat] + (hands[seat] & ~(1 << card),) + hands[seat + 1 :]
        if led < 0:
            led, win_seat, win_card = card & 3, seat, card
        elif card & 3 == led and card > win_card:
            win_seat, win_card = seat, card
        played += 1
        if played < len(self.active):
            return None, (hands, self.after_seat[seat], led, win_seat, win_card, played)
        declarer = self.declarer
        if declarer is not None and win_seat != declarer:
            return self._points(declarer, -self.penalty), None  # the Chicago failed: no last trick
        if not hands[win_seat]:  # that was the last trick
            if declarer is not None:
                return self._points(declarer, self.chicago), None
            pts = self.last_trick
            if self.two_bonus is not None and win_card >> 2 == 0:
                pts = self.two_bonus
            return self._points(win_seat, pts), None
        return None, (hands, win_seat, -1, -1, -1, 0)

    def _choices(self, node: tuple[Any, ...]) -> list[int]:
        hands, seat, led = node[0], node[1], node[2]
        cards = _cards(hands[seat])
        if led >= 0:
            follow = [c for c in cards if c & 3 == led]
            return follow or cards
        return cards

    def solve(self, node: tuple[Any, ...]) -> tuple[tuple[int, ...], int]:
        """(the points of the rest under exact play, the card the seat to act plays)."""
        got = self.memo.get(node)
        if got is not None:
            return got
        seat = node[1]
        best: tuple[tuple[int, ...], int] | None = None
        best_key = (0.0, 0.0)
        for card in self._choices(node):
            final, nxt = self.after(node, card)
            points = final if final is not None else self.solve(nxt)[0]  # type: ignore[arg-type]
            # Own gain first; between equals, the searching seat's loss.
            key = (self.utility(points, seat), -self.utility(points, self.me) if seat != self.me else 0.0)
            if best is None or key > best_key:
                best, best_key = (points, card), key
        assert best is not None
        self.memo[node] = best
        return best

    def node_of(self, state: Any) -> tuple[Any, ...]:
        """The node of an engine state in the trick phase."""
        hands = [0] * self.n
        for s in self.active:
            for c in state.hand(s):
                hands[s] |= 1 << c
        trick = state.trick()
        led = win_seat = win_card = -1
        for s, c in trick:
            if led < 0:
                led, win_seat, win_card = c & 3, s, c
            elif c & 3 == led and c > win_card:
                win_seat, win_card = s, c
        return (tuple(hands), state.current_player(), led, win_seat, win_card, len(trick))

    def finish(self, state: Any, rng: random.Random) -> list[int]:
        """Play `state`, in the trick phase, (in place) to the end of its deal
        or of the game by exact play; each seat's score change. The signature
        is `rollout.finish_deal`'s, whose place it takes (`rng` is not needed)."""
        before = state.scores()
        deal = state.deal_number
        apply = state.apply_action
        while not state.is_terminal() and state.deal_number == deal:  # the trick phase ends the deal
            apply(_PLAY[self.solve(self.node_of(state))[1]])
        return [a - b for a, b in zip(state.scores(), before)]


def endgame(view: Any) -> bool:
    """Is this a trick of a three- or four-seat Chicago deal that `EndgameSolver` plays exactly?"""
    return view.phase == "trick" and len(view.active) > 2 and len(view.hand) <= ENDGAME_CARDS


def pimc_endgame(decision: Any) -> Any:
    """Flat PIMC for a late trick at three or four seats: each card's exact
    value averaged over worlds drawn from the other seats' hand models
    (`search_table.table_hands`), or from plain samples where they fit nothing."""
    view = decision.view
    options = [a for a in decision.legal if isinstance(a, PlayCard)]
    if len(options) <= 1:
        return options[0] if options else None
    seat, rng = view.seat, decision.rng
    solver = EndgameSolver(decision.rules, view.active, view.n_players, seat, view.chicago_declarer)
    table = table_hands(view, decision.events, decision.my_hands, decision.rules, rng, decision.deadline)
    mine = 0
    for c in view.hand:
        mine |= 1 << CARD_INT[c]
    led = win_seat = win_card = -1
    for played in view.trick:
        c = CARD_INT[played.card]
        if led < 0:
            led, win_seat, win_card = c & 3, played.seat, c
        elif c & 3 == led and c > win_card:
            win_seat, win_card = played.seat, c
    totals = [0.0] * len(options)
    for i in range(worlds_for(decision, TRICK_WORLDS)):
        if i and decision.deadline.passed():
            break
        hands = table.draw(rng) if table is not None else None
        if hands is None:
            state: Any = state_from_position(decision.knowledge.sample(rng), decision.rules)
            hands = {s: state.hand(s) for s in view.active if s != seat}
        bits = [0] * view.n_players
        bits[seat] = mine
        for s, cards in hands.items():
            for c in cards:
                bits[s] |= 1 << c
        node = (tuple(bits), seat, led, win_seat, win_card, len(view.trick))
        for j, action in enumerate(options):
            final, nxt = solver.after(node, CARD_INT[action.card])
            points = final if final is not None else solver.solve(nxt)[0]  # type: ignore[arg-type]
            totals[j] += solver.utility(points, seat)
    best = max(range(len(options)), key=lambda j: (totals[j], -j))
    return options[best]
