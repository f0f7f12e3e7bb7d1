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
  on any number of machines (docs/cluster.md).

Cluster games come back as a `PlayedGame` with the log compressed. When a
worker dies (pool or cluster), its games are played again on another
worker; a game is recorded once whatever happens, since the runner keeps the
first result per game key. Dask is an optional extra, imported only here and
only for `--cluster`.
"""

from __future__ import annotations

import logging
import math
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import trio

from referee.errors import ClusterError, ConfigError, RefereeError
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
        local worker; 64 on a cluster, whose workers' threads bound what runs (0: none)."""
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


class DaskExecutor:
    """Games submitted to a Dask scheduler. No thread waits for a game: Dask
    tells the loop when a game's task is done, and one collector fetches the
    results of every task done by then in one `gather` (a batch, on a thread)."""

    def __init__(self, client: Any, concurrency: int, run_id: str) -> None:
        self.client = client
        self.run_id = run_id
        self.in_flight: Counter[str] = Counter()
        self._done_send, self._done = trio.open_memory_channel[Any](math.inf)
        self._waiting: dict[str, _Waiting] = {}

    async def play(self, job: GameJob, part: Path | None) -> PlayedGame:
        from referee.tournament.worker import run_job

        key = f"chicago-referee-{self.run_id}-{job.key}"
        waiting = self._waiting[key] = _Waiting(job.key)
        future = self.client.submit(run_job, job, sys.executable, key=key, pure=False)
        token = trio.lowlevel.current_trio_token()

        def done(fut: Any) -> None:  # on Dask's callback thread
            try:
                token.run_sync_soon(self._done_send.send_nowait, fut)
            except trio.RunFinishedError:
                pass  # the run is over: nobody waits for this game

        try:
            future.add_done_callback(done)
            await waiting.ready.wait()
        finally:
            self._waiting.pop(key, None)
            # Never blocks; the scheduler forgets the task (one not started yet never runs).
            future.release()
        if isinstance(waiting.result, BaseException):
            raise waiting.result
        played = waiting.result
        if part is not None:
            played.write_into(part)
        return played

    async def collect(self) -> None:
        """Hand each finished game its result, fetching all finished by then at once."""
        async for first in self._done:
            batch = [first]
            while True:
                try:
                    batch.append(self._done.receive_nowait())
                except trio.WouldBlock:
                    break
            batch = [f for f in batch if f.key in self._waiting]
            if not batch:
                continue
            games = {f.key: self._waiting[f.key].game for f in batch}
            results = await trio.to_thread.run_sync(_results, self.client, batch, games, abandon_on_cancel=True)
            for key, result in results.items():
                waiting = self._waiting.get(key)
                if waiting is not None:
                    waiting.result = result
                    waiting.ready.set()

    async def watch(self, every: float = 1.0) -> None:
        """Keep `in_flight` up to date: the scheduler's tasks in progress per worker."""
        while True:
            try:
                processing = await trio.to_thread.run_sync(self.client.processing, abandon_on_cancel=True)
            except (OSError, RuntimeError):  # a scheduler going away: the games' own waits report it
                processing = {}
            names = {
                addr: worker_label(info.get("name", addr))
                for addr, info in (self.client.scheduler_info().get("workers") or {}).items()
            }
            self.in_flight = Counter(
                {str(names.get(addr, addr)): len(keys) for addr, keys in processing.items() if keys}
            )
            await trio.sleep(every)


class _Waiting:
    """A game the coordinator waits for: set once its result (or failure) is here."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.ready = trio.Event()
        self.result: PlayedGame | BaseException = RuntimeError(f"game {game}: no result yet")


def _results(client: Any, futures: list[Any], games: dict[str, str]) -> dict[str, PlayedGame | BaseException]:
    """The finished games' results, in one `gather` for those that succeeded;
    a game that failed (or whose result went missing) alone, as `_result` says."""
    ok = [f for f in futures if f.status == "finished"]
    out: dict[str, PlayedGame | BaseException] = {}
    if ok:
        try:
            for f, played in zip(ok, client.gather(ok)):
                out[f.key] = played
        except Exception:  # one result lost on the way: each is asked for alone below
            out.clear()
    for f in futures:
        if f.key not in out:
            try:
                out[f.key] = _result(f, games[f.key])
            except Exception as exc:
                out[f.key] = exc
    return out


def _result(future: Any, key: str) -> PlayedGame:
    """A game's result; Dask's failures in words (a refusal by a worker comes through as it is)."""
    distributed = import_distributed()
    try:
        return future.result()
    except RefereeError:
        raise
    except distributed.client.FutureCancelledError as exc:
        raise ClusterError(f"game {key} was cancelled by the Dask scheduler: {exc}") from exc
    except distributed.KilledWorker as exc:
        raise ClusterError(
            f"game {key} was running on {MAX_LOSSES} workers that died; it was given up "
            "(a bot that kills its worker? see the workers' logs)"
        ) from exc
    except Exception as exc:
        raise ClusterError(f"game {key} failed on a worker: {type(exc).__name__}: {exc}") from exc


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
        async with trio.open_nursery() as watching:
            watching.start_soon(executor.watch)
            watching.start_soon(executor.collect)
            yield executor
            watching.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if client is not None:
                await trio.to_thread.run_sync(client.close)
