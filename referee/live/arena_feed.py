"""The arena's games on the live dashboard, under the arena's own URL (`/live/`).

The games are watched in the arena's process (a `BoardWriter`: no stream
file grows for the weeks an arena runs, none holds a card) and shown by the
same `Dashboard` a match or a tournament serves, public like the rest of the
arena's pages and behind its guard. Only games played in this process can be
watched move by move: with `--workers` or `--cluster` the page shows none in
progress (as a tournament's).

A unit's games run together and deal the same cards under every rotation,
so a game may show every card only once its whole unit is over; until then,
hidden cards appear only after the arena's `reveal_delay`, and not at all
without one. A live game's id says where it belongs: 10 * unit + rotation + 1
(unit 57's first game is 571), since the arena numbers its games only when
they are recorded. The final tournament's games show here too, as
`FINAL_BASE` + their number in the final; every card of them once the final
is over (its deal sets are played by many tables at once).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from starlette.routing import BaseRoute, Mount

from referee.live.app import Dashboard
from referee.live.board import LiveBoard
from referee.live.source import LiveSource
from referee.live.stream import BoardWriter, GameFeed
from referee.play.game_spec import GameSpec

LIVE_ID_STRIDE = 10  # more than the rotations of any table (at most 8 seats)
FINAL_BASE = 900_000_000  # above every unit's games (units below 90 million), below the dashboard's largest id
LIVE_PATH = "/live"


def live_game_id(unit: int, rotation: int) -> int:
    return unit * LIVE_ID_STRIDE + rotation + 1


def unit_of(live_id: int) -> int:
    return live_id // LIVE_ID_STRIDE


class ArenaLive:
    """The board the arena's games feed, and the dashboard that shows it.

    `unit_running(unit)` and `final_running()` are the arena's word on whether
    a unit, or the final, still plays (the server's, once it exists; until
    then everything does): a game of one that does not is settled (its
    siblings are over)."""

    def __init__(
        self,
        title: str,
        game: str,
        reveal_delay: float | None,
        unit_running: Callable[[int], bool] = lambda _u: True,
        final_running: Callable[[], bool] = lambda: True,
    ) -> None:
        self.unit_running = unit_running
        self.final_running = final_running
        self.board = LiveBoard(reveal_delay)
        self.board.settled_rule = self._settled
        self.writer = BoardWriter(self.board, source="arena", name=title, game=game)
        # No log: a finished game's page is the board's view (all cards once settled); the arena's
        # own page of the game (`/games/ID`) is the place for its log, as its owner may see it.
        self.source = LiveSource(board=self.board, title=title)
        self.dashboard = Dashboard(self.source)

    def _settled(self, live_id: int) -> bool:
        if live_id >= FINAL_BASE:
            return not self.final_running()
        return not self.unit_running(unit_of(live_id))

    def watch_games(self, spec: GameSpec, names: list[str]) -> GameFeed:
        """The executor's hook: a unit's game (its deal set is the unit, its id the rotation + 1)."""
        assert spec.deal_set is not None, "an arena game belongs to a unit"
        return self.writer.watch_games(replace(spec, game_id=live_game_id(spec.deal_set, spec.game_id - 1)), names)

    def watch_final(self, spec: GameSpec, names: list[str]) -> GameFeed:
        """The final tournament's hook: its games, numbered above every unit's."""
        return self.writer.watch_games(replace(spec, game_id=FINAL_BASE + spec.game_id), names)

    @property
    def routes(self) -> list[BaseRoute]:
        return [Mount(LIVE_PATH, routes=self.dashboard.routes)]

    def close(self) -> None:
        self.writer.close("stopped")
        self.source.close()
