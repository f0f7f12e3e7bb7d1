"""One game, set up and cleaned up in one place.

Every way of playing a game goes through `play_game`: a match's deal sets,
a person's table, a tournament's job (here, in a worker process or on a
Dask worker) and `check`. It starts (or checks) each seat's bot, turns a bot
that would not start into a `StartFailure` (its seat forfeits), writes the
header and the game's log, names each bot's stderr file beside the log, runs
the game, and keeps each bot's stderr of the game there. A game cut short
(cancelled: Ctrl-C, an SPRT stop, a lost worker; or failed) counts for
nothing: it leaves neither log nor stderr files, and its bots' process
groups are killed, since a bot may be in the middle of anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import trio

from protocol.messages import TimeControl
from referee.games import GAMES
from referee.games.base import GameState
from referee.logs.gamelog import GameLogWriter
from referee.logs.records import PlayerInfo
from referee.play.game_spec import GameRecord, GameSpec, StartFailure
from referee.play.handle import BotHandle
from referee.play.runner import GameRunner
from referee.play.watch import GameWatch
from referee.seats.bot_process import BotProcess, kill_group
from referee.seats.seat import Seat


async def play_game(
    spec: GameSpec,
    seats: Sequence[BotHandle | Seat],
    names: Sequence[str],
    *,
    log: Path | None = None,
    stderr_beside: Path | None = None,
    watch: GameWatch | None = None,
    starts: trio.CapacityLimiter | None = None,
    on_state: Callable[[GameState], None] | None = None,
) -> GameRecord:
    """Play one game. `seats` are bots (handles, started here if need be) or
    people (seats already there, e.g. a `HumanSeat`); the log goes to `log`,
    and each bot's stderr of the game beside `stderr_beside` (default: the
    log). `starts` bounds how many bots start at once (the startup clock runs
    from the spawn). `on_state` sees the game's state before it begins."""
    handles = [s if isinstance(s, BotHandle) else None for s in seats]
    failures = await start_bots(handles, spec.time_control, starts)
    procs: list[BotProcess | None] = [None if i in failures or h is None else h.proc for i, h in enumerate(handles)]
    stderr_at = stderr_beside or log
    for seat, proc in enumerate(procs):
        if proc is not None:
            proc.stderr_file = stderr_path(stderr_at, seat).name if stderr_at is not None else ""
    players = [
        PlayerInfo(seat=i, name=names[i], argv=list(h.spec.argv))
        if h is not None
        else PlayerInfo(seat=i, name=names[i], argv=[], human=True)
        for i, h in enumerate(handles)
    ]
    table: list[Seat | None] = [procs[i] if h is not None else _person(seats[i]) for i, h in enumerate(handles)]
    # Creating a file waits on the disk's journal (a millisecond while logs are being written back):
    # on a thread, so no other game's decision waits with it.
    writer = GameLogWriter(None) if log is None else await trio.to_thread.run_sync(GameLogWriter, log)
    runner = GameRunner(spec, table, list(names), writer, watch)
    if on_state is not None:
        on_state(runner.state)
    finished = False
    try:
        record = await runner.run(players, failures)
        finished = True
        return record
    finally:
        writer.close()
        if finished:
            if stderr_at is not None:
                save_stderr(stderr_at, procs)
        else:
            for proc in procs:  # no await below: a cancelled game cannot stop its own cleanup
                if proc is not None:
                    proc.take_game_stderr()
                    proc.stderr_file = ""
                    kill_group(proc.pid)
            discard_logs(log, len(seats), stderr_at)


async def start_bots(
    handles: Sequence[BotHandle | None], tc: TimeControl, starts: trio.CapacityLimiter | None
) -> dict[int, StartFailure]:
    """Each bot running and handshaken, all at once (at most `starts` starting
    together); the seats whose bot would not start, and why."""
    failures: dict[int, StartFailure] = {}
    games = list(GAMES)

    async def ensure(seat: int, handle: BotHandle) -> None:
        if starts is None:
            failure = await handle.ensure(tc, games)
        else:
            async with starts:
                failure = await handle.ensure(tc, games)
        if failure is not None:
            failures[seat] = failure

    async with trio.open_nursery() as nursery:
        for seat, handle in enumerate(handles):
            if handle is not None:
                nursery.start_soon(ensure, seat, handle)
    return dict(sorted(failures.items()))


def stderr_path(log_path: Path, seat: int) -> Path:
    """`game-00001.jsonl` -> `game-00001.seat0.stderr`, beside the log."""
    return log_path.with_name(f"{log_path.name.split('.')[0]}.seat{seat}.stderr")


def discard_logs(log_path: Path | str | None, n_seats: int, stderr_beside: Path | None = None) -> None:
    """Remove a game's log and stderr files: a game the results do not count."""
    if log_path is None:
        return
    Path(log_path).unlink(missing_ok=True)
    beside = stderr_beside or Path(log_path)
    for seat in range(n_seats):
        stderr_path(beside, seat).unlink(missing_ok=True)


def save_stderr(log_path: Path, procs: Sequence[BotProcess | None]) -> None:
    """Keep each seat's stderr of this game (its last 1 MB) beside the game log."""
    for seat, proc in enumerate(procs):
        if proc is not None:
            data = proc.take_game_stderr()
            proc.stderr_file = ""
            if data:
                stderr_path(log_path, seat).write_bytes(data)


def _person(seat: BotHandle | Seat) -> Seat:
    """A seat that was there already (a person), not a bot to start."""
    assert not isinstance(seat, BotHandle)
    return seat
