"""Swedish Chicago on the wire: rules, actions, the per-seat view, events.

Seats are absolute (0..N-1, clockwise). Cards are strings like `"As"`.
Everything here is plain JSON; nothing is Python-specific.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.common import (
    Card,
    CardPlayed,
    DealEnded,
    DealStarted,
    GameEnded,
    HandDealt,
    Inbound,
    Outbound,
    PlayCard,
    PlayedCard,
    ScoreChanged,
    Seat,
    TrickWon,
)

NonNeg = Annotated[int, msgspec.Meta(ge=0)]


class ChicagoRules(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="chicago"):
    """Every rule option of Swedish Chicago (docs/rules.md#chicago-rule-options). Defaults = preset `gamerules`."""

    target_score: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 52
    exchanges: Annotated[int, msgspec.Meta(ge=1, le=5)] = 3
    showdown_after: list[bool] = msgspec.field(default_factory=lambda: [True, True, False])
    final_showdown: bool = True
    hand_points: dict[Literal["1P", "2P", "3K", "ST", "FL", "FH", "4K", "SF", "RF"], NonNeg] = msgspec.field(
        default_factory=lambda: {"1P": 1, "2P": 2, "3K": 3, "ST": 4, "FL": 5, "FH": 6, "4K": 7, "SF": 8, "RF": 52}
    )
    royal_instant_win: bool = True
    ace_low_straight: bool = True
    exact_tie_policy: Literal["nobody", "all_tied", "suit_order"] = "nobody"
    no_exchange_threshold: NonNeg | None = None
    last_trick_points: NonNeg = 5
    last_trick_two_bonus: NonNeg | None = None
    chicago_enabled: bool = True
    chicago_min_score: NonNeg = 15
    chicago_points: NonNeg = 15
    chicago_penalty: NonNeg = 15
    chicago_leader: Literal["declarer", "eldest"] = "declarer"
    showdown_after_chicago: bool = True
    score_floor: int | None = 0
    win_check: Literal["immediate", "end_of_deal"] = "immediate"
    reveal_scoring_hand: bool = False
    first_dealer: Literal["low_cut", "seeded_random"] = "low_cut"
    one_open: bool = False
    four_kind_reset: bool = False
    max_deals: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 500

    def __post_init__(self) -> None:
        if len(self.showdown_after) != self.exchanges:
            raise ValueError(
                f"showdown_after has {len(self.showdown_after)} entries but exchanges is "
                f"{self.exchanges}: give one true/false per exchange round"
            )


# ----------------------------------------------------------------- actions


class Exchange(Inbound, tag="exchange", frozen=True):
    """Discard these cards (0-5 of your hand; empty = pass) and draw as many.

    Two exchanges of the same cards are equal whatever their order, so
    `Exchange(discard=["Kh", "2c"]) in state.legal_actions()` holds when the
    legal list names them the other way round. The cards go onto the discard
    pile in the order given; that order matters only to a later reshuffle of
    the pile, which no seat can see."""

    discard: list[Card]

    def __eq__(self, other: object) -> bool:
        if type(other) is not Exchange:
            return NotImplemented
        return self.discard == other.discard or sorted(self.discard) == sorted(other.discard)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.discard)))


class CallChicago(Inbound, tag="chicago", frozen=True):
    """Answer the Chicago question: `call: true` declares you will take all five tricks."""

    call: bool


class TakeOpen(Inbound, tag="take_open", frozen=True):
    """`one_open` variant: take the face-up card (true) or the next card face down (false)."""

    take: bool


ChicagoAction = Exchange | CallChicago | TakeOpen | PlayCard


# -------------------------------------------------------------------- view


class ExchangeRecord(msgspec.Struct, frozen=True, kw_only=True):
    seat: Seat
    round: int
    count: int


class ShowdownRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One showdown. `round` is the exchange round it followed; 0 = final showdown."""

    round: int
    winners: list[Seat]
    category: str | None
    description: str | None
    points: int
    tied: list[Seat]


class Reveal(msgspec.Struct, frozen=True, kw_only=True):
    seat: Seat
    cards: list[Card]
    reason: str


class TrickRecord(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    leader: Seat
    cards: list[PlayedCard]
    winner: Seat


class ChicagoView(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="chicago"):
    """Everything one seat may know, and nothing more (rule CH-24)."""

    seat: Seat
    n_players: int
    phase: Literal["exchange", "take_open", "chicago_call", "trick", "game_over"]
    deal: int
    dealer: Seat
    active: list[Seat]
    tiebreak: bool
    target_score: int
    scores: list[int]
    hand: list[Card]
    exchange_round: int
    stock_size: int
    discard_size: int
    open_card: Card | None
    exchanges: list[ExchangeRecord]
    showdowns: list[ShowdownRecord]
    revealed: list[Reveal]
    chicago_declarer: Seat | None
    trick_number: int
    leader: Seat | None
    trick: list[PlayedCard]
    tricks: list[TrickRecord]
    tricks_won: list[int]


# ------------------------------------------------------------------ events


class FirstDealerCut(Outbound, tag="first_dealer_cut", frozen=True):
    """Public: the cards cut to choose the first dealer (one list per cut round)."""

    rounds: list[list[PlayedCard]]
    dealer: Seat


class Exchanged(Outbound, tag="exchanged", frozen=True):
    """Public: `seat` discarded `count` cards in exchange round `round`."""

    seat: Seat
    round: int
    count: int


class Drew(Outbound, tag="drew", frozen=True):
    """Private: the cards `seat` drew from the stock."""

    seat: Seat
    cards: list[Card]


class StockReshuffled(Outbound, tag="stock_reshuffled", frozen=True):
    """Public: the discard pile became the new stock (rule CH-09)."""

    stock_size: int


class OpenCard(Outbound, tag="open_card", frozen=True):
    """Public (`one_open`): the top stock card turned face up for `seat`."""

    seat: Seat
    card: Card


class OpenCardDecision(Outbound, tag="open_card_decision", frozen=True):
    seat: Seat
    take: bool


class HandRevealed(Outbound, tag="hand_revealed", frozen=True):
    """Public: five cards shown to everyone: `break_up` (CH-13), `scoring_hand`, `final_showdown`."""

    seat: Seat
    cards: list[Card]
    reason: str


class Showdown(Outbound, tag="showdown", frozen=True):
    """Public: the outcome of a showdown; `round` 0 is the final showdown."""

    round: int
    winners: list[Seat]
    category: str | None
    description: str | None
    points: int
    tied: list[Seat]


class ChicagoDecision(Outbound, tag="chicago_decision", frozen=True):
    seat: Seat
    call: bool


ChicagoEvent = (
    FirstDealerCut
    | DealStarted
    | HandDealt
    | Exchanged
    | Drew
    | StockReshuffled
    | OpenCard
    | OpenCardDecision
    | HandRevealed
    | Showdown
    | ChicagoDecision
    | CardPlayed
    | TrickWon
    | ScoreChanged
    | DealEnded
    | GameEnded
)
