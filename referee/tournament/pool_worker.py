"""One worker process of the local pool behind `tournament --workers N`.

Started by the coordinator (`pool.py`) as `python -m
referee.tournament.pool_worker NAME STARTS`, it runs ONE Trio loop that plays
many games at once, exactly as the in-process executor does: one process
nursery for every bot, one limiter for bot start-ups (STARTS at once: its
share of what the machine starts at once). Jobs arrive as frames on
stdin and results leave as frames on stdout (`pool_wire.py`); stdout is
kept for frames alone (file descriptor 1 is pointed at stderr, so a stray
print cannot break the stream).

The worker plays into the coordinator's log folder (the same machine), so
nothing is compressed or shipped back but the record. Before a sandboxed
game it checks, like a Dask worker, that this process can isolate bots, and
refuses the game otherwise: no game runs with less isolation than asked for.
There is no bot-file hash check: a local worker runs the coordinator's files.

The coordinator owns the run: SIGINT is ignored here (Ctrl-C is the
coordinator's to interpret), and when stdin closes, however the coordinator
went, every game still running is cancelled, its bots killed, and the worker
says `Bye` and exits. If the worker itself is killed, its guardian kills its bots.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from pathlib import Path

import trio

from referee.errors import RefereeError, SandboxUnavailable
from referee.seats.guardian import GUARDIAN
from referee.seats.isolation import require_isolation
from referee.seats.sandbox import SandboxLimits
from referee.tournament.game_job import STARTS_AT_ONCE, play_job, worker_info
from referee.tournament.pool_wire import (
    BEAT_EVERY,
    Beat,
    Bye,
    Cancel,
    Done,
    Failed,
    FrameError,
    FrameReader,
    Play,
    Ready,
    ToWorker,
    frame,
    restore_rules,
)


class PoolWorker:
    """The games this worker is playing, and the one pipe their results share."""

    def __init__(
        self, out: trio.abc.SendStream, procs: trio.Nursery, games: trio.Nursery, starts: int = STARTS_AT_ONCE
    ) -> None:
        self.out = out
        self.procs = procs
        self.games = games
        self.start_limiter = trio.CapacityLimiter(starts)  # this worker's share of the machine's
        self.scopes: dict[int, trio.CancelScope] = {}
        self._writing = trio.StrictFIFOLock()

    async def send(self, message: Done | Failed | Ready | Beat | Bye) -> None:
        """Write one whole frame; never half of one, even when cancelled."""
        data = frame(message)
        with trio.CancelScope(shield=True):
            async with self._writing:
                try:
                    await self.out.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass  # the coordinator is gone: nobody is waiting for this result

    async def beat(self) -> None:
        """Say now and then that this loop still runs (a silent worker is taken for a hung one)."""
        while True:
            await trio.sleep(BEAT_EVERY)
            await self.send(Beat())

    def handle(self, message: ToWorker) -> None:
        if isinstance(message, Play):
            scope = trio.CancelScope()
            self.scopes[message.id] = scope
            self.games.start_soon(self.play, message, scope, name=f"game {message.job.key}")
        elif isinstance(message, Cancel):
            running = self.scopes.get(message.id)
            if running is not None:
                running.cancel()

    async def play(self, message: Play, scope: trio.CancelScope) -> None:
        """Play one game and answer `Done`, or `Failed` with one line; a
        cancelled game is not answered (the coordinator stopped waiting)."""
        try:
            with scope:
                try:
                    job = restore_rules(message.job)
                    if job.sandbox is not None:
                        check_worker_isolation(job.sandbox, message.worker)
                    info = worker_info(message.worker)
                    part = Path(message.part) if message.part is not None else None
                    rec = await play_job(job, self.procs, self.start_limiter, part, info)
                except RefereeError as exc:
                    await self.send(Failed(id=message.id, error=str(exc), refused=True))
                except Exception as exc:  # a bug: say which, and let the coordinator stop the run
                    await self.send(Failed(id=message.id, error=f"{type(exc).__name__}: {exc}", refused=False))
                else:
                    await self.send(Done(id=message.id, record=rec, worker=info))
        finally:
            self.scopes.pop(message.id, None)


def check_worker_isolation(limits: SandboxLimits | None, name: str) -> None:
    """SandboxUnavailable naming this worker if it cannot give bots the isolation asked for."""
    try:
        require_isolation(limits)
    except SandboxUnavailable as exc:
        raise SandboxUnavailable(f"worker {name} cannot isolate bots, and the tournament is sandboxed: {exc}") from None


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


async def serve(
    frames_in: trio.abc.ReceiveStream, frames_out: trio.abc.SendStream, name: str, starts: int = STARTS_AT_ONCE
) -> None:
    """Play what arrives on `frames_in` until it ends; results to `frames_out`."""
    GUARDIAN.start()  # before the first bot: if this process is killed, its bots go with it
    reader = FrameReader(frames_in, ToWorker, "the coordinator")
    broken: FrameError | None = None
    async with trio.open_nursery() as procs, trio.open_nursery() as games:
        worker = PoolWorker(frames_out, procs, games, starts)
        await worker.send(Ready(pid=os.getpid()))
        games.start_soon(worker.beat)
        try:
            while (message := await reader.receive()) is not None:
                worker.handle(message)
        except FrameError as exc:
            broken = exc
        games.cancel_scope.cancel()  # the coordinator is done, or gone: no game outlives it
    GUARDIAN.close()
    if broken is not None:
        raise broken
    await worker.send(Bye(cpu_s=_cpu(resource.RUSAGE_SELF), children_cpu_s=_cpu(resource.RUSAGE_CHILDREN)))


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else f"local-{os.getpid()}"
    starts = max(1, int(sys.argv[2])) if len(sys.argv) > 2 else STARTS_AT_ONCE  # its share of the machine's
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the coordinator decides what Ctrl-C means
    frames_in = os.dup(0)
    frames_out = os.dup(1)
    os.dup2(2, 1)  # anything else that writes to stdout lands on stderr, not in the frame stream
    try:
        trio.run(serve, trio.lowlevel.FdStream(frames_in), trio.lowlevel.FdStream(frames_out), name, starts)
    except FrameError as exc:
        os.write(2, f"{name}: {exc}\n".encode())
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
