"""Ghost Hand Euchre moves: which actions are legal now, and why any other
is not; the 24-card pack and its bowers (GE-03, GE-05, GE-06, GE-08, GE-09).

Split from the state machine in `ghost_euchre` as `chicago_moves` is from
`chicago`: `EuchreMoves` is the base of `GhostEuchreState` and reads the
state's hands, bids, trump and trick. The rules of the cards (effective
suit, trick power, who takes a trick) live here for both; `ghost_euchre`
re-exports them for the positions and bots that import them from there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from protocol.common import PlayCard
from protocol.euchre import Bid, EuchreRules, NameTrump, Pass, Suit, SwapGhost
from referee.errors import IllegalAction
from referee.games.cards import (
    CARD_INT,
    CARD_STR,
    SUIT_NAMES,
    SUITS,
    CardError,
    card_names,
    parse_card,
    sort_hand,
)

N_PLAYERS = 3
HAND_SIZE = 6
TRICKS = 6
MOON = 6  # a moon contracts all six tricks and outranks every numeric bid
JACK = 9  # rank index of the jack (2 = 0 ... A = 12)
NINE = 7
EUCHRE_DECK: tuple[int, ...] = tuple(range(NINE * 4, 52))  # 9c..As: 24 cards

# The kinds of action each phase takes.
_PHASE_KINDS: dict[str, tuple[type[msgspec.Struct], ...]] = {
    "bidding": (Pass, Bid, SwapGhost),
    "name_trump": (NameTrump,),
    "trick": (PlayCard,),
}
# Actions are frozen Structs: the plays are made once and shared.
PLAYS = tuple(PlayCard(card=name) for name in CARD_STR)

Contract = int | Literal["moon"]  # wire form: 1..5 or "moon" (BidValue without its range)


WIRE_SUITS: tuple[Suit, ...] = ("s", "h", "d", "c")  # suit numbers 0-3 as the wire names them


def wire_bid(value: int) -> Contract:
    """A contract as the wire says it: 1..5, or "moon"."""
    return "moon" if value == MOON else value


def same_colour(suit: int) -> int:
    """The other suit of the same colour (s<->c, h<->d): the left bower's printed suit."""
    return 3 - suit


def _effective_suit(card: int, trump: int) -> int:
    if card >> 2 == JACK and card & 3 == same_colour(trump):
        return trump
    return card & 3


def _trick_power(card: int, trump: int, led: int) -> int:
    if card >> 2 == JACK:
        if card & 3 == trump:
            return 100
        if card & 3 == same_colour(trump):
            return 99
    suit = card & 3
    if suit == trump:
        return 50 + (card >> 2)
    return card >> 2 if suit == led else -1


# The rules of the cards as tables, built once from the rules above and read
# on every decision: EFFECTIVE[trump][card]; POWER[trump][led][card] for each
# led suit and for -2 (the card leads); PLAY_ORDER the same shape, a hand's
# weakest-first order (power, then suit) as one int per card.
_LEDS = (0, 1, 2, 3, -2)
EFFECTIVE: tuple[tuple[int, ...], ...] = tuple(tuple(_effective_suit(c, t) for c in range(52)) for t in range(4))
POWER: tuple[dict[int, tuple[int, ...]], ...] = tuple(
    {led: tuple(_trick_power(c, t, led) for c in range(52)) for led in _LEDS} for t in range(4)
)
PLAY_ORDER: tuple[dict[int, tuple[int, ...]], ...] = tuple(
    {led: tuple((_trick_power(c, t, led) + 1) * 4 + (c & 3) for c in range(52)) for led in _LEDS} for t in range(4)
)


def effective_suit(card: int, trump: int) -> int:
    """GE-03: the left bower (jack of the same colour) belongs to trump for all purposes."""
    return EFFECTIVE[trump][card]


def trick_power(card: int, trump: int, led: int) -> int:
    """Higher wins the trick: right bower > left bower > other trumps > led suit > rest (-1)."""
    table = POWER[trump].get(led)
    return table[card] if table is not None else _trick_power(card, trump, led)


