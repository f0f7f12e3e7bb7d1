"""Decks that deal chosen hands: for scenario tests and puzzles, without
knowing how each game interleaves its deal.

`chicago_deck` and `euchre_deck` return a `Deal` (dealer and deck order) for
`new_game(..., deals=[...])`. Seats and cards not chosen are filled from the
rest of the pack in an order shuffled by `seed`. A request that cannot be
dealt is a PositionError, never a different deal.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from referee.games.base import Deal
from referee.games.cards import CARD_INT, CARD_STR
from referee.games.chicago_moves import HAND_SIZE as CHICAGO_HAND
from referee.games.ghost_euchre import EUCHRE_DECK, N_PLAYERS
from referee.games.ghost_euchre import HAND_SIZE as EUCHRE_HAND
from referee.games.position import PositionError, norm_cards

Hands = Mapping[int, Sequence[str] | str] | Sequence[Sequence[str] | str | None]


def _chosen(hands: Hands, n: int, size: int, pack: Sequence[int]) -> dict[int, list[int]]:
    items = hands.items() if isinstance(hands, Mapping) else enumerate(hands)
    out: dict[int, list[int]] = {}
    for seat, cards in items:
        if cards is None:
            continue
        if not isinstance(seat, int) or not 0 <= seat < n:
            raise PositionError(f"hands: no seat {seat!r}; seats are 0-{n - 1}")
        chosen = [CARD_INT[c] for c in norm_cards(cards, f"hands[{seat}]")]
        if len(chosen) != size:
            raise PositionError(f"hands[{seat}]: a hand is {size} cards, not {len(chosen)}")
        out[seat] = chosen
    return out


def _fill(pack: Sequence[int], taken: list[tuple[str, list[int]]], seed: int) -> list[int]:
    """The cards of `pack` no place has chosen, shuffled; a card chosen twice or not in the pack is an error."""
    where: dict[int, str] = {}
    allowed = set(pack)
    for name, cards in taken:
        for c in cards:
            if c not in allowed:
                raise PositionError(f"{name}: {CARD_STR[c]} is not in this game's pack")
            if c in where:
                raise PositionError(f"card {CARD_STR[c]} is chosen twice: in {where[c]} and {name}")
            where[c] = name
    rest = [c for c in pack if c not in where]
    random.Random(seed).shuffle(rest)
    return rest


def chicago_deck(n_players: int, dealer: int, hands: Hands, *, stock: Sequence[str] | str = (), seed: int = 0) -> Deal:
    """A Chicago deal giving `hands` (seat -> 5 cards, in the order dealt) and
    `stock` as the top cards of the stock (top first)."""
    if not 2 <= n_players <= 4:
        raise PositionError(f"n_players: Swedish Chicago is for 2-4 players, not {n_players}")
    if not 0 <= dealer < n_players:
        raise PositionError(f"dealer: no seat {dealer}; seats are 0-{n_players - 1}")
    chosen = _chosen(hands, n_players, CHICAGO_HAND, range(52))
    top = [CARD_INT[c] for c in norm_cards(stock, "stock")]
    rest = _fill(range(52), [(f"hands[{s}]", h) for s, h in chosen.items()] + [("stock", top)], seed)
    order = [(dealer + 1 + i) % n_players for i in range(n_players)]  # eldest first, dealer last
    dealt = {s: chosen.get(s) or [rest.pop() for _ in range(CHICAGO_HAND)] for s in order}
    deck = [dealt[order[i % n_players]][i // n_players] for i in range(CHICAGO_HAND * n_players)]
    return Deal(dealer, tuple(deck + top + rest))


def euchre_deck(dealer: int, hands: Hands, *, ghost: Sequence[str] | str | None = None, seed: int = 0) -> Deal:
    """A Ghost Hand Euchre deal giving `hands` (seat -> 6 cards, in the order
    dealt) and, if given, the ghost hand."""
    if not 0 <= dealer < N_PLAYERS:
        raise PositionError(f"dealer: no seat {dealer}; seats are 0-2")
    chosen = _chosen(hands, N_PLAYERS, EUCHRE_HAND, EUCHRE_DECK)
    ghost_cards = [CARD_INT[c] for c in norm_cards(ghost, "ghost")] if ghost is not None else None
    if ghost_cards is not None and len(ghost_cards) != EUCHRE_HAND:
        raise PositionError(f"ghost: the ghost hand is {EUCHRE_HAND} cards, not {len(ghost_cards)}")
    taken = [(f"hands[{s}]", h) for s, h in chosen.items()] + ([("ghost", ghost_cards)] if ghost_cards else [])
    rest = _fill(EUCHRE_DECK, taken, seed)
    eldest = (dealer + 1) % N_PLAYERS
    piles = [eldest, (eldest + 1) % N_PLAYERS, "ghost", dealer]  # deck[i] goes to piles[i % 4]
    dealt = {
        p: (ghost_cards if p == "ghost" else chosen.get(p) if isinstance(p, int) else None)
        or [rest.pop() for _ in range(EUCHRE_HAND)]
        for p in piles
    }
    return Deal(dealer, tuple(dealt[piles[i % 4]][i // 4] for i in range(4 * EUCHRE_HAND)))
