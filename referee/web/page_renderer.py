"""A finished game's replay page, built away from the games.

Building a replay page reads and decodes the whole log: tens of
milliseconds of pure Python for a short game, a second for a long one. On a
thread of the server it would hold the interpreter's lock, which the
games' loop needs for every decision, so a crowd of spectators would cost
the games their pace (measured: about half of it with 500 page requests on
2 cores). So pages are built in a process of their own at a low priority
(`nice` 10: the kernel gives the games the cores first), one page at a
time, and kept in a cache bounded by bytes, so a page asked for again costs
nothing. The cache's key says whose view the page is (public, an owner's
seats, or an admin's), since a failure's details are its owner's alone.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import trio

from referee.arena.game_files import shown_log

CACHE_BYTES = 64 << 20
NICE = 10


def _lower_priority() -> None:
    os.nice(NICE)


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
    """Builds pages in one low-priority process; keeps the recent ones."""

    def __init__(self, cache_bytes: int = CACHE_BYTES) -> None:
        self.cache_bytes = cache_bytes
        self._pages: OrderedDict[tuple[int, tuple[int, ...] | None], bytes] = OrderedDict()
        self._held = 0
        self._pool: ProcessPoolExecutor | None = None
        self._one_at_a_time = trio.CapacityLimiter(1)

    async def page(self, log_path: Path, own: set[int] | None, game_id: int) -> bytes:
        key = (game_id, None if own is None else tuple(sorted(own)))
        cached = self._pages.get(key)
        if cached is not None:
            self._pages.move_to_end(key)
            return cached
        async with self._one_at_a_time:
            cached = self._pages.get(key)  # built meanwhile by an earlier request
            if cached is not None:
                return cached
            future = self._executor().submit(build_page, str(log_path), key[1], game_id)
            data: bytes = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        self._keep(key, data)
        return data

    def _keep(self, key: tuple[int, tuple[int, ...] | None], data: bytes) -> None:
        if len(data) > self.cache_bytes // 4:
            return  # a huge page is not worth evicting many small ones
        self._pages[key] = data
        self._held += len(data)
        while self._held > self.cache_bytes:
            _key, old = self._pages.popitem(last=False)
            self._held -= len(old)

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")  # never a fork of a running Trio process
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=_lower_priority)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
