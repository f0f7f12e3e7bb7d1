"""Positions reached by seeded random play, shared by the position tests."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from referee.games import ChicagoPosition, get_game, new_game, state_from_position
from referee.games.cards import CARD_STR
from referee.games.rules import build_rules

# (game, seats, preset): every seat count and the presets that bring up each phase.
TABLES = [
    ("chicago", 2, None),
    ("chicago", 3, "swedish_common"),
    ("chicago", 4, "cardgames_zone_short"),
    ("chicago", 4, None),
    ("ghost_euchre", 3, None),
    ("ghost_euchre", 3, "renege_penalty"),
]


# Random players rarely reach the target: shorter games keep the tests quick.
SHORT = {"chicago": {"max_deals": 40}, "ghost_euchre": {"max_hands": 25}}


def random_positions(game: str, n: int, preset: str | None, seed: int, every: float = 0.08) -> Iterator[Any]:
    """Live states met on one seeded random game, at about a fraction `every` of its decisions."""
    state = new_game(game, n, seed, preset=preset, options=SHORT[game])
    rng = random.Random(seed * 7919 + n)
    while not state.is_terminal():
        if rng.random() < every:
            yield state
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])


def chicago_call_position(hands: tuple[tuple[str, ...], ...], exchanged: tuple[int, ...], **extra: Any) -> Any:
    """A Chicago state at its Chicago question: these hands (seat 0 asked
    first, the last seat dealing, 20 points each), twenty of the other cards in
    the stock and the rest discarded; `extra` are further position fields."""
    dealt = {c for hand in hands for c in hand}
    rest = [CARD_STR[c] for c in range(52) if CARD_STR[c] not in dealt]
    n = len(hands)
    position = ChicagoPosition(
        n_players=n,
        dealer=n - 1,
        hands=hands,
        stock=tuple(rest[:20]),
        discards=tuple(rest[20:]),
        scores=(20,) * n,
        phase="chicago_call",
        exchanged=exchanged,
        **extra,
    )
    return state_from_position(position, build_rules(get_game("chicago"), None, None))
