"""The games the referee knows, by name. The runtime looks games up here and
uses only the `GameDef` interface, so it holds no game-specific code."""


from __future__ import annotations

from protocol.chicago import ChicagoAction, ChicagoRules
from referee.errors import ConfigError
from referee.games import chicago
from referee.games.base import GameDef
from referee.games.ghost_euchre import GHOST_EUCHRE

_ZONE = {
    "exchanges": 2,
    "showdown_after": [True, True],
    "no_exchange_threshold": 46,
    "chicago_enabled": False,
    "win_check": "end_of_deal",
    "reveal_scoring_hand": True,
}

CHICAGO = GameDef(
    name="chicago",
    title="Swedish Chicago",
    seat_counts=(2, 3, 4),
    rules_type=ChicagoRules,
    presets={
        "gamerules": {},
        "cardgames_zone": _ZONE,
        "cardgames_zone_short": {**_ZONE, "target_score": 30},
        "swedish_common": {
            "no_exchange_threshold": 42,
            "chicago_min_score": 0,
            "score_floor": None,
            "one_open": True,
        },
    },
    default_preset="gamerules",
    action_type=ChicagoAction,
    new_state=chicago.new_state,
    extras={
        # `check` plays one deal set of each; together they bring up every
        # decision kind (one_open + Chicago calls at any score in swedish_common).
        "check_scenarios": [
            (2, "gamerules", {"target_score": 25}),
            (3, "swedish_common", {"target_score": 25}),
            (4, "cardgames_zone_short", {}),
        ],
        "decision_kinds": ["exchange", "take_open", "chicago", "play"],
    },
)

GAMES: dict[str, GameDef] = {CHICAGO.name: CHICAGO, GHOST_EUCHRE.name: GHOST_EUCHRE}


def get_game(name: str) -> GameDef:
    key = name.strip().lower().replace("_", "-")
    for game in GAMES.values():
        if key in (game.name, game.name.replace("_", "-")):
            return game
    raise ConfigError(f"unknown game {name!r}; choose one of: {', '.join(GAMES)}")
