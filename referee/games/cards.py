"""Card notation (`As Td 9h 2c`) and the engine's integer encoding.

On the wire a card is a two-character string: rank `23456789TJQKA` then suit
`shdc`. Inside the engines a card is an int `rank * 4 + suit` (rank 0 = deuce,
12 = ace; suit 0..3 = s h d c), which makes rank and suit a shift and a mask.
"""

from __future__ import annotations

from collections.abc import Iterable

from referee.errors import ConfigError

RANKS = "23456789TJQKA"
SUITS = "shdc"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
SUIT_SYMBOLS = ("♠", "♥", "♦", "♣")
RANK_NAMES = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)
RANK_PLURALS = (
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "sevens",
    "eights",
    "nines",
    "tens",
    "jacks",
    "queens",
    "kings",
    "aces",
)

FULL_DECK: tuple[int, ...] = tuple(range(52))
CARD_STR: tuple[str, ...] = tuple(RANKS[c >> 2] + SUITS[c & 3] for c in FULL_DECK)
CARD_INT: dict[str, int] = {s: i for i, s in enumerate(CARD_STR)}


class CardError(ConfigError, ValueError):
    """A card string is not valid notation."""


def rank(card: int) -> int:
    return card >> 2


def suit(card: int) -> int:
    return card & 3


def parse_card(text: str) -> int:
    """`"As"` -> int. Accepts lower-case ranks and a `10` rank; errors say why."""
    card = CARD_INT.get(text)
    if card is not None:
        return card
    t = text.strip()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) == 2 and t[0].upper() in RANKS and t[1].lower() in SUITS:
        return CARD_INT[t[0].upper() + t[1].lower()]
    raise CardError(f"bad card {text!r}: write rank {RANKS} then suit {SUITS}, e.g. 'As', 'Td', '9h'")


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """`"As Ks"` or `["As", "Ks"]` -> ints; rejects duplicates."""
    items = text.split() if isinstance(text, str) else list(text)
    cards = [parse_card(t) for t in items]
    if len(set(cards)) != len(cards):
        dup = sorted({CARD_STR[c] for c in cards if cards.count(c) > 1})
        shown = " ".join(items) if len(items) <= 10 else f"a list of {len(items)} cards"
        raise CardError(f"duplicate card(s) {' '.join(dup)} in {shown}")
    return cards


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(CARD_STR[c] for c in cards)


def card_strs(cards: Iterable[int]) -> tuple[str, ...]:
    return tuple(CARD_STR[c] for c in cards)


def card_names(cards: Iterable[int]) -> list[str]:
    """The names as a list, the shape of the wire's card fields."""
    return [CARD_STR[c] for c in cards]


def sort_hand(cards: Iterable[int]) -> list[int]:
    """Display order: by suit (s h d c), high rank first within a suit."""
    return sorted(cards, key=lambda c: (c & 3, -(c >> 2)))
