"""`tournament --workers N`: a pool of N worker processes on this machine.

Each worker (`pool_worker.py`) runs one Trio loop that plays many games at
once, as the in-process executor does, so the referee's own work spreads
over the cores; this process (the coordinator) only hands out jobs, takes
back records and commits them. The workers write each game's log straight
into the coordinator's log folder (the same machine): nothing is compressed,
shipped or hashed per game beyond what the in-process path does.

* A game goes to the live worker with the fewest games in flight;
  `in_flight` counts them per worker (`local-1`, `local-2`, ...) for the
  progress line and the live table.
* A worker that dies (killed, out of memory) loses nothing: once its
  process is gone (so nothing of it writes any more) its games in flight are
  played again on the others, and a replacement is started. A game that was
  on `MAX_LOSSES` workers that died is given up with a `ClusterError`.
  A worker that sends nothing for `SILENCE_LIMIT` (its loop beats every
  2 s) is taken for hung, killed, and counts as one that died.
* A worker that writes something other than whole, valid frames, or does
  not start, stops the run with a `ClusterError` naming it and its last
  stderr line: a broken worker is not a lost one.
* Closing the pool closes each worker's stdin: it cancels what it still
  plays, kills those bots, says `Bye` with the CPU it used, and exits;
  one that does not within `CLOSE_GRACE` is killed (its guardian kills its bots).
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import trio

from referee.errors import ClusterError
from referee.tournament.game_job import STARTS_AT_ONCE, GameJob, PlayedGame
from referee.tournament.pool_wire import (
    Bye,
    Cancel,
    Done,
    Failed,
    FrameError,
    FrameReader,
    FromWorker,
    Play,
    Ready,
    frame,
)

WORKER_COMMAND = (sys.executable, "-m", "referee.tournament.pool_worker")
MAX_LOSSES = 3  # a game that took down this many workers is given up (as with Dask's allowed failures)
START_LIMIT = 60.0  # seconds for a new worker to say it is ready
SILENCE_LIMIT = 60.0  # seconds without a frame (it beats every 2 s) after which a worker counts as hung
CLOSE_GRACE = 10.0  # seconds for a closing worker to cancel its games and exit
STDERR_TAIL = 4096


class WorkerLost(Exception):
    """A worker process died with games in flight (internal: its games are played again)."""


class _Answer:
    """The one answer a game waits for: `Done`, `Failed`, or the loss of its worker."""

    def __init__(self) -> None:
        self.event = trio.Event()
        self.value: Done | Failed | BaseException | None = None

    def set(self, value: Done | Failed | BaseException) -> None:
        if not self.event.is_set():
            self.value = value
            self.event.set()


async def _kill(process: trio.Process) -> None:
    """Cancellation of a worker's process task: kill it; its guardian kills its bots."""
    try:
        os.kill(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class _Worker:
    """One worker process: its pipes, the games it plays, why it went."""

    def __init__(self, name: str, process: trio.Process) -> None:
        self.name = name
        self.process = process
        self.pending: dict[int, _Answer] = {}
        self.outbox, self._queued = trio.open_memory_channel[bytes](float("inf"))
        self.ready = False  # it said so
        self.settled = trio.Event()  # it said it is ready, or it is gone
        self.gone = trio.Event()  # the process has exited and its stdout is read to the end
        self.lost: str | None = None  # why it went, if it did not go because it was closed
        self.broken: ClusterError | None = None  # it wrote garbage: the run stops
        self.bye: Bye | None = None
        self.closing = False
        self.stderr = bytearray()
        self.stderr_read = trio.Event()

    @property
    def alive(self) -> bool:
        return self.lost is None and self.broken is None and not self.closing and not self.gone.is_set()

    def last_words(self) -> str:
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"; its last words: {lines[-1][-300:]}" if lines else ""

    async def write(self) -> None:
        """Send the queued frames to the worker, in order, whole; then close its stdin."""
        assert self.process.stdin is not None
        try:
            async for data in self._queued:
                await self.process.stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # it died: its reader and its exit say so
        finally:
            with trio.CancelScope(shield=True):
                await self.process.stdin.aclose()

    async def drain_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            async for chunk in self.process.stderr:
                self.stderr += chunk
                del self.stderr[:-STDERR_TAIL]
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            self.stderr_read.set()

    async def read(self) -> None:
        """Take frames until the worker's stdout ends; then wait for its exit and
        answer every game still waiting (played again elsewhere, or a broken run)."""
        assert self.process.stdout is not None
        reader = FrameReader(self.process.stdout, FromWorker, f"worker {self.name}")
        hung = False
        try:
            while True:
                with trio.move_on_after(SILENCE_LIMIT) as silence:
                    message = await reader.receive()
                if silence.cancelled_caught:
                    hung = True
                    break
                if message is None:
                    break
                self._take(message)
        except FrameError as exc:
            self.broken = ClusterError(f"{exc}; the run stops (the games finished so far are kept)")
        if self.broken is not None or not self.closing:
            await _kill(self.process)  # a broken worker may still be writing logs: make sure it is not
        with trio.CancelScope(shield=True):
            code = await self.process.wait()
            with trio.move_on_after(1.0):  # its last stderr lines explain a death
                await self.stderr_read.wait()
        if hung and not self.closing:
            self.lost = f"worker {self.name} sent nothing for {SILENCE_LIMIT:g} s (hung?) and was killed"
        elif self.broken is None and not self.closing:
            how = f"killed by signal {-code} ({signal.strsignal(-code)})" if code < 0 else f"exit code {code}"
            self.lost = f"worker {self.name} died ({how})"
        self.gone.set()
        self.settled.set()
        why = self.broken or WorkerLost(f"{self.lost or f'worker {self.name} was closed'}{self.last_words()}")
        for answer in list(self.pending.values()):
            answer.set(why)

    def _take(self, message: Any) -> None:
        if isinstance(message, Ready):
            self.ready = True
            self.settled.set()
        elif isinstance(message, (Done, Failed)):
            answer = self.pending.get(message.id)
            if answer is not None:  # else: a game cancelled here that finished there anyway
                answer.set(message)
        elif isinstance(message, Bye):
            self.bye = message

    def send(self, message: Play | Cancel) -> None:
        try:
            self.outbox.send_nowait(frame(message))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # closing, or gone: the reader answers its games

    def close(self) -> None:
        """Close its stdin: the worker cancels what it plays and exits."""
        self.closing = True
        self.outbox.close()


class LocalPool:
    """Plays games on worker processes of this machine, spread by load."""

    def __init__(self, nursery: trio.Nursery, size: int, command: Sequence[str] | None = None) -> None:
        """`nursery` runs the workers and their pipes' tasks; `close` must run before it is cancelled."""
        if size < 1:
            raise ClusterError(f"a pool needs at least one worker, got {size}")
        self.nursery = nursery
        self.size = size
        self.command = tuple(command or WORKER_COMMAND)
        # The machine's bot start-ups at once, shared out: N workers each
        # starting STARTS_AT_ONCE bots would start N times as many as one
        # process does, and start-ups that outnumber the cores cost more CPU each.
        self.starts = max(1, STARTS_AT_ONCE // size)
        self.workers: list[_Worker] = []
        self.in_flight: Counter[str] = Counter()
        self.cpu: dict[str, Bye] = {}  # what each closed worker used (for benchmarks)
        self._numbers = itertools.count(1)
        self._ids = itertools.count(1)
        self._starting = trio.Lock()

    async def _start_worker(self) -> _Worker:
        name = f"local-{next(self._numbers)}"
        try:
            process: trio.Process = await self.nursery.start(
                partial(
                    trio.run_process,
                    [*self.command, name, str(self.starts)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    check=False,
                    start_new_session=True,
                    deliver_cancel=_kill,
                )
            )
        except OSError as exc:
            raise ClusterError(f"cannot start worker {name} ({' '.join(self.command)}): {exc}") from None
        worker = _Worker(name, process)
        self.workers.append(worker)
        self.nursery.start_soon(worker.write)
        self.nursery.start_soon(worker.drain_stderr)
        self.nursery.start_soon(worker.read)
        with trio.move_on_after(START_LIMIT):
            await worker.settled.wait()
        if not worker.ready:
            what = worker.broken or worker.lost or f"did not say it was ready within {START_LIMIT:g} s"
            if not worker.gone.is_set():
                worker.close()
                await _kill(process)
            raise ClusterError(f"worker {name} did not start: {what}{worker.last_words()}")
        return worker

    async def start(self) -> None:
        """Start all `size` workers, at the same time."""
        async with trio.open_nursery() as starting:
            for _ in range(self.size):
                starting.start_soon(self._start_worker)

    async def _pick(self) -> _Worker:
        """The live worker with the fewest games in flight, replacing the lost ones first."""
        for w in self.workers:
            if w.broken is not None:
                raise w.broken
        if sum(w.alive for w in self.workers) < self.size:
            async with self._starting:
                while sum(w.alive for w in self.workers) < self.size:
                    await self._start_worker()
        return min((w for w in self.workers if w.alive), key=lambda w: len(w.pending))

    async def play(self, job: GameJob, part: Path | None) -> PlayedGame:
        losses: list[str] = []
        while True:
            worker = await self._pick()
            try:
                return await self._play_on(worker, job, part)
            except WorkerLost as exc:
                losses.append(str(exc))
                if len(losses) >= MAX_LOSSES:
                    raise ClusterError(
                        f"game {job.key} was running on {MAX_LOSSES} worker processes that died; it "
                        f"was given up (a bot that kills its worker?): {'; '.join(losses)}"
                    ) from None

    async def _play_on(self, worker: _Worker, job: GameJob, part: Path | None) -> PlayedGame:
        game_id = next(self._ids)
        answer = _Answer()
        worker.pending[game_id] = answer
        self.in_flight[worker.name] += 1
        try:
            worker.send(Play(id=game_id, job=job, part=str(part) if part is not None else None, worker=worker.name))
            await answer.event.wait()
        finally:
            del worker.pending[game_id]
            self.in_flight[worker.name] -= 1
            if not answer.event.is_set():  # cancelled here: stop it there (its bots with it)
                worker.send(Cancel(id=game_id))
        result = answer.value
        if isinstance(result, BaseException):
            raise result
        if isinstance(result, Failed):
            raise ClusterError(
                result.error if result.refused else f"game {job.key} failed on worker {worker.name}: {result.error}"
            )
        assert isinstance(result, Done)
        return PlayedGame(record=result.record, worker=result.worker)

    async def close(self) -> None:
        """Close every worker and wait for it to go (killing the ones that linger)."""
        for w in self.workers:
            if not w.gone.is_set():
                w.close()
        with trio.move_on_after(CLOSE_GRACE):
            for w in self.workers:
                await w.gone.wait()
        for w in self.workers:
            if not w.gone.is_set():
                await _kill(w.process)
        for w in self.workers:
            await w.gone.wait()
            if w.bye is not None:
                self.cpu[w.name] = w.bye


async def _shielded_nursery(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """A nursery that outer cancellation does not reach (only its own scope's
    `cancel`): an aborted run still needs the workers' pipes to close them."""
    with trio.CancelScope(shield=True) as scope:
        async with trio.open_nursery() as services:
            task_status.started((services, scope))
            await trio.sleep_forever()


@asynccontextmanager
async def open_pool(size: int, command: Sequence[str] | None = None) -> AsyncIterator[LocalPool]:
    """A started pool of `size` workers, closed (every worker gone) on the way out."""
    async with trio.open_nursery() as nursery:
        services, scope = await nursery.start(_shielded_nursery)
        pool = LocalPool(services, size, command)
        try:
            await pool.start()
            yield pool
        finally:
            with trio.CancelScope(shield=True):
                await pool.close()
            scope.cancel()
