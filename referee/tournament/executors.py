"""Where tournament games are played: here, on N local workers, or on a Dask cluster.

One question, one answer: "play this scheduled game somewhere and give me
back its record and log". The tournament runner asks it for every game and
alone writes the results database, so there is one writer whichever
executor plays, and resume stays exact.

* In process (the default): games run concurrently in the runner's own
  Trio loop; logs are written straight into the log folder.
* `--workers N`: a pool of N worker processes on this machine (`pool.py`),
  each playing many games at once in one Trio loop, so the referee's work
  spreads over every core; they write logs straight into the log folder.
* `--cluster tcp://HOST:PORT`: a running Dask scheduler and its workers,
  on any number of machines (docs/cluster.md); the games asked for together
  go to a worker in one Dask task.

Cluster games come back as a `PlayedGame` with the log compressed. When a
worker dies (pool or cluster), its games are played again on another
worker; a game is recorded once whatever happens, since the runner keeps the
first result per game key. Dask is an optional extra, imported only here and
only for `--cluster`.
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import trio

from referee.errors import ClusterError, ConfigError
from referee.play.watch import WatchGames
from referee.tournament.game_job import STARTS_AT_ONCE, GameJob, PlayedGame, play_job, worker_info, worker_label
from referee.tournament.pool import MAX_LOSSES, open_pool

INSTALL_HINT = "pip install 'chicago-referee[cluster]'"
LOCAL = "local"


@dataclass(frozen=True)
class Placement:
    """Where to play: `workers` local processes (0: in process) or a `cluster` address."""

    workers: int = 0
    cluster: str | None = None

    def __post_init__(self) -> None:
        if self.workers < 0:
            raise ConfigError(f"--workers must be at least 1, got {self.workers}")
        if self.workers and self.cluster:
            raise ConfigError(
                "--workers and --cluster exclude each other: --workers starts worker processes on "
                "this machine, --cluster uses a running Dask cluster"
            )

    def default_concurrency(self) -> int:
        """Games in flight when neither the command nor the config says: 8 per
        local worker; 64 on a cluster, spread over its workers a batch per Dask task (0: none)."""
        if self.cluster:
            return 64
        return 8 * self.workers

    def describe(self) -> str:
        if self.cluster:
            return f"on the Dask cluster at {self.cluster}"
        if self.workers:
            return f"on {self.workers} worker process{'es' if self.workers > 1 else ''}"
        return "in process"


class Executor(Protocol):
    """Plays one game somewhere; `in_flight` counts the games running per worker."""

    in_flight: Counter[str]

    async def play(self, job: GameJob, part: Path | None) -> PlayedGame: ...


class LocalExecutor:
    """Games in this Trio loop; their bots in one process nursery."""

    def __init__(self, procs: trio.Nursery, watch_games: WatchGames | None = None) -> None:
        self.procs = procs
        self.watch_games = watch_games  # only games played in this process can be watched move by move
        self.start_limiter = trio.CapacityLimiter(STARTS_AT_ONCE)
        self.in_flight: Counter[str] = Counter()

    async def play(self, job: GameJob, part: Path | None) -> PlayedGame:
        worker = worker_info(LOCAL)
        self.in_flight[LOCAL] += 1
        try:
            rec = await play_job(job, self.procs, self.start_limiter, part, worker, self.watch_games)
        finally:
            self.in_flight[LOCAL] -= 1
        return PlayedGame(record=rec, worker=worker)


def import_distributed() -> Any:
    """The `distributed` package, or a one-line error saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise ConfigError(f"--cluster needs Dask, which is not installed: {INSTALL_HINT}") from None
    return distributed


BATCHES_PER_WORKER = 2  # a worker keeps playing one batch's games while another's last game ends
MAX_BATCH = 16  # games per Dask task at most: a worker lost costs its batches' games a rerun
QUIET = 0.02  # seconds with no new game before a batch that is not full is sent
MAX_WAIT = 0.2  # seconds at most a game waits for its batch to fill


