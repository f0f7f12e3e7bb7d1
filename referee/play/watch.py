"""What a game tells an onlooker while it is played: the observer hook.

The runner calls a `GameWatch`, if it was given one, at four moments: the
game started, an action was applied, a seat failed, the game finished. It
passes itself as a `WatchedGame`: what a watcher may read (the state, whose
events carry their audiences, and the game's spec), and it decides what to
pass on; the runner stays the same with or without one. A watcher must be
quick and must not raise: it runs inside the game's decision loop. The live
event stream (`referee/live/`) is one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from referee.games.base import GameState
from referee.play.game_spec import GameRecord, GameSpec


class WatchedGame(Protocol):
    """What a watcher reads of the game being played (the runner offers it)."""

    @property
    def state(self) -> GameState: ...

    @property
    def spec(self) -> GameSpec: ...


class GameWatch(Protocol):
    def started(self, game: WatchedGame) -> None:
        """Before the first request: the state holds the opening events."""

    def acted(self, game: WatchedGame, seat: int, source: str, action: Any, elapsed: float | None) -> None:
        """After `action` of `seat` was applied (`source`: "bot" or "default")."""

    def failed(self, game: WatchedGame, seat: int, reason: str, message: str) -> None:
        """A failure was recorded for `seat` (its message may quote its hand)."""

    def finished(self, game: WatchedGame, record: GameRecord) -> None:
        """The game is over and `record` is its result."""


WatchGames = Callable[[GameSpec, list[str]], "GameWatch | None"]
"""Gives each game (its spec and seat names) its watcher, or None: how a match
or a tournament is watched."""
