"""`arena serve`: the arena running, in one Trio loop.

Four things run side by side until Ctrl-C: the HTTP API, the pipeline
(builds and the gate), the matchmaker (which fills every free game slot with
a unit) and the units themselves on the tournament executors. Starting
again resumes: a build or check that was running runs again, a unit that
was running is played again from its seed (its recorded games kept), and
the online ratings are replayed from the recorded units, so they equal
those before the stop. An admin may start the final tournament here
(`final_run.FinalHost`, in the same nursery); while it plays, the
matchmaker starts no unit. The host's switches are in the database
(`controls`): while matchmaking is paused no unit starts either (running
ones, and those a restart finds running, finish), and the API wakes the
matchmaker when a switch or the field changes.
"""

from __future__ import annotations

import logging
import random
import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

from referee.arena.api import make_app
from referee.arena.board import names
from referee.arena.build_sandbox import free_bytes
from referee.arena.builds import build, recorded_build, run_spec
from referee.arena.config import Arena
from referee.arena.controls import matchmaking_paused, read_controls
from referee.arena.final_run import FinalHost
from referee.arena.matchmaking import Entrant, Ledger, MatchmakingPolicy, next_unit
from referee.arena.online import Rating, update
from referee.arena.pipeline import Pipeline
from referee.arena.play_units import BuiltBot, UnitPlayer, new_seed, unit_result
from referee.arena.refit import REFIT_EVERY_S, fit_active, save_fit
from referee.arena.store import ArenaStore, now_text
from referee.arena.submissions import Submission, get_submission, requeue_unfinished, versions_in_play
from referee.arena.units import (
    Unit,
    done_units,
    running_units,
    save_history,
    save_ratings,
    start_unit,
    unit_starts,
)
from referee.errors import ConfigError, ResultsError
from referee.play.watch import WatchGames
from referee.tournament.config import default_concurrency
from referee.tournament.executors import Placement, open_executor

# What the server answers HTTP with: the API alone, or the web site around it (`referee.web`, above this wing).
SiteFactory = Callable[[Arena, ArenaStore, Callable[[], None], FinalHost], Any]
DISK_FLOOR_BYTES = 64 << 20  # the server stops before its disk is this full
DISK_POLL_S = 2.0
IDLE_POLL_S = 1.0  # how often an idle matchmaker looks again (new versions also wake it at once)
REFIT_POLL_S = 5.0  # how often the refitter looks for new units


@dataclass
class Status:
    """What the progress line says."""

    queued: int = 0
    building: int = 0
    checking: int = 0
    units_running: int = 0
    games_played: int = 0
    leader: str = ""
    paused: bool = False  # matchmaking, by the host
    submissions_closed: bool = False


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


