"""A finished arena game's replay page, as a viewer may see it: built by the
shared renderer (`referee.web.renderer`: a low-priority process of its own,
one page at a time) and kept in a bounded cache. The key says whose view
the page is (public, an owner's seats, or an admin's), since a failure's
details are its owner's alone.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from referee.arena.game_files import shown_log
from referee.web.renderer import Lru, Renderer


def build_page(log_path: str, own: tuple[int, ...] | None, game_id: int) -> bytes:
    """The replay page of one game as `own` may see it (runs in the renderer's process)."""
    from referee.replay.html import build_replay_data, linked_page_html

    path = Path(log_path)
    data = build_replay_data(path, shown_log(path.read_bytes(), None if own is None else set(own)))
    nav = (
        f'<nav class="arena-nav"><a href="/">Leaderboard</a> · '
        f'<a href="/games/{int(game_id)}/log">Download the log</a></nav>'
    )
    return linked_page_html(data, "/assets", nav).encode()


class PageRenderer:
    """The arena's game pages: made once per game and view, then served from the cache."""

    def __init__(self) -> None:
        self._renderer = Renderer()
        self._pages = Lru()

    async def page(self, log_path: Path, own: set[int] | None, game_id: int) -> bytes:
        key = (game_id, None if own is None else tuple(sorted(own)))
        found = self._pages.get(key, 0)  # a finished game's log never changes
        if found is not None:
            return found
        body, _made = await self._renderer.make(
            lambda: self._pages.get(key, 0), partial(build_page, str(log_path), key[1], game_id)
        )
        return self._pages.put(key, 0, body)

    def close(self) -> None:
        self._renderer.close()
