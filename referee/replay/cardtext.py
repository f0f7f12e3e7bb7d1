"""Cards for the terminal: rank and suit symbol, hearts and diamonds in red,
hidden cards as backs. Shared by the replay, its start-position block and the
terminal seat."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from referee.games.cards import CARD_STR, SUIT_SYMBOLS, SUITS, parse_card, sort_hand

BACK = "░░"
RED_SUITS = frozenset("hd")


def card_text(card: str) -> Text:
    """`"Th"` -> `10♥` in red; an unknown string is shown as it is."""
    if len(card) != 2 or card[1] not in SUITS:
        return Text(card)
    rank = "10" if card[0] == "T" else card[0]
    return Text(rank + SUIT_SYMBOLS[SUITS.index(card[1])], style="red" if card[1] in RED_SUITS else "")


def cards_text(cards: Iterable[str], *, sort: bool = False) -> Text:
    items = list(cards)
    if sort:
        try:
            items = [CARD_STR[c] for c in sort_hand(parse_card(c) for c in items)]
        except Exception:
            pass
    return Text(" ").join(card_text(c) for c in items)


def backs_text(count: int) -> Text:
    return Text(" ".join([BACK] * count), style="dim")
