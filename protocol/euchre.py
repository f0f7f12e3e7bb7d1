"""Ghost Hand Euchre (3 players) on the wire: rules, actions, the per-seat view, events.

Seats are absolute (0..2, clockwise). Cards are strings like `"Jh"`; suits are
`"s" "h" "d" "c"`. A bid is an int (the number of tricks, `min_bid`..5) or the
string `"moon"` (all six tricks). Everything here is plain JSON.

Actions a bot may send (docs/rules.md, GE-01..GE-14):

    {"type": "pass"}                       bidding: no bid (GE-05)
    {"type": "bid", "bid": 4}              bidding: contract 4 tricks
    {"type": "bid", "bid": "moon"}         bidding: shoot the moon (all 6)
    {"type": "swap_ghost"}                 bidding, own turn, before bidding (GE-06)
    {"type": "name_trump", "suit": "h"}    declarer names trump (GE-08)
    {"type": "play", "card": "Jh"}         trick play (shared `PlayCard`)
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
Suit = Literal["s", "h", "d", "c"]
BidValue = Annotated[int, msgspec.Meta(ge=1, le=5)] | Literal["moon"]
"""Tricks contracted: an int `min_bid`..5, or "moon" (all 6; outranks 5)."""


class EuchreRules(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="ghost_euchre"):
    """Every rule option of Ghost Hand Euchre (docs/rules.md#euchre-rule-options). Defaults = preset `gamerules`."""

    target_score: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 32
    min_bid: Annotated[int, msgspec.Meta(ge=1, le=5)] = 3
    moon_points: NonNeg = 24
    moon_fail_penalty: NonNeg = 6
    """Points a failed moon loses (a referee decision, see docs/rules.md: 6 = "the amount bid"; 24 is the variant)."""
    renege_policy: Literal["reject", "penalize"] = "reject"
    """`reject`: a renege is an illegal action. `penalize`: the card is accepted and the
    offender loses `renege_penalty` per renege when the hand is scored (GE-10)."""
    renege_penalty: NonNeg = 2
    first_dealer: Literal["seeded_random"] = "seeded_random"
    max_hands: Annotated[int, msgspec.Meta(ge=1, le=100_000)] = 1000
    """Safety valve: the game ends after this many deals (redeals count), best score first."""


# ----------------------------------------------------------------- actions


class Pass(Inbound, tag="pass", frozen=True):
    """Bidding: decline to bid (allowed with or without a ghost swap first)."""


class Bid(Inbound, tag="bid", frozen=True):
    """Bidding: contract to take at least `bid` tricks, or "moon" for all six.
    Must be at least `min_bid` and higher than every earlier bid this hand."""

    bid: BidValue


class SwapGhost(Inbound, tag="swap_ghost", frozen=True):
    """Bidding, at your turn before you bid: take the ghost hand unseen; your old
    hand becomes dead. One swap per hand in total; then you must pass or bid."""


class NameTrump(Inbound, tag="name_trump", frozen=True):
    """Declarer: name the trump suit (no no-trump). The declarer then leads."""

    suit: Suit


EuchreAction = Pass | Bid | SwapGhost | NameTrump | PlayCard


# -------------------------------------------------------------------- view


class BidRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One bidding turn; `bid` null = pass."""

    seat: Seat
    bid: BidValue | None


class EuchreTrickRecord(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    leader: Seat
    cards: list[PlayedCard]
    winner: Seat


class EuchreView(msgspec.Struct, frozen=True, kw_only=True, tag_field="game", tag="ghost_euchre"):
    """Everything one seat may know, and nothing more (GE-14): never the ghost or dead hand.

    `deal` counts every deal, all-pass redeals included. `led_suit` is the
    *effective* suit to follow (the left bower counts as trump). `tiebreak` is
    true while the top score is tied at or above the target (GE-13)."""

    seat: Seat
    n_players: int
    phase: Literal["bidding", "name_trump", "trick", "game_over"]
    deal: int
    dealer: Seat
    tiebreak: bool
    target_score: int
    scores: list[int]
    hand: list[Card]
    bids: list[BidRecord]
    high_bid: BidValue | None
    swapped_by: Seat | None
    declarer: Seat | None
    contract: BidValue | None
    trump: Suit | None
    trick_number: int
    leader: Seat | None
    led_suit: Suit | None
    trick: list[PlayedCard]
    tricks: list[EuchreTrickRecord]
    tricks_won: list[int]


# ------------------------------------------------------------------ events


class BidMade(Outbound, tag="bid_made", frozen=True):
    """Public: `seat` bid (`bid` null = passed)."""

    seat: Seat
    bid: BidValue | None


class GhostSwapped(Outbound, tag="ghost_swapped", frozen=True):
    """Public: `seat` took the ghost hand; its old hand is dead and never shown."""

    seat: Seat


class GhostHandTaken(Outbound, tag="ghost_hand_taken", frozen=True):
    """Private to `seat`: the cards it now holds after swapping."""

    seat: Seat
    cards: list[Card]


class AllPassed(Outbound, tag="all_passed", frozen=True):
    """Public: everyone passed; no score; the deal passes left (GE-07)."""

    deal: int
    next_dealer: Seat


class TrumpNamed(Outbound, tag="trump_named", frozen=True):
    """Public: the declarer's contract and trump suit; the declarer leads trick 1."""

    seat: Seat
    contract: BidValue
    suit: Suit


class Reneged(Outbound, tag="renege", frozen=True):
    """Public, `renege_policy=penalize` only: `seat` failed to follow `led_suit`
    (effective suit) with `card` in trick `trick` although able to. Announced when
    the hand is scored (when play has revealed it anyway), with the penalty."""

    seat: Seat
    trick: int
    card: Card
    led_suit: Suit
    penalty: int


class HandScored(Outbound, tag="hand_scored", frozen=True):
    """Public: the outcome of a played hand (GE-11). `points[s]` is seat s's change
    this hand, renege penalties included; `scores` are the totals after it."""

    deal: int
    declarer: Seat
    contract: BidValue
    trump: Suit
    tricks_won: list[int]
    made: bool
    points: list[int]
    scores: list[int]


EuchreEvent = (
    DealStarted
    | HandDealt
    | BidMade
    | GhostSwapped
    | GhostHandTaken
    | AllPassed
    | TrumpNamed
    | CardPlayed
    | TrickWon
    | Reneged
    | ScoreChanged
    | HandScored
    | DealEnded
    | GameEnded
)
