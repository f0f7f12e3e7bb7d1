"""Play whole games in-process between Python policies (no subprocesses).

Used by tests, benchmarks and bot writers who train in-process. A policy is
any callable taking a `Decision` and returning one of `decision.legal`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from referee.games.base import Deal, GameResult, GameState
from referee.games.registry import get_game
from referee.games.rules import build_rules


class Decision:
    """What a policy sees: its seat, the legal actions and (lazily) its view."""

    __slots__ = ("__dict__", "legal", "seat", "state")

    def __init__(self, state: GameState, seat: int, legal: list[Any]) -> None:
        self.state = state
        self.seat = seat
        self.legal = legal

    @cached_property
    def view(self) -> Any:
        return self.state.view(self.seat)


Policy = Callable[[Decision], Any]


def random_policy(seed: int | None = None) -> Policy:
    """Uniform over the legal list (the `random` sample bot, in-process)."""
    rng = random.Random(seed)
    return lambda d: d.legal[rng.randrange(len(d.legal))]


def new_game(
    game: str = "chicago",
    n_players: int = 2,
    seed: int = 0,
    *,
    preset: str | None = None,
    options: dict[str, Any] | None = None,
    deals: Sequence[Deal] = (),
) -> GameState:
    """A fresh game state from a game name, preset/options, seed, and explicit deals."""
    gdef = get_game(game)
    rules = build_rules(gdef, preset, options)
    return gdef.new_state(rules, n_players, seed, deals)


def play_game(state: GameState, policies: Sequence[Policy]) -> GameResult:
    """Run `state` to the end, each seat's action chosen by its policy (and
    checked by the engine: an illegal one raises IllegalAction)."""
    if len(policies) != state.n_players:
        raise ValueError(f"need {state.n_players} policies, got {len(policies)}")
    while not state.is_terminal():
        seat = state.current_player()
        legal = state.legal_actions()
        action = policies[seat](Decision(state, seat, legal))
        state.apply_action(action)
    return state.result()
