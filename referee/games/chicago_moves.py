"""Swedish Chicago moves: which actions are legal now, and why any other is
not (CH-25).

Split from the state machine in `chicago` so that the rules of a move read
in one place: `ChicagoMoves` is the base of `ChicagoState` and reads the
state's hands, phase and scores. The legal actions are frozen Structs made
once and shared; the 32 exchanges of a hand are built on access.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import msgspec

from protocol.chicago import CallChicago, ChicagoRules, Exchange, TakeOpen
from protocol.common import PlayCard
from referee.errors import IllegalAction
from referee.games.cards import CARD_INT, CARD_STR, SUIT_NAMES, CardError, card_names, parse_card

HAND_SIZE = 5
TRICKS = 5

_SUBSETS = [idx for k in range(HAND_SIZE + 1) for idx in itertools.combinations(range(HAND_SIZE), k)]
# Actions are frozen Structs: the legal ones are made once and shared.
_PLAYS = tuple(PlayCard(card=name) for name in CARD_STR)
_TAKE_OPEN = (TakeOpen(take=False), TakeOpen(take=True))
_CALL_CHICAGO = (CallChicago(call=False), CallChicago(call=True))
PHASE_ACTION = {"exchange": Exchange, "take_open": TakeOpen, "chicago_call": CallChicago, "trick": PlayCard}


def _action_card(text: str) -> int:
    """parse_card for a bot's action: bad notation is an illegal action (CH-25)."""
    card = CARD_INT.get(text)
    if card is not None:
        return card
    try:
        return parse_card(text)
    except CardError as exc:
        raise IllegalAction(str(exc)) from None


# The JSON of all 32 exchanges with the placeholder bytes 2k, 2k + 1 for the
# two characters of card k of the (sorted) hand, wherever a subset names it:
# one `translate` with a per-hand table makes the real list. JSON text never
# holds those control bytes.
_EXCHANGE_JSON = (
    "["
    + ",".join(
        '{"type":"exchange","discard":[' + ",".join(f'"{chr(2 * k)}{chr(2 * k + 1)}"' for k in idx) + "]}"
        for idx in _SUBSETS
    )
    + "]"
).encode()
_PLACEHOLDERS = bytes(range(2 * HAND_SIZE))
_CARD_BYTES = tuple(name.encode() for name in CARD_STR)


class ExchangeOptions(Sequence[Exchange]):
    """The 32 legal exchanges of a hand, built on access (pass first).

    A random policy touches one of them, the referee serialises all of them;
    building 32 Structs per decision up front halved in-process throughput.
    """

    __slots__ = ("_cards",)

    def __init__(self, hand: Sequence[int]) -> None:
        self._cards = sorted(hand)

    def __len__(self) -> int:
        return len(_SUBSETS)

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(_SUBSETS)))]
        cards = self._cards
        return Exchange(discard=[CARD_STR[cards[k]] for k in _SUBSETS[i]])

    def __repr__(self) -> str:
        return f"ExchangeOptions({' '.join(card_names(self._cards))})"

    def raw_json(self) -> bytes:
        """The whole list as JSON, exactly as encoding the 32 Structs would give."""
        names = b"".join([_CARD_BYTES[c] for c in self._cards])
        return _EXCHANGE_JSON.translate(bytes.maketrans(_PLACEHOLDERS, names))


