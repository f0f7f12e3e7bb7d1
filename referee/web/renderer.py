"""Pages built away from the games, and bounded caches to keep them in.

A replay page is built from a whole log: ten milliseconds of pure Python
for a short game, a second of CPU for a 500-deal one. On the loop that
plays the games it would make the bots time out; on a thread it holds the
interpreter's lock the loop needs, and a crowd of spectators takes half the
games' pace (measured on 2 cores). So pages are made in one process of
their own, one at a time, at the lowest priority there is (Linux's
`SCHED_IDLE`, and `nice` 19): it runs only on a core nothing else wants,
and a bot or the referee that wakes takes the core back at once. A core
"nothing else wants" is still not free (its twin on the same physical core,
its caches), so the renderer also keeps to a budget: after a page that took
t seconds of CPU it rests t * (1 / `CPU_SHARE` - 1), at most a tenth of
one core however many ask (a short game's page: 9 a second). At most `max_waiting` requests queue for it (the
next is told to come back), and pages are kept in LRUs bounded in entries
and in bytes. The live dashboard and the arena's pages both build on this.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import trio

from referee.errors import RefereeError

CACHE_ENTRIES = 64
CACHE_BYTES = 64 << 20
MAX_WAITING = 16
CPU_SHARE = 0.1  # of one core, at most, for every page the renderer makes
NICE = 19  # and where SCHED_IDLE is not offered, still the last the kernel gives a core to


class Busy(RefereeError):
    """Too many pages waiting to be rendered: the viewer is asked to come back."""


def _start_renderer(parent: int) -> None:
    """In the renderer's process: a low priority, and an end with the dashboard's
    process however that ends (a SIGKILL runs no cleanup; the kernel's death
    signal still comes)."""
    os.nice(NICE)
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    if os.getppid() != parent:  # it died before the line above
        os._exit(0)


def _timed(make: Callable[[], bytes]) -> tuple[bytes, float]:
    """In the renderer's process: a page and the CPU time it took."""
    began = time.process_time()
    body = make()
    return body, time.process_time() - began


class Renderer:
    """Pages made in one low-priority process of their own, one at a time,
    with at most `max_waiting` requests queued for it."""

    def __init__(self, max_waiting: int = MAX_WAITING) -> None:
        self.max_waiting = max_waiting
        self.waiting = 0
        self._lock = trio.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self.rest_s = 0.0  # what the last page's CPU time asks the next one to wait

    async def make(self, cached: Callable[[], bytes | None], make: Callable[[], bytes]) -> tuple[bytes, bool]:
        """`cached()` if another request made it meanwhile, else `make()` (a
        module's function and its arguments: it is sent to the process); and
        whether it was made now. `Busy` if too many wait."""
        if self.waiting >= self.max_waiting:
            raise Busy("the dashboard is busy rendering pages: try again in a moment")
        self.waiting += 1
        try:
            async with self._lock:
                found = cached()
                if found is not None:  # made while this one waited: no rest owed for it
                    return found, False
                await trio.sleep(self.rest_s)
                self.rest_s = 0.0
                if self._pool is None:  # spawned, never forked: a fork of a running Trio process is not safe
                    context = multiprocessing.get_context("spawn")
                    self._pool = ProcessPoolExecutor(
                        max_workers=1, mp_context=context, initializer=_start_renderer, initargs=(os.getpid(),)
                    )
                future = self._pool.submit(_timed, make)
                body, cpu_s = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True)
                self.rest_s = cpu_s * (1 / CPU_SHARE - 1)  # the next page waits that long (the lock is held)
                return body, True
        finally:
            self.waiting -= 1

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


class Lru:
    """Bytes by key, each with the version it was made of and when, bounded in
    entries and in bytes; the least recently used go first."""

    def __init__(self, entries: int = CACHE_ENTRIES, size: int = CACHE_BYTES) -> None:
        self.entries, self.size, self.held = entries, size, 0
        self._items: OrderedDict[Any, tuple[Any, float, bytes]] = OrderedDict()

    def peek(self, key: Any) -> tuple[Any, float, bytes] | None:
        """(version, made, body) of `key`, now the most recently used."""
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def get(self, key: Any, version: Any) -> bytes | None:
        item = self.peek(key)
        return item[2] if item is not None and item[0] == version else None

    def put(self, key: Any, version: Any, body: bytes, made: float = 0.0) -> bytes:
        old = self._items.pop(key, None)
        self.held += len(body) - (len(old[2]) if old else 0)
        self._items[key] = (version, made, body)
        while self._items and (len(self._items) > self.entries or self.held > self.size):
            self.held -= len(self._items.popitem(last=False)[1][2])
        return body
