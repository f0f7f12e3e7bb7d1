"""Between live states and positions: describe one, or start the engine from one.

`state_from_position` is what a scenario test, a puzzle, a search bot or
`match --start` calls: it checks the position under the rules and builds a
state that plays on exactly as the described game would have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.base import Deal, GameState, PositionHooks
from referee.games.position import Position, PositionError
from referee.games.registry import GAMES


def _positions(found: Any, attribute: str) -> tuple[Any, PositionHooks]:
    """The game whose positions `found` (a state or a position) belongs to, and their hooks."""

    for game in GAMES.values():
        if game.positions is not None and isinstance(found, getattr(game.positions, attribute)):
            return game, game.positions
    kind = "state" if attribute == "state_type" else "position"
    raise PositionError(f"no positions for this {kind}: {type(found).__name__}")


def position_of(state: GameState) -> Position:
    """Describe a live state of a game as a position; a finished game has none."""
    if state.is_terminal():
        raise PositionError("the game is over: a finished game has no position to go on from")
    _game, hooks = _positions(state, "state_type")
    return hooks.describe(state)


def state_from_position(position: Position, rules: Any = None, *, deals: Sequence[Deal] = ()) -> GameState:
    """Check `position` under `rules` (the game's defaults if None) and build its state.

    `deals` are explicit decks for the deals after this one; without them
    later deals are shuffled from the position's seed as the engine does.
    The state's events and `dealt_decks()` start at the position. Raises
    PositionError saying what is impossible."""
    game, hooks = _positions(position, "position_type")
    return hooks.build(position, rules if rules is not None else game.rules_type(), deals)
