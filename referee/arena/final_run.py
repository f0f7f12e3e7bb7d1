"""Playing the arena's final, and saying where it stands.

The final is a `tournament` round robin (see `final`), so it is played by
`TournamentRunner` and inherits what that runner promises: each game
committed the moment it ends, a `kill -9` loses only the games in flight,
the same command resumes exactly, the seed is committed to before the first
game and revealed when the last is in. Three steps, split by where they may
run: `prepare_final` plans it and finds the builds (blocking: a thread),
`open_final` takes its locks and commits to the seed (in the Trio loop that
will play it: SQLite connections stay in their thread), `runner_for` plays.

`final_status` is what `GET /api/final` shows; `FinalHost` plays the final
inside `arena serve`, in the server's nursery, while the matchmaker waits.
"""

from __future__ import annotations

import logging
import math
import re
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from referee.arena.config import Arena, parse_arena
from referee.arena.final import (
    FINAL_DIR,
    FinalPaths,
    FinalPlan,
    FinalRefused,
    being_played,
    holding_play_lock,
    read_plan,
    settle_plan,
    tournament_of,
)
from referee.arena.store import ArenaStore
from referee.errors import RefereeError, ResultsError
from referee.play.watch import WatchGames
from referee.tournament.config import Tournament, default_concurrency
from referee.tournament.executors import Placement
from referee.tournament.run import TournamentRunner, prepare_store
from referee.tournament.schedule import ScheduledGame
from referee.tournament.standings import from_store
from referee.tournament.standings_export import to_dict
from referee.tournament.store import Store
from referee.tournament.store_rows import Commitment, GameRow

VERIFY_COMMAND = f"chicago-referee verify --db {FINAL_DIR}/tournament.db"  # in the arena's folder
_GAME_LOG = re.compile(r"^\d{5}-.+\.jsonl$")
_log = logging.getLogger("referee.arena")


def finished_commitment(paths: FinalPaths) -> Commitment | None:
    """The revealed commitment of a final that has finished, else None."""
    if not paths.db.is_file():
        return None
    with Store.open(paths.db) as store:
        sealed = store.commitment()
    return sealed if sealed is not None and sealed.revealed else None


def prepare_final(
    arena: Arena, store: ArenaStore, *, top: int | None, deal_sets: int, force: bool, now: float
) -> tuple[FinalPlan, Tournament]:
    """The final to play: the one under way (asked for as it was started), or
    a new one if none was planned. Refused if it has finished or is being
    played. Blocking."""
    paths = FinalPaths(arena.folder)
    if finished_commitment(paths) is not None:
        raise FinalRefused(
            f"the final has finished and is not played again: its results are in {paths.db} "
            f"(GET /api/final; chicago-referee standings {paths.db})"
        )
    if being_played(paths):
        raise FinalRefused("the final is being played right now (by arena serve or another arena final)")
    plan = settle_plan(arena, store, top=top, deal_sets=deal_sets, force=force, now=now)
    return plan, tournament_of(plan, arena.folder)


@dataclass
class OpenFinal:
    """A final whose seed is committed, held by this referee until `close()`."""

    paths: FinalPaths
    plan: FinalPlan
    tournament: Tournament
    store: Store
    schedule: list[ScheduledGame]
    held: ExitStack = field(repr=False)

    def close(self) -> None:
        self.held.close()


def open_final(arena_folder: Path, plan: FinalPlan, t: Tournament) -> OpenFinal:
    """Take the play lock, open (or create) the results database and commit to
    the seed (`prepare_store`): from here the commitment can be published."""
    paths = FinalPaths(arena_folder)
    held = ExitStack()
    try:
        held.enter_context(holding_play_lock(paths))
        store = held.enter_context(Store.open(paths.db, create=True, lock=True))
        logs = sorted(p.name for p in paths.logs.iterdir() if _GAME_LOG.match(p.name)) if paths.logs.is_dir() else []
        if logs and not store.finished_count():
            raise FinalRefused(
                f"{paths.db} holds no game, but {paths.logs} holds {len(logs)} finished game logs: the final's "
                "results database was lost or replaced; restore it"
            )
        schedule = prepare_store(t, store)
    except BaseException:
        held.close()
        raise
    return OpenFinal(paths, plan, t, store, schedule, held)


def final_concurrency(arena: Arena, placement: Placement) -> int:
    """Games at once: the arena's `concurrency`, else as `tournament` would choose."""
    return arena.concurrency or placement.default_concurrency() or default_concurrency()


def runner_for(
    final: OpenFinal,
    placement: Placement,
    concurrency: int,
    on_game: Callable[[GameRow], None] | None = None,
    watch_games: WatchGames | None = None,
) -> TournamentRunner:
    """The tournament's runner over the final (the sandbox gate is asked here)."""
    return TournamentRunner(
        final.tournament,
        final.store,
        final.schedule,
        log_dir=final.paths.logs,
        concurrency=concurrency,
        on_game=on_game,
        placement=placement,
        watch_games=watch_games,
    )


# ------------------------------------------------------------------ where it stands


