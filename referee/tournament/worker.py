"""What a Dask worker does with a batch of games: check, play in its Trio loop, ship back.

`run_jobs` is the function the coordinator submits to a Dask worker of a
`--cluster` (the local pool behind `--workers N` has its own worker,
`pool_worker.py`, which shares the coordinator's files). One Dask task
carries a few games, since a task costs several milliseconds of CPU over
the scheduler, the worker and the coordinator whatever it does. Each call
runs in one of the worker's threads; the thread only checks the games and
hands them to the worker's one Trio loop (`GameLoop`, started by the first
batch), which plays every game the worker gets, as a pool worker's loop
does. One loop, not a `trio.run` per task: starting a loop costs each
task, and several loops in one process fight for its interpreter lock,
which delays every bot's answer.

Before playing it refuses, with a `ClusterError` naming the worker, a game
whose bots differ from the coordinator's copy or whose sandbox this
machine cannot provide: a game must never run with less isolation than the
tournament asked for. A game's failure is that game's result, never its
batch-mates'. The clocks are judged here, and the log header names this
worker and its load.
"""

from __future__ import annotations

import pickle
import sys
import threading
from dataclasses import replace

import trio

from referee.errors import ClusterError, RefereeError, SandboxUnavailable
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

    def play(self, jobs: list[GameJob], info: dict[str, object]) -> list[PlayedGame | Exception]:
        """Play `jobs` at once in the loop, one result or failure each; this
        thread waits for them (without holding the interpreter lock)."""
        token, starts = self._running()
        return trio.from_thread.run(_play_all, jobs, info, starts, trio_token=token)


async def _play_all(
    jobs: list[GameJob], info: dict[str, object], starts: trio.CapacityLimiter
) -> list[PlayedGame | Exception]:
    results: list[PlayedGame | Exception] = [ClusterError("not played")] * len(jobs)

    async def one(i: int, job: GameJob) -> None:
        try:
            results[i] = await play_job_shipped(job, info, starts)
        except Exception as exc:  # this game's own failure, not its batch-mates'
            results[i] = exc

    async with trio.open_nursery() as games:
        for i, job in enumerate(jobs):
            games.start_soon(one, i, job)
    return results


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


def _checked(job: GameJob, name: str, coordinator_python: str) -> GameJob:
    """`job`, ready to play here, once its bots' files and its sandbox are checked."""
    for (bot, digest, folder), spec in zip(job.bot_digests, job.bots):
        check_same_files(bot, spec.argv, spec.cwd, folder, digest, name)
    try:
        require_isolation(job.sandbox)
    except SandboxUnavailable as exc:
        raise ClusterError(f"worker {name} cannot isolate bots, and the tournament is sandboxed: {exc}") from None
    return replace(job, bots=tuple(_local_python(b, coordinator_python) for b in job.bots))


def _shippable(exc: Exception, job: GameJob, name: str) -> Exception:
    """A game's failure as the coordinator can receive it: a refusal as it is,
    anything else in words naming the game and this worker."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:  # a Trio nursery's wrapping
        exc = exc.exceptions[0]
    if isinstance(exc, RefereeError):
        try:
            pickle.dumps(exc)
            return exc
        except Exception:  # an error with arguments pickle cannot carry: its words still can
            pass
    return ClusterError(f"game {job.key} failed on worker {name}: {type(exc).__name__}: {exc}")


def run_jobs(jobs: list[GameJob], coordinator_python: str) -> list[PlayedGame | Exception]:
    """Play a batch of games at once on this worker: for each, its record with
    the log compressed, or the exception that refused or ended that game."""
    info = worker_info(_worker_name())
    name = str(info["name"])
    results: list[PlayedGame | Exception | None] = []
    playable: list[GameJob] = []
    for job in jobs:
        try:
            playable.append(_checked(job, name, coordinator_python))
            results.append(None)
        except Exception as exc:
            results.append(_shippable(exc, job, name))
    played = iter(GAMES.play(playable, info) if playable else [])
    out: list[PlayedGame | Exception] = []
    for job, result in zip(jobs, results):
        if result is None:
            result = next(played)
            if isinstance(result, Exception):
                result = _shippable(result, job, name)
        out.append(result)
    return out
