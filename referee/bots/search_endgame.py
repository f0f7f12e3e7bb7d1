"""The last tricks of a three- or four-seat Chicago deal, played exactly in
a sampled world.

At two seats `search_tricks.Solver` solves the whole trick phase. Beyond
two seats a playout plays the rest of the deal by a rule (shed low, save the
best card), which misjudges the endgame: who wins the fourth trick leads the
fifth, and a seat that can lead a suit the others are void in takes the
scoring last trick with any card of it. With three cards or fewer in each
hand the rest is small enough to search in full (at most 3!^4 lines at four
seats), so pimc plays those tricks exactly in each world (`pimc_endgame`),
as it plays the whole trick phase at two seats.

**Several players.** Each seat plays to maximise its own points minus the
others' mean (max^n, Luckhardt and Irani 1986), the same reward the search
bots use. Only one seat takes the last trick, so the others are often
indifferent between their cards; such a tie goes against the searching seat
(the paranoid reading, Sturtevant and Korf 2000), so that a line is not
counted on that needs an opponent's goodwill.

The worlds are drawn from the other seats' history models
(`search_table.table_hands`), as the Chicago call's are; where those fit
nothing, from plain samples of what this seat knows.
"""

from __future__ import annotations

from typing import Any

from protocol.common import PlayCard
from referee.bots.search_model import bits_cards
from referee.bots.search_table import table_hands
from referee.bots.search_tricks import TRICK_WORLDS, worlds_for
from referee.games import state_from_position
from referee.games.cards import CARD_INT

ENDGAME_CARDS = 3  # exact play once the seat to act holds this many cards or fewer


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

    def node(self, hands: dict[int, list[int]], to_act: int, trick: list[tuple[int, int]]) -> tuple[Any, ...]:
        """The node of every active seat's unplayed cards, the seat to act and
        the cards on the table as (seat, card) in the order played: those
        cards handed back and played again through `after`."""
        bits = [0] * self.n
        for seat, cards in hands.items():
            for c in cards:
                bits[seat] |= 1 << c
        for seat, c in trick:
            bits[seat] |= 1 << c
        node: tuple[Any, ...] = (tuple(bits), trick[0][0] if trick else to_act, -1, -1, -1, 0)
        for _, c in trick:
            node = self.after(node, c)[1]  # type: ignore[assignment]  # an unfinished trick ends nothing
        return node

    def _choices(self, node: tuple[Any, ...]) -> list[int]:
        hands, seat, led = node[0], node[1], node[2]
        cards = bits_cards(hands[seat])
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
    mine = [CARD_INT[c] for c in view.hand]
    trick = [(played.seat, CARD_INT[played.card]) for played in view.trick]
    totals = [0.0] * len(options)
    for i in range(worlds_for(decision, TRICK_WORLDS)):
        if i and decision.deadline.passed():
            break
        hands = table.draw(rng) if table is not None else None
        if hands is None:
            state: Any = state_from_position(decision.knowledge.sample(rng), decision.rules)
            hands = {s: state.hand(s) for s in view.active if s != seat}
        node = solver.node({**hands, seat: mine}, seat, trick)
        for j, action in enumerate(options):
            final, nxt = solver.after(node, CARD_INT[action.card])
            points = final if final is not None else solver.solve(nxt)[0]  # type: ignore[arg-type]
            totals[j] += solver.utility(points, seat)
    best = max(range(len(options)), key=lambda j: (totals[j], -j))
    return options[best]
