"""Positions: a game in the middle, described by value, and rebuilt as a state.

A position holds what is needed to go on exactly as the game would have: the
scores, the deal, every hidden card where it lies (hands, stock order, the
discards, the ghost), the records a view shows, and the seed with the draws
already taken from the engine's random stream, so later shuffles come out the
same. Everything that follows from the rest (whose turn it is, trick winners,
the exchange round, the high bid) is worked out and checked, not stored twice.

`referee.games.restore` describes live states as positions and builds
states from them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from protocol.chicago import Reveal, ShowdownRecord
from referee.errors import ConfigError
from referee.games.base import shuffle
from referee.games.cards import CARD_STR, CardError, parse_card

Cards = tuple[str, ...]
BidValue = int | str | None  # 1..5, "moon", or None for a pass


class PositionError(ConfigError):
    """A position that cannot occur; the message names the field and why."""


def norm_cards(cards: Any, what: str) -> Cards:
    """Card strings in canonical notation (`As`), order kept; a bad card names its field."""
    if isinstance(cards, str):
        cards = cards.split()
    out = []
    for c in cards:
        try:
            out.append(
                CARD_STR[c]
                if isinstance(c, int) and not isinstance(c, bool) and 0 <= c < 52
                else CARD_STR[parse_card(c)]
            )
        except (CardError, TypeError) as exc:
            raise PositionError(f"{what}: {exc}") from None
    return tuple(out)


def _per_seat(value: Any, what: str) -> tuple[Cards, ...]:
    return tuple(norm_cards(h, f"{what}[{i}]") for i, h in enumerate(value))


@dataclass(frozen=True, kw_only=True)
class ChicagoPosition:
    """Swedish Chicago in the middle of a deal (2-4 seats).

    `hands` are per seat in the engine's order (it shows in reveals); seats
    out of a tie-break hold none. `stock` is top card first, `discards`
    oldest first. `exchanged` lists the discard counts of this deal's
    exchanges in turn order (eldest first, round by round). `stream` lists
    the lengths this deal's random stream has shuffled (52 for the deck, then
    each reshuffle of the discards); None means `(52,)`. `scored_hands` is per
    seat the hand that last scored at a showdown this deal (empty: none);
    `start_hands` the hands when trick play began, None meaning each hand
    followed by the cards its seat has played."""

    n_players: int
    dealer: int
    hands: tuple[Cards, ...]
    stock: Cards
    scores: tuple[int, ...] = ()
    deal: int = 1
    seed: int = 0
    stream: tuple[int, ...] | None = None
    tied: tuple[int, ...] | None = None
    discards: Cards = ()
    phase: str = "exchange"
    to_act: int | None = None
    exchanged: tuple[int, ...] = ()
    open_card: str | None = None
    showdowns: tuple[ShowdownRecord, ...] = ()
    revealed: tuple[Reveal, ...] = ()
    scored_hands: tuple[Cards, ...] = ()
    declarer: int | None = None
    tricks: tuple[Cards, ...] = ()
    trick: Cards = ()
    start_hands: tuple[Cards, ...] | None = None

    game = "chicago"

    def __post_init__(self) -> None:
        if not isinstance(self.n_players, int) or not 2 <= self.n_players <= 4:
            raise PositionError(f"n_players: Swedish Chicago is for 2-4 players, not {self.n_players}")
        set_ = object.__setattr__
        set_(self, "hands", _per_seat(self.hands, "hands"))
        set_(self, "stock", norm_cards(self.stock, "stock"))
        set_(self, "discards", norm_cards(self.discards, "discards"))
        set_(self, "scores", tuple(self.scores) or (0,) * self.n_players)
        set_(self, "exchanged", tuple(self.exchanged))
        set_(self, "showdowns", tuple(self.showdowns))
        set_(self, "revealed", tuple(self.revealed))
        set_(self, "tricks", _per_seat(self.tricks, "tricks"))
        set_(self, "trick", norm_cards(self.trick, "trick"))
        scored = _per_seat(self.scored_hands, "scored_hands")
        set_(self, "scored_hands", scored if any(scored) else ())
        if self.open_card is not None:
            set_(self, "open_card", norm_cards([self.open_card], "open_card")[0])
        if self.stream is not None:
            set_(self, "stream", tuple(self.stream))
        if self.tied is not None:
            set_(self, "tied", tuple(self.tied))
        if self.start_hands is not None:
            set_(self, "start_hands", _per_seat(self.start_hands, "start_hands"))


@dataclass(frozen=True, kw_only=True)
class EuchrePosition:
    """Ghost Hand Euchre in the middle of a hand (3 seats).

    `ghost` holds the ghost hand until someone swaps (`swapped_by`), then
    `dead` holds the hand that seat gave up. `bids` are this hand's bids in
    turn order (eldest first): 1..5, "moon", or None for a pass. `trump` is
    a suit letter once named. `stream` lists the draws taken from the seed's
    random stream: 3 for the first dealer drawn among three seats, 24 for
    each shuffled deck; None means a drawn dealer and one shuffle per deal."""

    dealer: int
    hands: tuple[Cards, ...]
    scores: tuple[int, ...] = (0, 0, 0)
    deal: int = 1
    seed: int = 0
    stream: tuple[int, ...] | None = None
    tiebreak: bool = False
    ghost: Cards = ()
    dead: Cards = ()
    swapped_by: int | None = None
    phase: str = "bidding"
    to_act: int | None = None
    bids: tuple[BidValue, ...] = ()
    trump: str | None = None
    tricks: tuple[Cards, ...] = ()
    trick: Cards = ()

    game = "ghost_euchre"
    n_players = 3

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "hands", _per_seat(self.hands, "hands"))
        set_(self, "ghost", norm_cards(self.ghost, "ghost"))
        set_(self, "dead", norm_cards(self.dead, "dead"))
        set_(self, "scores", tuple(self.scores))
        set_(self, "bids", tuple(self.bids))
        set_(self, "tricks", _per_seat(self.tricks, "tricks"))
        set_(self, "trick", norm_cards(self.trick, "trick"))
        if self.stream is not None:
            set_(self, "stream", tuple(self.stream))


Position = ChicagoPosition | EuchrePosition


def chicago_stream(seed: int, deal: int, stream: Sequence[int]) -> random.Random:
    """The deal's random stream after shuffling lists of these lengths, as the engine does."""
    rng = random.Random(f"{seed}/deal/{deal}")
    for n in stream:
        shuffle(list(range(n)), rng)
    return rng


def euchre_stream(seed: int, stream: Sequence[int]) -> random.Random:
    """The game's random stream after the first-dealer draw (3) and deck shuffles (24)."""
    rng = random.Random(seed)
    for n in stream:
        if n == 3:
            rng.randrange(3)
        elif n == 24:
            shuffle(list(range(24)), rng)
        else:
            raise PositionError(f"stream: {n} is not a draw of Ghost Hand Euchre (3 = first dealer, 24 = a deck)")
    return rng


def default_euchre_stream(deal: int) -> tuple[int, ...]:
    return (3,) + (24,) * deal


__all__ = ["ChicagoPosition", "EuchrePosition", "Position", "PositionError"]
