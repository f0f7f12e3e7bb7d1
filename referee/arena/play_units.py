"""Playing a unit: its games on the arena's executor, each recorded the
moment it ends, then the unit's summed scores and the online ratings, in
one transaction, so ratings never count a unit twice or half.

A unit's games are the `tournament` executors' jobs (`GameJob`): the same
clocks, sandbox and failure policy, in process or on `--workers`. Logs are
written as `.part` and renamed when whole; a game whose row is in the
database has its log under its final name.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from referee.arena.config import Arena
from referee.arena.online import Rating, UnitResult, update
from referee.arena.store import ArenaStore, now_text
from referee.arena.units import (
    Unit,
    finish_unit,
    log_name,
    record_game,
    recorded_rotations,
    save_history,
    save_ratings,
    unit_totals,
)
from referee.seats.bot_command import BotSpec
from referee.tournament.audit import file_sha256
from referee.tournament.executors import Executor
from referee.tournament.game_job import GameJob
from referee.tournament.schedule import ScheduledGame, seating

SEED_BITS = 63


def new_seed() -> int:
    """A unit's seed: secret until its games are played (its logs then show it)."""
    return secrets.randbits(SEED_BITS)


@dataclass(frozen=True)
class BuiltBot:
    """A member as games run it: its command, and the digest of its built
    folder, which a cluster worker checks its own copy against before it plays."""

    spec: BotSpec
    files_sha256: str


def unit_result(members: tuple[int, ...], totals: list[int]) -> UnitResult:
    return UnitResult(seats=tuple(str(m) for m in members), scores=tuple(float(t) for t in totals))


@dataclass
class UnitPlayer:
    """Plays units for one arena on one executor; keeps the online ratings current."""

    arena: Arena
    store: ArenaStore
    executor: Executor
    ratings: dict[str, Rating] = field(default_factory=dict)
    on_game: Callable[[int], None] = lambda _game: None
    games_played: int = 0

    @property
    def logs(self) -> Path:
        return self.arena.folder / "logs"

    async def play(self, unit: Unit, bots: dict[int, BuiltBot]) -> None:
        """Every rotation not yet recorded, at once; then the unit is closed."""
        k = len(unit.members)
        done = self.store.read(lambda c: recorded_rotations(c, unit.id))
        async with trio.open_nursery() as games:
            for rotation in range(k):
                if rotation not in done:
                    games.start_soon(self._play_game, unit, rotation, bots)
        with self.store.transaction() as conn:
            totals = unit_totals(conn, unit)
            done_order = finish_unit(conn, unit, totals, now_text())
            update(self.ratings, unit_result(unit.members, totals))
            after = {m: self.ratings[str(m)] for m in unit.members}
            save_ratings(conn, after)
            save_history(conn, done_order, after)

    def job(self, unit: Unit, rotation: int, bots: dict[int, BuiltBot]) -> tuple[GameJob, tuple[int, ...]]:
        """The game of one rotation: seats by the tournament's duplicate seating."""
        table = tuple(str(m) for m in unit.members)
        seats = seating(table, unit.id, rotation)
        seated = [bots[int(s)] for s in seats]
        names = tuple(b.spec.name for b in seated)
        game = ScheduledGame(
            key=f"u{unit.id}/r{rotation}",
            game_id=rotation + 1,
            table=table,
            deal_set=unit.id,
            rotation=rotation,
            seats=names,
            seed=unit.seed,
        )
        job = GameJob(
            game=game,
            game_name=self.arena.game.name,
            rules=self.arena.rules,
            time_control=self.arena.time_control,
            policy=self.arena.policy,
            bots=tuple(b.spec for b in seated),
            sandbox=self.arena.sandbox,
            bot_digests=tuple((b.spec.name, b.files_sha256, b.spec.cwd) for b in seated),
            log_name=log_name(unit.id, rotation),
        )
        return job, tuple(int(s) for s in seats)

    async def _play_game(self, unit: Unit, rotation: int, bots: dict[int, BuiltBot]) -> None:
        job, seats = self.job(unit, rotation, bots)
        final = self.logs / log_name(unit.id, rotation)
        part = final.with_name(final.name + ".part")
        try:
            played = await self.executor.play(job, part)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        digest = await trio.to_thread.run_sync(file_sha256, part)
        os.replace(part, final)
        with self.store.transaction() as conn:
            game = record_game(conn, unit.id, rotation, seats, played.record, digest, now_text())
        self.games_played += 1
        self.on_game(game)
