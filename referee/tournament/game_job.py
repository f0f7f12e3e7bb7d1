"""One scheduled game as a self-contained job, and playing it.

A `GameJob` holds everything a process needs to play one game of a
tournament (the game by name, rules, clocks, policy, the bots' specs and the
digests of their files) and nothing of the coordinator (no database, no
config object), so it can be pickled to a worker process or a Dask worker.
`play_job` plays it in the current Trio loop and returns a `PlayedGame`: the
record, and the log and stderr files, either already in the coordinator's
log folder (played there) or as compressed bytes to be written there.
"""

from __future__ import annotations

import os
import socket
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from protocol.messages import TimeControl
from referee.games import get_game
from referee.play.game_spec import FailurePolicy, GameRecord, GameSpec
from referee.play.handle import BotHandle
from referee.play.session import play_game
from referee.play.watch import WatchGames
from referee.seats.bot_command import BotSpec
from referee.seats.sandbox import SandboxLimits, describe
from referee.tournament.schedule import ScheduledGame

STARTS_AT_ONCE = max(2, os.cpu_count() or 1)  # bot processes starting (spawn + hello) at the same time


@dataclass(frozen=True)
class GameJob:
    """One game of a tournament, ready to play anywhere."""

    game: ScheduledGame
    game_name: str
    rules: Any
    time_control: TimeControl
    policy: FailurePolicy
    bots: tuple[BotSpec, ...]  # one per seat, in seat order
    sandbox: SandboxLimits | None
    bot_digests: tuple[tuple[str, str, str | None], ...] = ()  # (bot name, sha256 of its files, its folder)
    log_name: str | None = None  # the final log's file name, None: no log

    @property
    def key(self) -> str:
        return self.game.key


@dataclass
class PlayedGame:
    """A finished game coming back from wherever it was played."""

    record: GameRecord
    worker: dict[str, Any]
    log_zlib: bytes | None = None  # the log, compressed; None: already written at the `.part` path
    stderr_zlib: dict[str, bytes] = field(default_factory=dict)  # file name -> compressed stderr tail

    def write_into(self, part: Path) -> None:
        """Put a shipped log at `part` and its stderr files beside it (final names)."""
        if self.log_zlib is not None:
            part.write_bytes(zlib.decompress(self.log_zlib))
        for name, data in self.stderr_zlib.items():
            (part.parent / Path(name).name).write_bytes(zlib.decompress(data))


def worker_label(name: object) -> str:
    """A Dask worker's name as people read it: `worker1` for a numbered one, else the name (or address)."""
    text = str(name)
    return f"worker{text}" if text.isdigit() else text


def worker_info(name: str | None = None) -> dict[str, Any]:
    """Who played a game and how busy its machine was: clocks are judged there."""
    load1, load5, _ = os.getloadavg()
    return {
        "name": name or f"{socket.gethostname()}:{os.getpid()}",
        "cpus": os.cpu_count() or 1,
        "load_1m": round(load1, 2),
        "load_5m": round(load5, 2),
    }


async def play_job(
    job: GameJob,
    proc_nursery: trio.Nursery,
    start_limiter: trio.CapacityLimiter,
    part: Path | None,
    worker: dict[str, Any],
    watch_games: WatchGames | None = None,
) -> GameRecord:
    """Play `job` here, its bots in `proc_nursery`; the log goes to `part`
    (its stderr files beside it under the final log's name). Each game starts
    fresh bot processes, closed before this returns or raises (a game cut
    short kills them and leaves nothing behind: `play_game`)."""
    g = job.game
    handles = [BotHandle(spec, proc_nursery) for spec in job.bots]
    final = part.with_name(job.log_name) if part is not None and job.log_name else None
    spec = GameSpec(
        game=get_game(job.game_name),
        rules=job.rules,
        n_players=len(g.seats),
        seed=g.seed,
        game_id=g.game_id,
        time_control=job.time_control,
        policy=job.policy,
        match_seed=None,
        deal_set=g.deal_set,
        isolation=describe(job.sandbox),
        worker=worker,
    )
    watch = watch_games(spec, list(g.seats)) if watch_games is not None else None
    try:
        return await play_game(
            spec, handles, list(g.seats), log=part, stderr_beside=final, watch=watch, starts=start_limiter
        )
    finally:
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as closing:
                for h in handles:
                    closing.start_soon(h.close)


async def play_job_shipped(job: GameJob, worker: dict[str, Any], starts: trio.CapacityLimiter) -> PlayedGame:
    """Play `job` in a scratch folder and return its log and stderr compressed
    (on a worker: the coordinator writes them into its log folder); its bots
    start through `starts`, shared by the games of this loop."""
    with tempfile.TemporaryDirectory(prefix="chicago-referee-game-") as scratch:
        part = Path(scratch) / f"{job.log_name}.part" if job.log_name else None
        async with trio.open_nursery() as procs:
            rec = await play_job(job, procs, starts, part, worker)
        played = PlayedGame(record=rec, worker=worker)
        if part is not None:
            # Reading and compressing on a thread: the worker's other games keep their clocks.
            played.log_zlib, played.stderr_zlib = await trio.to_thread.run_sync(_packed, part, Path(scratch))
        rec.log_path = None  # a path on the worker means nothing to the coordinator
        return played


def _packed(log: Path, scratch: Path) -> tuple[bytes, dict[str, bytes]]:
    """A game's log and its bots' stderr files, compressed for the trip to the coordinator
    (zlib level 1: a quarter of level 6's CPU for a log half as large again)."""
    stderr = {p.name: zlib.compress(p.read_bytes(), 1) for p in scratch.iterdir() if p.name.endswith(".stderr")}
    return zlib.compress(log.read_bytes(), 1), stderr
