"""Pure rules engines: cards, poker hand values, Swedish Chicago and Ghost Hand
Euchre as synchronous state machines, and in-process play. Modules here import
only `protocol/` and `referee.errors`, never trio or the runtime wings.

The public face for library users::

    from referee.games import new_game, play_game, random_policy, Deal, parse_cards, hand_value

and, to start from a position, sample hidden cards or build decks (docs/positions.md)::

    from referee.games import state_from_position, parse_position, seat_knowledge, chicago_deck
"""

from __future__ import annotations

from referee.games.base import PUBLIC, Deal, GameDef, GameResult, GameState
from referee.games.cards import CardError, format_cards, parse_card, parse_cards
from referee.games.deckbuild import chicago_deck, euchre_deck
from referee.games.determinize import SeatKnowledge, determinize, seat_knowledge
from referee.games.notation import NotationError, format_position, parse_position
from referee.games.playout import Decision, Policy, new_game, play_game, random_policy
from referee.games.poker import HandValue, hand_value
from referee.games.position import (
    ChicagoPosition,
    EuchrePosition,
    Position,
    PositionError,
)
from referee.games.registry import CHICAGO, GAMES, get_game
from referee.games.restore import position_of, state_from_position
from referee.games.rules import build_rules

__all__ = [
    "CHICAGO",
    "GAMES",
    "PUBLIC",
    "CardError",
    "ChicagoPosition",
    "Deal",
    "Decision",
    "EuchrePosition",
    "GameDef",
    "GameResult",
    "GameState",
    "HandValue",
    "NotationError",
    "Policy",
    "Position",
    "PositionError",
    "SeatKnowledge",
    "build_rules",
    "chicago_deck",
    "determinize",
    "euchre_deck",
    "format_cards",
    "format_position",
    "get_game",
    "hand_value",
    "new_game",
    "parse_card",
    "parse_cards",
    "parse_position",
    "play_game",
    "position_of",
    "random_policy",
    "seat_knowledge",
    "state_from_position",
]
