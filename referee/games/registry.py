"""The games the referee knows, by name: each one's `GameDef`, with its engine,
wire types and hooks (base.py). The runtime looks games up here and uses only
that interface, so it holds no game-specific code; `register` adds a game of
one's own (a test does, with a small trick game of its own).
"""

from __future__ import annotations

from protocol.chicago import ChicagoAction, ChicagoRules
from protocol.euchre import EuchreAction, EuchreRules
from referee.errors import ConfigError
from referee.games import chicago, chicago_show, euchre_show, ghost_euchre
from referee.games.base import GameDef, PositionHooks
from referee.games.position import ChicagoPosition, EuchrePosition
from referee.games.position_chicago import build_chicago, describe_chicago
from referee.games.position_euchre import build_euchre, describe_euchre
from referee.games.show import CheckScenario

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
    words=chicago_show.WORDS,
    text=chicago_show.TEXT,
    page=chicago_show.PAGE,
    # One deal set of each; together they bring up every decision kind
    # (one_open + Chicago calls at any score in swedish_common).
    check_scenarios=(
        CheckScenario(2, "gamerules", {"target_score": 25}),
        CheckScenario(3, "swedish_common", {"target_score": 25}),
        CheckScenario(4, "cardgames_zone_short"),
    ),
    decision_kinds=("exchange", "take_open", "chicago", "play"),
    default_opponent="pimc",
    positions=PositionHooks(
        position_type=ChicagoPosition, state_type=chicago.ChicagoState, describe=describe_chicago, build=build_chicago
    ),
)

GHOST_EUCHRE = GameDef(
    name="ghost_euchre",
    title="Ghost Hand Euchre",
    seat_counts=(3,),
    rules_type=EuchreRules,
    presets={
        "gamerules": {},
        "moon_minus_24": {"moon_fail_penalty": 24},
        "renege_penalty": {"renege_policy": "penalize"},
    },
    default_preset="gamerules",
    action_type=EuchreAction,
    new_state=ghost_euchre.new_state,
    words=euchre_show.WORDS,
    text=euchre_show.TEXT,
    page=euchre_show.PAGE,
    # Short games: random bidders sink below zero and would play to max_hands.
    check_scenarios=(
        CheckScenario(3, "gamerules", {"max_hands": 30}),
        CheckScenario(3, "renege_penalty", {"max_hands": 30}),
    ),
    decision_kinds=("pass", "bid", "swap_ghost", "name_trump", "play"),
    default_opponent="pimc",
    positions=PositionHooks(
        position_type=EuchrePosition,
        state_type=ghost_euchre.GhostEuchreState,
        describe=describe_euchre,
        build=build_euchre,
    ),
    deck_size=len(ghost_euchre.EUCHRE_DECK),
    full_deck=tuple(ghost_euchre.EUCHRE_DECK),
)

GAMES: dict[str, GameDef] = {CHICAGO.name: CHICAGO, GHOST_EUCHRE.name: GHOST_EUCHRE}


def register(game: GameDef) -> None:
    """Make a game known by its name to every command and wing (its name must be new)."""
    if game.name in GAMES:
        raise ConfigError(f"a game named {game.name!r} is already registered")
    GAMES[game.name] = game


def unregister(name: str) -> None:
    """Forget a game `register` added (the two built-in games stay)."""
    if name in (CHICAGO.name, GHOST_EUCHRE.name):
        raise ConfigError(f"{name!r} is built in")
    GAMES.pop(name, None)


def get_game(name: str) -> GameDef:
    key = name.strip().lower().replace("_", "-")
    for game in GAMES.values():
        if key in (game.name, game.name.replace("_", "-")):
            return game
    raise ConfigError(f"unknown game {name!r}; choose one of: {', '.join(GAMES)}")
