"""What a Dask worker does with one game: check, play in its Trio loop, ship back.

`run_job` is the function the coordinator submits to a Dask worker of a
`--cluster` (the local pool behind `--workers N` has its own worker,
`pool_worker.py`, which shares the coordinator's files). Each call runs in
one of the worker's threads, so a worker plays as many games at once as it
has threads; the thread only checks the game and hands it to the worker's
one Trio loop (`GameLoop`, started by the first game), which plays every
game the worker gets, as a pool worker's loop does. One loop, not a
`trio.run` per game: starting a loop costs each game, and several loops in
one process fight for its interpreter lock, which delays every bot's answer.

Before playing it refuses, with a `ClusterError` naming the worker, a game
whose bots differ from the coordinator's copy or whose sandbox this
machine cannot provide: a game must never run with less isolation than the
tournament asked for. The clocks are judged here, and the log header names
this worker and its load.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import replace

import trio

from referee.errors import ClusterError, SandboxUnavailable
from referee.seats.bot_command import BotSpec
from referee.seats.isolation import require_isolation
from referee.tournament.bot_files import check_same_files
from referee.tournament.game_job import (
    STARTS_AT_ONCE,
    GameJob,
    PlayedGame,
    play_job_shipped,
    worker_info,
    worker_label,
)


class GameLoop:
    """One Trio loop in a thread of its own that plays the games handed to it.

    Started on first use; a loop that has ended (it never should) is started
    again. Its bots are started through one limiter, this worker's share of
    the machine's start-ups, as in one process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._starts: trio.CapacityLimiter | None = None

    def _running(self) -> tuple[trio.lowlevel.TrioToken, trio.CapacityLimiter]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive() or self._token is None or self._starts is None:
                ready = threading.Event()

                async def serve() -> None:
                    self._token = trio.lowlevel.current_trio_token()
                    self._starts = trio.CapacityLimiter(STARTS_AT_ONCE)
                    ready.set()
                    await trio.sleep_forever()

                self._thread = threading.Thread(
                    target=trio.run, args=(serve,), name="chicago-referee-games", daemon=True
                )
                self._thread.start()
                ready.wait()
            assert self._token is not None and self._starts is not None
            return self._token, self._starts

    def play(self, job: GameJob, info: dict[str, object]) -> PlayedGame:
        """Play `job` in the loop; this thread waits for it (without holding the interpreter lock)."""
        token, starts = self._running()
        return trio.from_thread.run(play_job_shipped, job, info, starts, trio_token=token)


GAMES = GameLoop()  # this process's loop: every game a Dask worker gets is played in it


def _worker_name() -> str | None:
    try:
        from distributed import get_worker
    except ImportError:  # pragma: no cover - run_job is only ever called by Dask
        return None
    try:
        worker = get_worker()
    except ValueError:  # not inside a Dask worker (a direct call)
        return None
    return worker_label(worker.name if worker.name is not None else worker.address)


def _local_python(spec: BotSpec, coordinator_python: str) -> BotSpec:
    """A `.py` bot started with the coordinator's interpreter starts with this worker's."""
    if spec.argv and spec.argv[0] == coordinator_python and coordinator_python != sys.executable:
        return replace(spec, argv=(sys.executable, *spec.argv[1:]))
    return spec


def run_job(job: GameJob, coordinator_python: str) -> PlayedGame:
    """Play one game on this worker and return its record with the log compressed."""
    info = worker_info(_worker_name())
    name = info["name"]
    for (bot, digest, folder), spec in zip(job.bot_digests, job.bots):
        check_same_files(bot, spec.argv, spec.cwd, folder, digest, name)
    try:
        require_isolation(job.sandbox)
    except SandboxUnavailable as exc:
        raise ClusterError(f"worker {name} cannot isolate bots, and the tournament is sandboxed: {exc}") from None
    job = replace(job, bots=tuple(_local_python(b, coordinator_python) for b in job.bots))
    return GAMES.play(job, info)
