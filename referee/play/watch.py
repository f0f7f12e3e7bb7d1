"""What a game tells an onlooker while it is played: the observer hook.

The runner calls a `GameWatch`, if it was given one, at four moments: the
game started, an action was applied, a seat failed, the game finished. It
passes itself, so the watcher reads what it needs (the state's events with
their audiences, the seat names, the spec) and decides what to pass on; the
runner stays the same with or without one. A watcher must be quick and must
not raise: it runs inside the game's decision loop. The live event stream
(`referee/live/`) is one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

# The runner imports this module, so its types are named, not imported:
# `runner` is a `referee.play.runner.GameRunner`, `record` a `GameRecord`,
# `spec` a `GameSpec`.
GameRunner = GameRecord = GameSpec = Any


class GameWatch(Protocol):
    def started(self, runner: GameRunner) -> None:
        """Before the first request: the state holds the opening events."""

    def acted(self, runner: GameRunner, seat: int, source: str, action: Any, elapsed: float | None) -> None:
        """After `action` of `seat` was applied (`source`: "bot" or "default")."""

    def failed(self, runner: GameRunner, seat: int, reason: str, message: str) -> None:
        """A failure was recorded for `seat` (its message may quote its hand)."""

    def finished(self, runner: GameRunner, record: GameRecord) -> None:
        """The game is over and `record` is its result."""


WatchGames = Callable[[GameSpec, list[str]], "GameWatch | None"]
"""Gives each game (its spec and seat names) its watcher, or None: how a match
or a tournament is watched."""