class ChicagoMoves:
    """The legal actions of a Chicago state, the check that explains an
    illegal one, and what a playout policy reads of the state to act (the
    view holds the same, as names, but building one per step costs more than
    the step); `ChicagoState` supplies the fields annotated here."""

    rules: ChicagoRules
    _over: bool
    _to_act: int
    _phase: str
    _round: int
    _declarer: int | None
    _hands: list[list[int]]
    _scores: list[int]
    _trick: list[tuple[int, int]]

    def phase(self) -> str:
        """`exchange`, `take_open`, `chicago_call` or `trick` (`game_over` at the end), as the view says."""
        return "game_over" if self._over else self._phase

    def exchange_round(self) -> int:
        """The exchange round under way (1 = the first), 0 outside the exchanges, as the view says."""
        return self._round + 1 if self._phase in ("exchange", "take_open") else 0

    def exchange_allowed(self, seat: int) -> bool:
        """May `seat` change cards, or must it stand pat at its score (CH-08)?"""
        return not self._kopstopp(seat)

    def playable_cards(self, seat: int) -> list[int]:
        """The card ints `seat` may play to the trick now (following suit if it can), lowest first."""
        return self._playable(seat)

    def trick(self) -> list[tuple[int, int]]:
        """(seat, card int) of the cards on the table in the trick now, in the order played."""
        return list(self._trick)

    def declarer(self) -> int | None:
        """The seat that called Chicago this deal, or None."""
        return self._declarer

    def legal_actions(self) -> list[msgspec.Struct]:
        """Ready-made legal actions; the first is always the cautious default."""
        if self._over:
            return []
        seat = self._to_act
        if self._phase == "exchange":
            if self._kopstopp(seat):
                return [Exchange(discard=[])]
            return ExchangeOptions(self._hands[seat])  # type: ignore[return-value]
        if self._phase == "take_open":
            return list(_TAKE_OPEN)
        if self._phase == "chicago_call":
            return list(_CALL_CHICAGO)
        hand = sorted(self._hands[seat])
        if self._trick:
            led = self._trick[0][1] & 3
            follow: list[msgspec.Struct] = [_PLAYS[c] for c in hand if c & 3 == led]
            if follow:
                return follow
        return [_PLAYS[c] for c in hand]

    def verify_action(self, action: msgspec.Struct) -> None:
        """Raise IllegalAction saying why `action` is not legal now (CH-25)."""
        self._check(action)

    def _kopstopp(self, seat: int) -> bool:
        t = self.rules.no_exchange_threshold
        return t is not None and self._scores[seat] >= t

    def _playable(self, seat: int) -> list[int]:
        hand = sorted(self._hands[seat])  # rank, then suit: a card's int is rank * 4 + suit
        if self._trick:
            led = self._trick[0][1] & 3
            follow = [c for c in hand if c & 3 == led]
            if follow:
                return follow
        return hand

    def _check(self, action: msgspec.Struct) -> list[int]:
        """The action's cards if it is legal now (a card played, the cards discarded), else IllegalAction."""
        if self._over:
            raise IllegalAction("the game is over; no more actions")
        seat = self._to_act
        phase = self._phase
        expected = PHASE_ACTION[phase]
        if type(action) is not expected:
            kind = getattr(type(action), "__struct_config__", None)
            got = kind.tag if kind is not None else type(action).__name__
            raise IllegalAction(
                f"seat {seat} must send a {expected.__struct_config__.tag!r} action now "
                f"({phase.replace('_', ' ')}), not {got!r}"
            )
        if isinstance(action, PlayCard):
            return [self._check_play(seat, action)]
        if isinstance(action, Exchange):
            return self._check_exchange(seat, action)
        if isinstance(action, CallChicago):
            self._check_call(seat, action)
        return []

    def _check_play(self, seat: int, action: PlayCard) -> int:
        """A card of the hand, following the led suit if the hand can (CH-15)."""
        card = CARD_INT.get(action.card)
        if card is None:
            card = _action_card(action.card)
        hand = self._hands[seat]
        if card not in hand:
            raise IllegalAction(f"cannot play {action.card}: not in hand {' '.join(card_names(hand))}")
        if self._trick:
            led = self._trick[0][1] & 3
            if card & 3 != led:
                same = [c for c in hand if c & 3 == led]
                if same:
                    raise IllegalAction(
                        f"must follow suit (CH-15): {SUIT_NAMES[led]} led, hand holds {' '.join(card_names(same))}"
                    )
        return card

    def _check_exchange(self, seat: int, action: Exchange) -> list[int]:
        """Different cards of the hand, and none at a score that must stand pat (CH-08)."""
        cards = [_action_card(c) for c in action.discard]
        if len(set(cards)) != len(cards):
            raise IllegalAction(f"discard lists a card twice: {' '.join(action.discard)}")
        hand = self._hands[seat]
        missing = [CARD_STR[c] for c in cards if c not in hand]
        if missing:
            raise IllegalAction(
                f"cannot discard {' '.join(missing)}: not in hand {' '.join(card_names(self._hands[seat]))}"
            )
        if cards and self._kopstopp(seat):
            raise IllegalAction(
                f"no exchange allowed (CH-08): score {self._scores[seat]} >= "
                f"threshold {self.rules.no_exchange_threshold}; you must pass"
            )
        return cards

    def _check_call(self, seat: int, action: CallChicago) -> None:
        if action.call and not self._chicago_eligible(seat):
            raise IllegalAction(
                f"Chicago not allowed (CH-14): needs score >= {self.rules.chicago_min_score}, "
                f"seat {seat} has {self._scores[seat]}"
            )

    def _chicago_eligible(self, seat: int) -> bool:
        r = self.rules
        return r.chicago_enabled and self._scores[seat] >= r.chicago_min_score