class ArenaServer:
    """One arena, served."""

    def __init__(
        self,
        arena: Arena,
        store: ArenaStore,
        placement: Placement,
        policy: MatchmakingPolicy,
        site: SiteFactory = make_app,
        watch_games: WatchGames | None = None,
        watch_final: WatchGames | None = None,
    ) -> None:
        self.arena = arena
        self.watch_games = watch_games  # the live dashboard's hooks into games played in this process (and the final's)
        self.site = site
        self.store = store
        self.placement = placement
        self.policy = policy
        self.rng = random.Random()
        self.ledger = Ledger(policy.window_seconds)
        self.ratings: dict[str, Rating] = {}
        self.playing: set[int] = set()
        self.units_in_play: set[int] = set()
        self.changed = trio.Event()
        self.unit_ended = trio.Event()
        self.pipeline = Pipeline(arena, store, on_active=lambda _sub: self._wake())
        self.player: UnitPlayer | None = None
        self.final = FinalHost(
            arena,
            store,
            placement,
            slots=lambda: self.unit_capacity() * arena.table_size,
            units_done=self._units_done,
            on_end=self._wake,
            watch_games=watch_final,
        )

    def _wake(self) -> None:
        self.changed.set()

    @property
    def units_running(self) -> int:
        return len(self.units_in_play)

    def unit_running(self, unit_id: int) -> bool:
        """Whether a unit still plays here (its games' cards stay hidden until it does not)."""
        return unit_id in self.units_in_play

    async def _units_done(self) -> None:
        """Return once no unit is running (the final waits for the units under way)."""
        while self.units_running:
            self.unit_ended = trio.Event()
            await self.unit_ended.wait()

    def _changed(self) -> None:
        """A submission arrived, or the host or an owner changed who plays: the pipeline and the matchmaker look."""
        self.pipeline.poke()
        self._wake()

    # ------------------------------------------------------------ start-up

    def resume(self) -> list[Unit]:
        """Put back what a stop cut short; returns the units to play again."""
        with self.store.transaction() as conn:
            requeue_unfinished(conn, now_text())
            self.ratings = {}
            conn.execute("DELETE FROM rating_history")  # rebuilt below, so it always agrees with the units
            for done_order, (_id, members, totals) in enumerate(done_units(conn), start=1):
                update(self.ratings, unit_result(members, totals))
                save_history(conn, done_order, {m: self.ratings[str(m)] for m in members})
            save_ratings(conn, {int(k): r for k, r in self.ratings.items()})
            for members, started in unit_starts(conn):
                self.ledger.record([str(m) for m in members], started)
            return running_units(conn)

    def unit_capacity(self) -> int:
        """Units at once: each plays its rotations together, one game slot each."""
        slots = self.arena.concurrency or (
            self.placement.default_concurrency()
            if self.placement.workers or self.placement.cluster
            else default_concurrency()
        )
        return max(1, slots // self.arena.table_size)

    # ------------------------------------------------------------ running

    async def run(self, host: str, port: int, on_url: Callable[[str], None]) -> None:
        stale = self.resume()
        run_id = f"arena-{secrets.token_hex(4)}"  # a cluster's task keys: unique to this serve
        slots = self.unit_capacity() * self.arena.table_size
        async with open_executor(self.placement, slots, run_id, self.watch_games) as executor:
            self.player = UnitPlayer(self.arena, self.store, executor, self.ratings)
            async with trio.open_nursery() as nursery:
                self.final.nursery = nursery
                app = self.site(self.arena, self.store, self._changed, self.final)  # the final plays here
                await _start_http(nursery, app, host, port, on_url)
                nursery.start_soon(watch_disk, self.arena.folder)
                nursery.start_soon(self.pipeline.run)
                nursery.start_soon(self._refit)
                for unit in stale:
                    await self._start_unit(nursery, unit)
                await self._matchmake(nursery)

    async def _refit(self) -> None:
        """The MLE Elo over the closed units when there are new ones, or when the
        versions in play change (a new version, a disqualification): at most
        once a minute, and as soon as a first fit is possible."""
        fitted: tuple[int, tuple[int, ...]] | None = None
        fitted_at, rated = -REFIT_EVERY_S, False
        while True:
            closed = self.store.read(lambda c: c.execute("SELECT count(*) FROM units WHERE status = 'done'").fetchone())
            state = (closed[0], tuple(s.id for s in self.store.read(versions_in_play)))
            due = not rated or time.monotonic() - fitted_at >= REFIT_EVERY_S
            if state != fitted and due:
                fit = await trio.to_thread.run_sync(self.store.read, fit_active)
                with self.store.transaction() as conn:
                    save_fit(conn, fit, now_text())
                fitted, fitted_at, rated = state, time.monotonic(), bool(fit.elo)
            await trio.sleep(REFIT_POLL_S)

    async def _matchmake(self, nursery: trio.Nursery) -> None:
        while True:
            started = False
            paused = self.final.pauses_matchmaking() or self.store.read(matchmaking_paused)
            if self.units_running < self.unit_capacity() and not paused:
                seats = next_unit(
                    self._entrants(), self.arena.table_size, self.policy, self.rng, time.time(), self.ledger
                )
                if seats is not None:
                    members = tuple(int(s) for s in seats)
                    now = time.time()
                    with self.store.transaction() as conn:
                        unit = start_unit(conn, members, new_seed(), now_text(), now)
                    self.ledger.record(seats, now)
                    await self._start_unit(nursery, unit)
                    started = True
            if not started:
                with trio.move_on_after(IDLE_POLL_S):
                    await self.changed.wait()
                self.changed = trio.Event()

    def _entrants(self) -> list[Entrant]:
        active: list[Submission] = self.store.read(versions_in_play)
        out = []
        for sub in active:
            r = self.ratings.get(str(sub.id), Rating())
            since = _epoch(sub.active_since or sub.updated)
            out.append(Entrant(str(sub.id), r.mu, r.sigma, since, playing=sub.id in self.playing))
        return out

    async def _start_unit(self, nursery: trio.Nursery, unit: Unit) -> None:
        bots = await self._built(unit.members)
        self.playing.update(unit.members)
        self.units_in_play.add(unit.id)
        nursery.start_soon(self._play, unit, bots)

    async def _play(self, unit: Unit, bots: dict[int, BuiltBot]) -> None:
        assert self.player is not None
        try:
            await self.player.play(unit, bots)
        finally:
            self.playing.difference_update(unit.members)
            self.units_in_play.discard(unit.id)
            self.unit_ended.set()
            self._wake()

    async def _built(self, members: tuple[int, ...]) -> dict[int, BuiltBot]:
        """How to run each member: its recorded build (never built again to play)."""
        bots = {}
        for m in members:
            sub: Submission = self.store.read(partial(_submission, m))
            built = recorded_build(self.arena.folder, sub.sha256)
            if built is None:  # its record lost: build again (the same source gives the same bot)
                built = await trio.to_thread.run_sync(
                    build,
                    self.arena.folder / "archives" / sub.sha256,
                    sub.sha256,
                    self.arena.folder,
                    self.arena.builds,
                    self.arena.archives,
                )
            spec = run_spec(built, f"{sub.bot}.v{sub.version}", self.arena.sandbox)
            assert built.files_sha256 is not None  # run_spec refuses a build without a folder
            bots[m] = BuiltBot(spec, built.files_sha256)
        return bots

    def status(self) -> Status:
        counts = dict(
            self.store.read(
                lambda c: c.execute(
                    "SELECT status, count(*) FROM submissions WHERE status IN ('queued', 'building', 'checking')"
                    " GROUP BY status"
                ).fetchall()
            )
        )
        leader = ""
        active = {str(s.id) for s in self.store.read(versions_in_play)}
        rated = [(k, r) for k, r in self.ratings.items() if k in active]
        if rated:
            best = int(max(rated, key=lambda kv: kv[1].ordinal)[0])
            leader = self.store.read(lambda c: names(c, [best])).get(best, "")
        controls = self.store.read(lambda c: read_controls(c, self.arena.submissions_close))
        return Status(
            queued=counts.get("queued", 0),
            building=counts.get("building", 0),
            checking=counts.get("checking", 0),
            units_running=self.units_running,
            games_played=self.player.games_played if self.player else 0,
            leader=leader,
            paused=controls.paused,
            submissions_closed=controls.closed(time.time()),
        )


async def watch_disk(folder: Path, floor: int = DISK_FLOOR_BYTES, every: float = DISK_POLL_S) -> None:
    """Stop the arena, in one line, while its disk still has room: a game's log,
    a build or an upload cut short by a full disk would be lost work."""
    while True:
        free = await trio.to_thread.run_sync(free_bytes, folder)
        if free < floor:
            raise ResultsError(
                f"{folder}: {free >> 20} MiB free on the arena's disk, under the {floor >> 20} MiB it keeps: stopped "
                "before anything is lost; free space and run `arena serve` again (it resumes)"
            )
        await trio.sleep(every)


def _submission(submission: int, conn: sqlite3.Connection) -> Submission:
    return get_submission(conn, submission)


async def _start_http(nursery: trio.Nursery, app: object, host: str, port: int, on_url: Callable[[str], None]) -> None:
    config = Config()
    where = f"[{host}]" if ":" in host and not host.startswith("[") else host
    config.bind = [f"{where}:{port}"]
    config.accesslog = None  # a request line could carry what a user typed: nothing is logged per request
    config.errorlog = logging.getLogger("referee.arena")
    config.graceful_timeout = 1.0
    try:
        binds: list[str] = await nursery.start(partial(hypercorn_serve, app, config))  # type: ignore[arg-type]
    except OSError as exc:
        raise ConfigError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc}; choose another --host or --port"
        ) from exc
    on_url(next((b for b in binds if b.startswith("http://")), binds[0]))
