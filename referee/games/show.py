"""How people see a card game: what every game shows the same way, and the
shape of each game's own hooks.

A game plugs into the runtime through its `GameDef` (base.py). What differs
between games for the people at a table or watching a replay lives beside
the game's engine (`chicago_show.py`, `euchre_show.py`), in the shapes
declared here:

- `GameWords`: its events and actions in words, typed choices read back
  into actions, the rules of each phase (the terminal and browser seats);
- `GameText`: how the terminal replay draws its own events, its reasons in
  words, and the details of a position a game started from;
- `GamePage`: what the HTML pages need to draw its table.

Everything here is pure: the hooks write `Part`s (plain text, styled text,
cards, card backs, a suit), and the replay turns them into terminal text.
Events every trick game shares (deals, hands, cards played, tricks, scores)
are put into words here once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

SUIT_NAMES = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}
RANKS = "23456789TJQKA"
_CARD_WORD = re.compile(r"^(10|[2-9TJQKA])([SHDC])$", re.IGNORECASE)


class ChoiceError(ValueError):
    """Typed text that names no action; the message says why."""


def card_key(card: str) -> tuple[int, int]:
    """Sort order for a hand: by suit (s h d c), then rank high to low."""
    return ("shdc".index(card[1]), -RANKS.index(card[0]))


def sort_cards(cards: Sequence[str]) -> list[str]:
    return sorted(cards, key=card_key)


def card_from_word(token: str) -> str | None:
    """A card as a person types it (`10h`, `th`, `QS`), in the protocol's notation (`Th`, `Qs`), or None."""
    m = _CARD_WORD.match(token)
    if m is None:
        return None
    rank = "T" if m.group(1) == "10" else m.group(1).upper()
    return rank + m.group(2).lower()


# ------------------------------------------------------------------ parts a replay draws


@dataclass(frozen=True)
class Cards:
    """Cards drawn as cards (`A♠ 10♥`), in the protocol's notation."""

    cards: tuple[str, ...]
    sort: bool = False


@dataclass(frozen=True)
class Backs:
    """`count` cards face down."""

    count: int


@dataclass(frozen=True)
class SuitMark:
    """A suit drawn as its symbol."""

    suit: str


Part = str | tuple[str, str] | Cards | Backs | SuitMark
"""Plain text, `(text, style)` (styles as rich names them: "bold", "dim", "red"), or one of the above."""


def cards(*cards: str, sort: bool = False) -> Cards:
    return Cards(tuple(cards), sort)


class ReplayPen(Protocol):
    """What a game's replay hooks may use: the terminal replay implements it."""

    rules: Any
    memo: dict[str, Any]
    """Scratch for a game's hooks, emptied when a deal starts."""

    def emit(self, *parts: Part, style: str = "") -> None:
        """One line of the replay."""

    def name(self, seat: int) -> str:
        """A seat's name (shown, never obeyed)."""

    def pad(self, seat: int) -> str:
        """A seat's name padded to the widest, for columns."""

    def sees_hand(self, seat: int) -> bool:
        """May the viewer see this seat's cards?"""

    def hand(self, seat: int) -> list[str] | None:
        """The seat's hand after this step (None when the game has none to show now)."""

    def step(self) -> tuple[int | None, Any, list[Any]]:
        """This step's acting seat, its action and every event it caused."""


# ------------------------------------------------------------------ a game's hooks


@dataclass(frozen=True)
class GameWords:
    """How a person at the table reads and types the game."""

    event_text: Callable[[Any, Callable[[int], str], int], str | None]
    """(event, who, me) -> the event in words for seat `me`, or None if not worth a line;
    `who(seat)` names a seat ("you" for `me`). Events `common_event_text` knows may be left to it."""
    action_text: Callable[[Any], str]
    """An action in words: `discard Kh Kd`, `bid 4`."""
    parse_words: Callable[[list[str], Sequence[Any]], Any]
    """Typed words (not a number, not only cards) -> an action, or None if they name none of this game's."""
    parse_cards: Callable[[list[str], Sequence[Any]], Any]
    """Typed cards (already in the protocol's notation) -> an action, or None if no cards are chosen
    now; ChoiceError says why cards that are chosen now name no action."""
    phase_help: Callable[[Any], list[str]]
    """The rules of the phase a view is in, in a few lines (`?` at the table)."""
    parse_number: Callable[[int, Sequence[Any]], Any] = lambda _n, _legal: None
    """A typed number that is no choice number but means an action (a bid of 4), or None."""
    shortlist: Callable[[Any, Sequence[Any]], tuple[list[int], str] | None] = lambda _view, _legal: None
    """Too many choices for a screen: (the indexes to show, how to type the others), or None to show all."""
    table_lines: Callable[[Any, Callable[[int], str]], list[str]] = lambda _view, _who: []
    """(view, who) -> what else a player must see of the table, besides the scores, the trick and the
    hand (Ghost Hand Euchre: trump, contract and declarer)."""


@dataclass(frozen=True)
class GameText:
    """How the terminal replay draws the game's own events."""

    events: Mapping[str, Callable[[ReplayPen, Any], None]]
    """By event type: draws the event (events not named here are drawn by the shared renderer)."""
    position: Callable[[ReplayPen, Any], None]
    """The details of a position a game started from, from its first view."""
    reasons: Mapping[str, str] = field(default_factory=dict)
    """The game's score and end reasons in words (`last_trick` -> "last trick")."""
    hand_words: Callable[[Any, ReplayPen], str] | None = None
    """The hand of an event in words, where the game names hands (Chicago's showdowns)."""


@dataclass(frozen=True)
class GamePage:
    """What the HTML replay and the live tables need to draw the game's table."""

    start_fields: Callable[[Any, Any], dict[str, Any]]
    """(first view, state) of a game started from a position -> the page's table at that start."""
    hints: Mapping[str, Any]
    """Words and defaults of the page: `first_phase`, `declarer_badge` (None: "declarer" and the bid)."""


@dataclass(frozen=True)
class CheckScenario:
    """One game `check` plays: seats, preset and options, chosen so that every decision kind comes up."""

    seats: int
    preset: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ what every trick game shares


def common_event_text(ev: Any, who: Callable[[int], str], me: int) -> str | None:
    """The events every trick game has, in words; None for others."""
    kind = type(ev).__struct_config__.tag
    if kind == "deal_started":
        extra = " (tie-break)" if ev.tiebreak else ""
        return f"deal {ev.deal} begins{extra}; {who(ev.dealer)} dealt"
    if kind == "hand_dealt":
        return f"{who(ev.seat)} got " + " ".join(sort_cards(ev.cards))
    if kind == "card_played":
        return f"{who(ev.seat)} played {ev.card}"
    if kind == "trick_won":
        return f"{who(ev.seat)} won trick {ev.trick} with {ev.card}"
    if kind == "score":
        sign = "+" if ev.points >= 0 else ""
        return f"{who(ev.seat)} {sign}{ev.points} ({ev.reason.replace('_', ' ')}), total {ev.total}"
    if kind == "deal_ended":
        return f"deal {ev.deal} over; scores " + " ".join(str(s) for s in ev.scores)
    if kind == "game_ended":
        return "the game is over"
    return None


def seat_name(seat: int, names: Sequence[str], me: int) -> str:
    return "you" if seat == me else f"{names[seat]} (seat {seat})"


def verb(seat: int, me: int, third: str, second: str) -> str:
    """`deals` of another seat, `deal` of your own."""
    return second if seat == me else third