def batch_size(concurrency: int, threads: list[int]) -> int:
    """Games per Dask task, for workers with these numbers of threads: the games
    in flight spread over `BATCHES_PER_WORKER` tasks per worker (fewer on a
    worker with fewer threads), so that every worker gets work and a task
    costs its scheduling once for several games."""
    tasks = sum(min(BATCHES_PER_WORKER, max(1, n)) for n in threads)
    return max(1, min(MAX_BATCH, concurrency // max(1, tasks)))


class DaskExecutor:
    """Games submitted to a Dask scheduler, a few per task: a Dask task costs
    about 6.5 ms of CPU over every process whatever it does, so the games
    asked for together (the runner starts one as another ends, and a batch's
    games end together) go in one task, played at once by one worker. One
    coordinator thread waits per batch, not per game; each game gets its own
    result or failure."""

    def __init__(self, client: Any, concurrency: int, run_id: str) -> None:
        self.client = client
        self.concurrency = concurrency
        self.run_id = run_id
        self.in_flight: Counter[str] = Counter()
        self._pending: list[_Waiting] = []  # games asked for, not sent yet, in the order they came
        self._arrived = trio.Event()
        self.tasks_sent = 0  # Dask tasks submitted so far (each carries a batch of games)
        self._games_in: dict[str, int] = {}  # Dask key of a batch in flight -> its games
        self.worker_threads: list[int] = []  # each worker's threads, as the scheduler last said
        # A thread waits for each batch in flight: its own tokens, so that many batches (a big
        # cluster, batches of one) are not held to trio's default of 40 threads, nor starve `look`.
        self._waits = trio.CapacityLimiter(max(1, concurrency))  # a batch holds one game at least

    async def play(self, job: GameJob, part: Path | None) -> PlayedGame:
        waiting = _Waiting(job)
        self._pending.append(waiting)
        self._arrived.set()
        try:
            await waiting.ready.wait()
        finally:
            if waiting.batch is not None:
                waiting.batch.leave(job.key)
            elif waiting in self._pending:
                self._pending.remove(waiting)  # cancelled before its batch was sent
        if isinstance(waiting.result, BaseException):
            raise waiting.result
        played = waiting.result
        if part is not None:
            played.write_into(part)
        return played

    async def send_batches(self) -> None:
        """Send the games asked for in batches: full ones at once, the rest after a quiet moment."""
        async with trio.open_nursery() as batches:
            while True:
                await self._arrived.wait()
                first = trio.current_time()
                size = batch_size(self.concurrency, self.worker_threads)
                while len(self._pending) < size:
                    self._arrived = trio.Event()
                    with trio.move_on_at(min(trio.current_time() + QUIET, first + MAX_WAIT)) as quiet:
                        await self._arrived.wait()
                    if quiet.cancelled_caught:
                        break
                games, self._pending = self._pending[:size], self._pending[size:]
                self._arrived = trio.Event()
                if self._pending:
                    self._arrived.set()
                if games:
                    self.tasks_sent += 1
                    batch = _Batch(f"chicago-referee-{self.run_id}-batch{self.tasks_sent}", games)
                    batches.start_soon(self._run_batch, batch)

    async def _run_batch(self, batch: _Batch) -> None:
        """Submit one task for `batch` and hand each game its result. Every game
        of it gone (cancelled): the task is dropped (one not started never runs)."""
        from referee.tournament.worker import run_jobs

        keys = list(batch.games)
        with batch.scope:
            if not keys:
                return
            try:
                jobs = [w.job for w in batch.games.values()]
                future = self.client.submit(run_jobs, jobs, sys.executable, key=batch.key, pure=False)
            except Exception as exc:
                batch.hand_out(
                    {k: ClusterError(f"game {k} could not be sent to the Dask scheduler: {exc}") for k in keys}
                )
                return
            self._games_in[batch.key] = len(keys)
            try:
                results = await trio.to_thread.run_sync(
                    _results, future, keys, abandon_on_cancel=True, limiter=self._waits
                )
            finally:
                self._games_in.pop(batch.key, None)
                future.release()  # never blocks; a thread still waiting on it is woken
            batch.hand_out(results)

    async def watch(self, every: float = 1.0) -> None:
        """Keep `in_flight` and the workers' threads up to date."""
        while True:
            await self.look()
            await trio.sleep(every)

    async def look(self) -> None:
        """Ask the scheduler (on a thread: each question is a round trip) for its
        workers and their tasks in progress: `in_flight` counts those tasks' games."""

        def ask() -> tuple[dict[str, Any], dict[str, Any]]:
            return self.client.processing(), self.client.scheduler_info().get("workers") or {}

        try:
            processing, workers = await trio.to_thread.run_sync(ask, abandon_on_cancel=True)
        except (OSError, RuntimeError):  # a scheduler going away: the games' own waits report it
            processing, workers = {}, {}
        if workers:
            self.worker_threads = [int(info.get("nthreads", 1)) for info in workers.values()]
        names = {addr: worker_label(info.get("name", addr)) for addr, info in workers.items()}
        self.in_flight = Counter(
            {
                str(names.get(addr, addr)): sum(self._games_in.get(key, 0) for key in keys)
                for addr, keys in processing.items()
                if any(key in self._games_in for key in keys)
            }
        )


class _Waiting:
    """A game the coordinator waits for: set once its result (or failure) is here."""

    def __init__(self, job: GameJob) -> None:
        self.job = job
        self.ready = trio.Event()
        self.batch: _Batch | None = None
        self.result: PlayedGame | BaseException = RuntimeError(f"game {job.key}: no result yet")


class _Batch:
    """Games sent in one Dask task; its task is dropped when none of them waits any more."""

    def __init__(self, key: str, games: list[_Waiting]) -> None:
        self.key = key
        self.games = {w.job.key: w for w in games}
        self.scope = trio.CancelScope()
        for w in games:
            w.batch = self

    def leave(self, game: str) -> None:
        self.games.pop(game, None)
        if not self.games:
            self.scope.cancel()

    def hand_out(self, results: dict[str, PlayedGame | BaseException]) -> None:
        for key, result in results.items():
            waiting = self.games.get(key)
            if waiting is not None:
                waiting.result = result
                waiting.ready.set()


def _results(future: Any, games: list[str]) -> dict[str, PlayedGame | BaseException]:
    """Each game's result once the batch's task is done (this thread waits for it):
    a game's own failure as the worker sent it (a refusal as it is), a failure of
    the whole task in words for each of its games."""
    distributed = import_distributed()
    try:
        results = future.result()
        if not isinstance(results, list) or len(results) != len(games):  # another version of the referee there?
            got = len(results) if isinstance(results, list) else type(results).__name__
            raise TypeError(f"{len(games)} games sent, {got} results came back")
    except Exception as exc:
        if isinstance(exc, distributed.KilledWorker):
            why = (
                f"was running on {MAX_LOSSES} workers that died, in one Dask task with games "
                f"{', '.join(games)}; it was given up (a bot that kills its worker? see the workers' logs)"
            )
        elif isinstance(exc, distributed.client.FutureCancelledError):
            why = f"was cancelled by the Dask scheduler: {exc}"
        else:
            why = f"failed on a worker: {type(exc).__name__}: {exc}"
        return {key: _chained(ClusterError(f"game {key} {why}"), exc) for key in games}
    return dict(zip(games, results))


def _chained(error: ClusterError, cause: BaseException) -> ClusterError:
    error.__cause__ = cause
    return error


@asynccontextmanager
async def open_executor(
    placement: Placement, concurrency: int, run_id: str = "0", watch_games: WatchGames | None = None
) -> AsyncIterator[Executor]:
    """The executor for `placement`, with whatever it needs running (and stopped after)."""
    if placement.cluster is None:
        if placement.workers:
            async with open_pool(placement.workers) as pool:
                yield pool
        else:
            async with trio.open_nursery() as procs:
                yield LocalExecutor(procs, watch_games)
        return
    distributed = import_distributed()
    logging.getLogger("distributed").setLevel(logging.ERROR)
    client = None
    try:
        try:
            client = await trio.to_thread.run_sync(
                lambda: distributed.Client(placement.cluster, timeout="10s", set_as_default=False)
            )
        except (OSError, TimeoutError) as exc:
            raise ClusterError(
                f"--cluster {placement.cluster}: no Dask scheduler answers there ({exc}); start "
                "one with `dask scheduler` (docs/cluster.md)"
            ) from None
        executor = DaskExecutor(client, concurrency, run_id)
        await executor.look()  # the workers, before the first batch is sized
        async with trio.open_nursery() as watching:
            watching.start_soon(executor.watch)
            watching.start_soon(executor.send_batches)
            yield executor
            watching.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if client is not None:
                await trio.to_thread.run_sync(client.close)
