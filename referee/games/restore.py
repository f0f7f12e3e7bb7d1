"""Between live states and positions: describe one, or start the engine from one.

`state_from_position` is what a scenario test, a puzzle, a search bot or
`match --start` calls: it checks the position under the rules and builds a
state that plays on exactly as the described game would have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protocol.chicago import ChicagoRules
from protocol.euchre import EuchreRules
from referee.games.base import Deal, GameState
from referee.games.chicago import ChicagoState
from referee.games.ghost_euchre import GhostEuchreState
from referee.games.position import (
    ChicagoPosition,
    EuchrePosition,
    Position,
    PositionError,
)
from referee.games.position_chicago import build_chicago, describe_chicago
from referee.games.position_euchre import build_euchre, describe_euchre


def position_of(state: GameState) -> Position:
    """Describe a live state of either game as a position; a finished game has none."""
    if state.is_terminal():
        raise PositionError("the game is over: a finished game has no position to go on from")
    if isinstance(state, ChicagoState):
        return describe_chicago(state)
    if isinstance(state, GhostEuchreState):
        return describe_euchre(state)
    raise PositionError(f"no positions for {type(state).__name__}")


def state_from_position(position: Position, rules: Any = None, *, deals: Sequence[Deal] = ()) -> GameState:
    """Check `position` under `rules` (the game's defaults if None) and build its state.

    `deals` are explicit decks for the deals after this one; without them
    later deals are shuffled from the position's seed as the engine does.
    The state's events and `dealt_decks()` start at the position. Raises
    PositionError saying what is impossible."""
    if isinstance(position, ChicagoPosition):
        return build_chicago(position, rules if rules is not None else ChicagoRules(), deals)
    if isinstance(position, EuchrePosition):
        return build_euchre(position, rules if rules is not None else EuchreRules(), deals)
    raise PositionError(f"not a position: {type(position).__name__}")
