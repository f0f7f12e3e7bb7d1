"""Positions reached by seeded random play, shared by the position tests."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from referee.games import new_game

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
