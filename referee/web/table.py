"""A table played in the browser: the server, the browser seat, the games."""

from __future__ import annotations

from collections.abc import Callable

import trio

from referee.play.match import MatchResult
from referee.play.table import TableConfig, play_table
from referee.web.app import SeatApp
from referee.web.server import start_server
from referee.web.session import WebPlayer

FAREWELL_S = 0.3  # after the last game: time for the final snapshot to reach open pages


async def serve_table(
    config: TableConfig, host: str, port: int, open_browser: bool, on_url: Callable[[str], None]
) -> MatchResult:
    """Serve the seat's page, play the table through it, stop the server."""
    player = WebPlayer(f"{config.game.title}: {config.human_name} against " + ", ".join(b.name for b in config.bots))
    async with trio.open_nursery() as nursery:
        served = await start_server(
            nursery,
            SeatApp(player).routes,
            host=host,
            port=port,
            open_browser=open_browser,
            on_url=on_url,
        )
        try:
            result = await play_table(config, player, player.again)
            await trio.sleep(FAREWELL_S)
        finally:
            served.stop.set()
    return result