def final_status(arena_folder: Path, standings_cache: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    """What `GET /api/final` shows (see docs/arena.md). `standings_cache` keeps
    a finished final's standings, which never change, keyed by its commitment
    and results digest. Blocking."""
    paths = FinalPaths(arena_folder)
    plan = read_plan(paths)
    if plan is None or not paths.db.is_file():
        return {"state": "none"}
    try:
        return _read_status(paths, plan, standings_cache)
    except ResultsError:
        if being_played(paths) and not _committed(paths):  # its database is being made this very moment
            return {"state": "none"}
        raise


def _committed(paths: FinalPaths) -> bool:
    """Whether the final's database holds its seed commitment (read as SQLite alone reads it)."""
    try:
        with closing(sqlite3.connect(f"{paths.db.as_uri()}?mode=ro", uri=True)) as conn:
            return conn.execute("SELECT count(*) FROM seed_commitment").fetchone()[0] > 0
    except sqlite3.Error:
        return False


def _read_status(
    paths: FinalPaths, plan: FinalPlan, standings_cache: dict[tuple[str, str], dict[str, Any]]
) -> dict[str, Any]:
    with Store.open(paths.db) as store:
        sealed = store.commitment()
        if sealed is None:  # planned, not yet committed: nothing is published
            return {"state": "none"}
        played = store.finished_count()
        info = store.tournament()
        scheduled = info.scheduled_games if info is not None else _scheduled(plan, paths.arena_folder)
        state = "done" if sealed.revealed else "running" if played else "committed"
        shown: dict[str, Any] = {
            "state": state,
            "playing": being_played(paths),
            "top": plan.top,
            "deal_sets": plan.deal_sets,
            "planned": plan.planned,
            "commitment": sealed.public(),
            "participants": [p.public() for p in plan.participants],
            "progress": {"played": played, "scheduled": scheduled},
        }
        if sealed.revealed:
            key = (sealed.commitment, sealed.results_digest or "")
            if key not in standings_cache:
                standings_cache.clear()
                standings_cache[key] = to_dict(from_store(store))
            shown["standings"] = standings_cache[key]
            shown["verify"] = {
                "command": VERIFY_COMMAND,
                "where": "in the arena's folder, or in a copy of its final/ folder with --db tournament.db",
                "commitment": f"printf %s chicago-referee-seed:{sealed.seed}:{sealed.salt} | sha256sum",
            }
    return shown


def _scheduled(plan: FinalPlan, arena_folder: Path) -> int:
    seats = parse_arena(plan.arena_config, arena_folder).table_size
    return math.comb(len(plan.participants), seats) * seats * plan.deal_sets


# ------------------------------------------------------------------ inside `arena serve`


class FinalHost:
    """Starts the final inside `arena serve` and plays it in the server's
    nursery. While it plays (here, or by `arena final` in another process),
    `pauses_matchmaking` is true: no new unit starts, and the final's games
    begin once the running units have ended, so they get the machine."""

    def __init__(
        self,
        arena: Arena,
        store: ArenaStore,
        placement: Placement,
        *,
        slots: Callable[[], int],
        units_done: Callable[[], Awaitable[None]],
        on_end: Callable[[], None],
        watch_games: WatchGames | None = None,
    ) -> None:
        self.arena = arena
        self.watch_games = watch_games  # the live dashboard's hook, when the server has one
        self.store = store
        self.placement = placement
        self.paths = FinalPaths(arena.folder)
        self.slots = slots
        self.units_done = units_done
        self.on_end = on_end
        self.nursery: trio.Nursery | None = None  # the server's, once it runs
        self.playing = False
        self.error: str | None = None  # why the last final played here stopped short
        self._starting = False

    def pauses_matchmaking(self) -> bool:
        return self.playing or self._starting or being_played(self.paths)

    async def start(self, *, top: int | None, deal_sets: int, force: bool, now: float) -> None:
        """Plan (or resume) the final and commit to its seed, then play it in
        the background; FinalRefused (nothing started) if it may not."""
        if self.nursery is None:
            raise FinalRefused("the final starts inside a running arena serve", status=503)
        if self.playing or self._starting:
            raise FinalRefused("the final is being played right now; GET /api/final shows how far it is")
        self._starting = True
        try:
            plan, t = await trio.to_thread.run_sync(
                partial(prepare_final, self.arena, self.store, top=top, deal_sets=deal_sets, force=force, now=now)
            )
            final = open_final(self.arena.folder, plan, t)
            try:
                runner = runner_for(final, self.placement, self.slots(), watch_games=self.watch_games)
            except BaseException:
                final.close()
                raise
        finally:
            self._starting = False
        self.playing, self.error = True, None
        self.nursery.start_soon(self._play, final, runner)

    async def _play(self, final: OpenFinal, runner: TournamentRunner) -> None:
        try:
            await self.units_done()  # the units under way end first (a unit is short)
            outcome = await runner.run()
            if outcome.status != "completed":
                self.error = f"the final {outcome.status}: {outcome.remaining} games left; start it again to resume"
        except RefereeError as exc:  # its results database changed under it, a disk that failed: said, not fatal
            self.error = str(exc)
            _log.error("the final stopped: %s", exc)
        finally:
            final.close()
            self.playing = False
            self.on_end()
