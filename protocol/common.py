"""Base classes and the wire types shared by every game.

Every wire type is a frozen msgspec Struct. Messages, actions and events are
tagged with `type`; per-game views and rules are tagged with `game`. Types a
bot sends (actions, replies) forbid unknown fields so a typo is reported, not
silently ignored.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Annotated

import msgspec

Seat = Annotated[int, msgspec.Meta(ge=0, le=3, description="Seat number, 0-based, clockwise")]
Card = Annotated[
    str,
    msgspec.Meta(
        pattern="^[2-9TJQKA][shdc]$",
        description="Rank 23456789TJQKA then suit s h d c, e.g. 'As', 'Td', '9h'",
    ),
]


class Outbound(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Something the referee sends (message or event)."""


class Inbound(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", forbid_unknown_fields=True):
    """Something a bot sends (reply or action)."""


class PlayCard(Inbound, tag="play", frozen=True):
    """Play a card to the current trick (every trick-taking game)."""

    card: Card


class PlayedCard(msgspec.Struct, frozen=True, kw_only=True):
    seat: Seat
    card: Card


class CardPlayed(Outbound, tag="card_played", frozen=True):
    """Public: a seat played a card to trick number `trick` (1-based)."""

    seat: Seat
    card: Card
    trick: int


class TrickWon(Outbound, tag="trick_won", frozen=True):
    """Public: who took trick number `trick`, and with which card."""

    trick: int
    seat: Seat
    card: Card


class ScoreChanged(Outbound, tag="score", frozen=True):
    """Public: a seat's score changed by `points` (after any floor) to `total`."""

    seat: Seat
    points: int
    total: int
    reason: str


class GameEnded(Outbound, tag="game_ended", frozen=True):
    """Public: the game is over. `placements[s]` is seat s's place, 1 = first."""

    winner: Seat | None
    scores: list[int]
    placements: list[int]
    reason: str


class DealStarted(Outbound, tag="deal_started", frozen=True):
    """Public: a new deal (hand) begins. `active` seats play it (a tie-break may exclude some)."""

    deal: int
    dealer: Seat
    active: list[Seat]
    tiebreak: bool = False
    stock_size: int | None = None


class HandDealt(Outbound, tag="hand_dealt", frozen=True):
    """Private: the cards dealt to `seat`."""

    seat: Seat
    cards: list[Card]


class DealEnded(Outbound, tag="deal_ended", frozen=True):
    """Public: the deal is over; scores after it."""

    deal: int
    scores: list[int]


# ------------------------------------------------------- untrusted JSON

MAX_NESTING = 32
"""The deepest nesting of arrays and objects a line may have. Real messages
nest a few levels; a decoder fed thousands of levels runs out of stack."""

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def nests_deeper_than(data: bytes | str, limit: int = MAX_NESTING) -> bool:
    """True if the JSON text nests arrays/objects deeper than `limit` (strings
    do not count). Cheap for ordinary lines: only text with more than `limit`
    opening brackets is scanned, and the scan does not recurse."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit
