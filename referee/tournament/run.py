"""Running a tournament: every scheduled game not yet in the results store,
concurrently, each one committed the moment it finishes.

* Each game starts its own bot processes (one per seat) inside the
  tournament's process nursery, plays, and closes them; at most
  `concurrency` games run at once (a `trio.CapacityLimiter`, FIFO, so games
  start in schedule order).
* A finished game's log is written as `NAME.jsonl.part` and renamed to
  `NAME.jsonl` when the game ends; then its row is committed. A game that
  has not finished is never recorded, so resuming plays it again, from the
  same seed, with the same game id.
* `stop()` starts no new game and lets the running ones finish; `abort()`
  cancels the running games (their bot process groups are killed, nothing
  of them is recorded). `handle_signals` maps Ctrl-C to stop, a second
  Ctrl-C (or SIGTERM) to abort.
* Before anything runs, `prepare_store` refuses a config that would change
  a finished game (see `resume.check_unchanged`).
* Where games are played is the executor's business (`executors.py`: in
  this process, on `--workers N` local processes, or on a Dask `--cluster`);
  whichever plays, this runner alone writes the database, and records the
  first result of a game key only.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import trio

from referee.errors import ConfigError, RefereeError, ResultsError
from referee.play.game_spec import GameRecord
from referee.play.watch import WatchGames
from referee.seats.bot_command import BotSpec, check_runnable
from referee.seats.isolation import require_isolation
from referee.tournament.audit import file_sha256, result_record, results_digest
from referee.tournament.bot_files import files_digest
from referee.tournament.config import Tournament
from referee.tournament.executors import Executor, Placement, open_executor
from referee.tournament.game_job import GameJob
from referee.tournament.resume import check_unchanged, fingerprint, game_spec, spec_hash
from referee.tournament.schedule import ScheduledGame, schedule_for
from referee.tournament.store import Store
from referee.tournament.store_rows import Commitment, FailureRow, GameRow

Status = Literal["completed", "stopped", "aborted", "error"]


# ------------------------------------------------------------------ the store, before the run


def prepare_store(t: Tournament, store: Store, schedule: list[ScheduledGame] | None = None) -> list[ScheduledGame]:
    """Commit to the master seed, check the config against the store (see
    `check_unchanged`), record it, and return the schedule.

    The master seed is the config's, or, when the config has none, a secret
    random one drawn here; either way it is stored with a secret salt and
    their commitment (`Store.commit_seed`) and nowhere else: not on a command
    line, not in a game log. A tournament whose seed was revealed (it
    completed) takes no new games: their deals would be known in advance.
    """
    row = store.tournament()
    finished = store.spec_hashes()
    sealed = store.commitment()
    configured = sealed.seed if sealed is not None and sealed.source == "config" else None
    if sealed is None or (configured != t.seed and not finished):
        sealed = store.commit_seed(
            t.seed if t.seed is not None else secrets.randbits(63), "config" if t.seed is not None else "drawn"
        )
    schedule = schedule if schedule is not None else schedule_for(t, sealed.seed)
    if row is not None:
        check_unchanged(t, row.definition, finished, schedule)
    if sealed.revealed and any(g.key not in finished for g in schedule):
        raise ConfigError(
            f"{store.path}: this tournament completed and revealed its seed, so new games would be "
            "dealt from a known seed; start a new tournament with another --db (or --fresh)"
        )
    store.write_tournament(
        name=t.name,
        config_path=str(t.path) if t.path else None,
        config_text=t.text,
        definition=t.definition(),
        fingerprint=fingerprint(t),
        scheduled_games=len(schedule),
        bots=[(b.name, b.entry.command, b.entry.dir, b.entry.build, list(b.spec.argv)) for b in t.bots],
    )
    return schedule


# ------------------------------------------------------------------ building bots


async def build_bots(t: Tournament, notify: Callable[[str], None] | None = None) -> None:
    """Run every bot's `build` command (in its `dir`); a failure names the bot."""
    for i, b in enumerate(t.bots):
        if not b.entry.build:
            continue
        if notify is not None:
            notify(f"building {b.name}: {b.entry.build}")
        try:
            res = await trio.run_process(
                b.entry.build,
                shell=True,
                cwd=b.workdir,
                check=False,
                capture_stdout=True,
                capture_stderr=True,
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            raise RefereeError(f"bots[{i}] ({b.name}).build: cannot run {b.entry.build!r}: {exc}") from None
        if res.returncode != 0:
            tail = (res.stderr or res.stdout or b"").decode("utf-8", "replace").strip()[-1500:]
            raise RefereeError(
                f"bots[{i}] ({b.name}).build: {b.entry.build!r} failed with exit code "
                f"{res.returncode}" + (f":\n{tail}" if tail else "")
            )


def check_commands(t: Tournament) -> None:
    """Fail fast, naming the bot, when a bot's program or script is missing
    (after the builds), instead of forfeiting every one of its games."""
    for i, b in enumerate(t.bots):
        check_runnable(replace(b.spec, cwd=str(b.workdir)), f"bots[{i}] ({b.name}).command")


# ------------------------------------------------------------------ running


@dataclass
class RunOutcome:
    status: Status
    scheduled: int
    finished_before: int  # already in the store when this run started
    recorded: int  # finished and committed by this run
    seconds: float
    commitment: Commitment | None = None  # revealed when the status is "completed"

    @property
    def finished(self) -> int:
        return self.finished_before + self.recorded

    @property
    def remaining(self) -> int:
        return self.scheduled - self.finished


@dataclass
class _Counters:
    running: int = 0
    recorded: int = 0


def _only_cancelled(exc: BaseException) -> bool:
    """A trio cancellation, possibly grouped by nurseries."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(trio.Cancelled)[1] is None
    return isinstance(exc, trio.Cancelled)


class TournamentRunner:
    """Plays the games of `schedule` that `store` does not have yet."""

    def __init__(
        self,
        t: Tournament,
        store: Store,
        schedule: list[ScheduledGame] | None = None,
        *,
        log_dir: Path | None,
        concurrency: int,
        on_game: Callable[[GameRow], None] | None = None,
        on_start: Callable[[ScheduledGame], None] | None = None,
        placement: Placement | None = None,
        watch_games: WatchGames | None = None,
    ) -> None:
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.t = t
        self.store = store
        self.schedule = schedule if schedule is not None else schedule_for(t, _committed_seed(store))
        self.log_dir = log_dir
        self.concurrency = concurrency
        self.on_game = on_game
        self.on_start = on_start
        self.watch_games = watch_games  # the live stream's hook into every game
        self.specs: dict[str, BotSpec] = {b.name: b.spec for b in t.bots}
        self.notes: list[str] = []  # for the user: bots whose folder their sandbox shows as a copy
        if t.sandbox is not None:  # fail closed; no bot may see the config, the results or the logs
            hidden = tuple(str(p) for p in (t.path, store.path, log_dir) if p is not None)
            self.specs = {name: dataclasses.replace(spec, hidden=hidden) for name, spec in self.specs.items()}
            self.notes.extend(require_isolation(t.sandbox, list(self.specs.values()), hidden))
        self.placement = placement or Placement()
        self.executor: Executor | None = None
        self._bot_digests: dict[str, tuple[str, str | None]] = {}
        if self.placement.cluster:  # cluster workers check their copies against these (local ones share ours)
            for b in t.bots:
                folder = str(b.workdir) if b.entry.dir else None
                self._bot_digests[b.name] = (files_digest(b.spec.argv, str(b.workdir), folder), folder)
        self.counters = _Counters()
        self._stopping = False
        self._aborted = False
        self._scope: trio.CancelScope | None = None

    # ------------------------------------------------------------ control

    @property
    def running(self) -> int:
        return self.counters.running

    def in_flight(self) -> dict[str, int]:
        """Games running per worker (`local` when they run in this process)."""
        if self.executor is None:
            return {}
        return {name: n for name, n in sorted(self.executor.in_flight.items()) if n > 0}

    @property
    def stopping(self) -> bool:
        return self._stopping

    def stop(self) -> None:
        """Start no new game; the running ones finish and are recorded."""
        self._stopping = True

    def abort(self) -> None:
        """Cancel the running games too; they are not recorded."""
        self._stopping = True
        self._aborted = True
        if self._scope is not None:
            self._scope.cancel()

    # ------------------------------------------------------------ the run

    async def run(self) -> RunOutcome:
        t0 = time.monotonic()
        self._written = {r.key: result_record(r) for r in self.store.games()}
        self._sealed = self.store.commitment()
        done = self.store.finished_keys()
        before = len(done & {g.key for g in self.schedule})
        todo = [g for g in self.schedule if g.key not in done]
        run_id = self.store.begin_run(self.concurrency)
        self._run_id = run_id
        self._limiter = trio.CapacityLimiter(self.concurrency)
        status: Status = "aborted"
        try:
            with trio.CancelScope() as self._scope:
                if self._aborted:
                    self._scope.cancel()
                async with open_executor(
                    self.placement, self.concurrency, f"{run_id}-{secrets.token_hex(4)}", self.watch_games
                ) as ex:
                    self.executor = ex
                    async with trio.open_nursery() as games:
                        # One dispatcher, so games start in schedule order (trio does
                        # not promise FIFO wake-ups among tasks started together).
                        for g in todo:
                            await self._limiter.acquire_on_behalf_of(g.key)
                            if self._stopping:
                                self._limiter.release_on_behalf_of(g.key)
                                break
                            games.start_soon(self._play, g, name=f"game {g.key}")
            self._check_untouched()
            if not self._aborted:
                missing = len(todo) - self.counters.recorded
                status = "completed" if missing == 0 else "stopped"
            if status == "completed":
                self._sealed = self.store.reveal(results_digest(self.store.games()))
        except BaseException as exc:
            if not _only_cancelled(exc):
                status = "error"  # a bug or a broken disk: the finished games are safe anyway
            raise
        finally:
            self.store.end_run(run_id, status)  # synchronous: no cancellation can cut it short
        return RunOutcome(
            status=status,
            scheduled=len(self.schedule),
            finished_before=before,
            recorded=self.counters.recorded,
            seconds=time.monotonic() - t0,
            commitment=self._sealed,
        )

    def _check_untouched(self) -> None:
        """The database is the file this run opened and holds exactly what it
        wrote: the rows it found, the rows it added, the same commitment."""
        self.store.check_same_file()
        found = {r.key: result_record(r) for r in self.store.games()}
        changes = []
        for key, want in self._written.items():
            got = found.get(key)
            if got is None:
                changes.append(f"game {key} was deleted")
            elif got != want:
                fields = ", ".join(
                    f"{k} {json.dumps(want[k])} -> {json.dumps(got.get(k))}"
                    for k in sorted(want)
                    if got.get(k) != want[k]
                )
                changes.append(f"game {key}: {fields}")
        changes += [f"game {key} was added by someone else" for key in sorted(set(found) - set(self._written))]
        if self.store.commitment() != self._sealed:
            changes.append("the seed commitment was changed")
        if changes:
            more = f" (and {len(changes) - 3} more)" if len(changes) > 3 else ""
            raise ResultsError(
                f"{self.store.path}: the results database was changed behind the referee's back "
                f"during the run: {'; '.join(changes[:3])}{more}; the game logs hold the true "
                "results (check with chicago-referee verify --db)"
            )

    async def _play(self, g: ScheduledGame) -> None:
        """One game, holding the limiter slot the dispatcher took for it."""
        self.counters.running += 1
        try:
            await self._play_game(g)
        finally:
            self.counters.running -= 1
            self._limiter.release_on_behalf_of(g.key)

    def job_for(self, g: ScheduledGame) -> GameJob:
        """Everything a worker needs to play `g`."""
        t = self.t
        digests = tuple((name, *self._bot_digests[name]) for name in g.seats) if self._bot_digests else ()
        return GameJob(
            game=g,
            game_name=t.game.name,
            rules=t.rules,
            time_control=t.time_control,
            policy=t.policy,
            bots=tuple(self.specs[name] for name in g.seats),
            sandbox=t.sandbox,
            bot_digests=digests,
            log_name=g.log_name() if self.log_dir is not None else None,
        )

    async def _play_game(self, g: ScheduledGame) -> None:
        assert self.executor is not None
        started = time.time()
        if self.on_start is not None:
            self.on_start(g)
        final = part = None
        if self.log_dir is not None:
            final = self.log_dir / g.log_name()
            part = final.with_name(final.name + ".part")
            self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            played = await self.executor.play(self.job_for(g), part)
        except BaseException:
            if part is not None:
                part.unlink(missing_ok=True)
            raise
        if g.key in self._written:  # played twice (a worker lost and its game run again): counted once
            return
        rec = played.record
        digest = None
        if part is not None and final is not None:
            digest = file_sha256(part)
            os.replace(part, final)
            rec.log_path = str(final)
        spec_dict = game_spec(self.t, g)
        self.store.record_game(
            g, spec_dict, spec_hash(spec_dict), rec, final, started, time.time(), self._run_id, log_sha256=digest
        )
        self.counters.recorded += 1
        row = row_from_record(g, rec, self.store.rel_path(final), time.time() - started, digest)
        self._written[g.key] = result_record(row)
        if self.on_game is not None:
            self.on_game(row)


def _committed_seed(store: Store) -> int | None:
    sealed = store.commitment()
    return None if sealed is None else sealed.seed


def row_from_record(
    g: ScheduledGame, rec: GameRecord, log_path: str | None, duration: float, log_sha256: str | None = None
) -> GameRow:
    names = list(rec.seat_names)
    return GameRow(
        key=g.key,
        game_id=g.game_id,
        table=g.table,
        deal_set=g.deal_set,
        rotation=g.rotation,
        seed=g.seed,
        seats=tuple(names),
        scores=tuple(rec.scores),
        placements=tuple(rec.placements),
        forfeited=tuple(sorted(rec.forfeited)),
        winner_seat=rec.winner,
        reason=rec.reason,
        deals=rec.deals,
        decisions=rec.decisions,
        failures=tuple(FailureRow(f.seat, names[f.seat], f.reason, f.message) for f in rec.failures),
        log_path=log_path,
        duration_s=round(duration, 3),
        log_sha256=log_sha256,
    )


async def handle_signals(runner: TournamentRunner, notify: Callable[[str], None]) -> None:
    """Ctrl-C once: stop (finish running games); twice, or SIGTERM: abort them.

    Run it in a nursery next to `runner.run()` and cancel it when the run ends.
    """
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        count = 0
        async for signum in signals:
            count += 1
            if signum == signal.SIGINT and count == 1:
                runner.stop()
                notify(
                    f"stopping: no new games; waiting for the {runner.running} running game(s) to finish "
                    "(Ctrl-C again to abort them)"
                )
            elif count <= 2 or signum == signal.SIGTERM:
                notify("aborting: running games are cancelled (they will be played again on resume)")
                runner.abort()
            else:
                raise KeyboardInterrupt