def trick_winner(cards: Sequence[tuple[int, int]], trump: int) -> tuple[int, int]:
    """(seat, card) taking a trick of (seat, card) plays, led by the first (GE-09)."""
    power = POWER[trump][EFFECTIVE[trump][cards[0][1]]]
    best = cards[0]
    top = power[best[1]]
    for play in cards:
        if power[play[1]] > top:
            best, top = play, power[play[1]]
    return best


class EuchreMoves:
    """The legal actions of a Ghost Hand Euchre state, the check that
    explains an illegal one, and what a playout policy reads of the state to
    act (the view holds the same, as names, but building one per step costs
    more than the step); `GhostEuchreState` supplies the fields annotated here."""

    rules: EuchreRules
    _over: bool
    _to_act: int
    _phase: str
    _hands: list[list[int]]
    _swapped_by: int | None
    _high: int
    _high_seat: int | None
    _trump: int | None
    _trick: list[tuple[int, int]]

    def legal_actions(self) -> list[msgspec.Struct]:
        """Ready-made legal actions; the first is always the cautious default.

        Bidding: pass, the bids that beat the high bid, then the swap if still
        available. Trump: suits by how many trumps they would give the hand.
        Play: cards that follow (lowest first); under `renege_policy=penalize`
        the reneging cards follow them, since they are accepted (at a cost).
        """
        if self._over:
            return []
        seat = self._to_act
        if self._phase == "bidding":
            acts: list[msgspec.Struct] = [Pass()]
            acts += [Bid(bid=wire_bid(b)) for b in self._open_bids()]
            if self._swapped_by is None:
                acts.append(SwapGhost())
            return acts
        if self._phase == "name_trump":
            hand = self._hands[seat]
            order = sorted(range(4), key=lambda t: -sum(effective_suit(c, t) == t for c in hand))
            return [NameTrump(suit=WIRE_SUITS[t]) for t in order]
        follow, rest = self._playable(seat)
        if self.rules.renege_policy == "penalize":
            follow = follow + rest
        return [PLAYS[c] for c in follow]

    def verify_action(self, action: msgspec.Struct) -> None:
        """Raise IllegalAction saying why `action` is not legal now."""
        self._check(action)

    # ------------------------------------------------------------ for playout policies

    def phase(self) -> str:
        """`bidding`, `name_trump` or `trick` (`game_over` at the end), as the view says."""
        return "game_over" if self._over else self._phase

    def trump(self) -> int | None:
        """The trump suit (0-3: s h d c), None before it is named."""
        return self._trump

    def open_bids(self) -> list[int]:
        """The contracts a bid may name now, lowest first (6 is the moon)."""
        return self._open_bids()

    def playable_cards(self, seat: int) -> list[int]:
        """The card ints `seat` may play to the trick now: those that follow
        the effective led suit, or every card when leading or void; weakest first."""
        return self._playable(seat)[0]

    def trick(self) -> list[tuple[int, int]]:
        """(seat, card int) of the cards on the table in the trick now, in the order played."""
        return list(self._trick)

    # ------------------------------------------------------------ checks

    def _open_bids(self) -> list[int]:
        """GE-05: from `min_bid` to 5, then moon, each above the current high bid."""
        low = max(self.rules.min_bid, self._high + 1)
        return list(range(low, MOON + 1))

    def _playable(self, seat: int) -> tuple[list[int], list[int]]:
        """(cards that follow the effective led suit, the others), weakest first.

        Leading, or void in the led suit: every card is in the first list."""
        trump = self._trump
        assert trump is not None
        suit_of = EFFECTIVE[trump]
        led = suit_of[self._trick[0][1]] if self._trick else -2  # -2: leading
        hand = sorted(self._hands[seat], key=PLAY_ORDER[trump][led].__getitem__)
        follow = [c for c in hand if suit_of[c] == led]
        if not follow:
            return hand, []
        return follow, [c for c in hand if c not in follow]

    def _check(self, action: msgspec.Struct) -> int:
        """Validate `action` for the seat to act; return its decoded value."""
        if self._over:
            raise IllegalAction("the game is over; no more actions")
        seat = self._to_act
        phase = self._phase
        kinds = _PHASE_KINDS
        if phase == "trick" and type(action) is PlayCard:
            return self._check_play(seat, action)
        if not isinstance(action, kinds[phase]):
            kind = getattr(type(action), "__struct_config__", None)
            got = kind.tag if kind is not None else type(action).__name__
            want = " or ".join(repr(k.__struct_config__.tag) for k in kinds[phase])
            raise IllegalAction(f"seat {seat} must send a {want} action now ({phase.replace('_', ' ')}), not {got!r}")
        if isinstance(action, SwapGhost):
            if self._swapped_by == seat:
                raise IllegalAction(f"seat {seat} already swapped this hand and must now pass or bid (GE-06)")
            if self._swapped_by is not None:
                raise IllegalAction(f"only one ghost swap per hand (GE-06): seat {self._swapped_by} already swapped")
            return -1
        if isinstance(action, Pass):
            return 0
        if isinstance(action, Bid):
            return self._check_bid(action.bid)
        if isinstance(action, NameTrump):
            if not isinstance(action.suit, str) or action.suit not in SUITS or len(action.suit) != 1:
                raise IllegalAction(f"bad trump suit {action.suit!r}: name one of s h d c (GE-08)")
            return SUITS.index(action.suit)
        assert isinstance(action, PlayCard)  # the trick phase's one kind
        return self._check_play(seat, action)

    def _check_bid(self, raw: object) -> int:
        r = self.rules
        if raw == "moon":
            value = MOON
        elif isinstance(raw, int) and not isinstance(raw, bool) and 1 <= raw <= 5:
            value = raw
        else:
            raise IllegalAction(f'bad bid {raw!r}: bid {r.min_bid}..5 tricks or "moon", or pass (GE-05)')
        if value < r.min_bid:
            raise IllegalAction(f"bid {raw} is below the minimum bid {r.min_bid} (GE-05)")
        if value <= self._high:
            raise IllegalAction(
                f"bid {raw} must exceed the high bid {wire_bid(self._high)} of seat {self._high_seat} (GE-05)"
            )
        return value

    def _check_play(self, seat: int, action: PlayCard) -> int:
        card = CARD_INT.get(action.card)
        if card is None:
            try:
                card = parse_card(action.card)
            except CardError as exc:
                raise IllegalAction(str(exc)) from None
        hand = self._hands[seat]
        if card not in hand:
            raise IllegalAction(f"cannot play {CARD_STR[card]}: not in hand {' '.join(card_names(sort_hand(hand)))}")
        if self._trick and self.rules.renege_policy == "reject":
            trump = self._trump
            assert trump is not None
            suit_of = EFFECTIVE[trump]
            led = suit_of[self._trick[0][1]]
            if suit_of[card] != led and any(suit_of[c] == led for c in hand):
                follow = [c for c in hand if suit_of[c] == led]
                raise IllegalAction(
                    f"must follow suit (GE-09): {SUIT_NAMES[led]} led with {SUIT_NAMES[trump]} trump"
                    f"{self._bower_note(card, led, trump)}, hand holds {' '.join(card_names(follow))}"
                )
        return card

    @staticmethod
    def _bower_note(card: int, led: int, trump: int) -> str:
        """Explain the left bower where it is the likely cause of the renege (GE-03)."""
        left = JACK * 4 + same_colour(trump)
        trump_name = SUIT_NAMES[trump][:-1]
        if card == left:
            return f" ({CARD_STR[left]} is the left bower, a {trump_name})"
        if led in (trump, same_colour(trump)):
            return f" ({CARD_STR[left]} counts as a {trump_name})"
        return ""
