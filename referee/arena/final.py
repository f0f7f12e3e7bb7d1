"""The arena's final tournament: who plays it, on what, and where it lives.

When submissions close, the host plays a final nobody can dispute: the
active versions of the leaderboard's top N bots meet in a complete round
robin, played by `tournament`'s own runner with a fresh secret seed that is
committed to before the first game and revealed with its salt at the end
(docs/arena.md, "The final tournament").

Everything of it lives in the arena's folder, under `final/`: `final.json`,
the plan (who plays, how many deal sets, and the arena's config as it was),
written once before anything else and read again by every resume, so the
final keeps its field and its rules whatever the leaderboard and
`arena.toml` do meanwhile; `tournament.db`, the tournament's results
database with the seed commitment; and `logs/`. The bots are the arena's
recorded builds, run in its sandbox. This module plans a final and turns the
plan into a `Tournament`; `final_run` plays it and says where it stands.
"""

from __future__ import annotations

import fcntl
import math
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from referee.arena.board import leaderboard
from referee.arena.builds import build, recorded_build, run_spec
from referee.arena.config import Arena, parse_arena
from referee.arena.controls import read_controls
from referee.arena.store import ArenaStore, now_text, sync_folder
from referee.arena.submissions import get_submission
from referee.errors import RefereeError
from referee.tournament.config import BotEntry, Tournament, TournamentBot

FINAL_DIR = "final"
PLAN_FORMAT = 1
MAX_GAMES = 1_000_000  # a final larger than this is a typo, not a plan: refused before its schedule is made


class FinalRefused(RefereeError):
    """A final cannot start (or resume) as asked; the line says why.
    `status` is the HTTP status the arena answers with."""

    def __init__(self, message: str, *, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class FinalPaths:
    """Where an arena's final keeps its files."""

    arena_folder: Path

    @property
    def folder(self) -> Path:
        return self.arena_folder / FINAL_DIR

    @property
    def plan(self) -> Path:
        return self.folder / "final.json"

    @property
    def db(self) -> Path:
        return self.folder / "tournament.db"

    @property
    def logs(self) -> Path:
        return self.folder / "logs"

    @property
    def play_lock(self) -> Path:
        """Held while a referee plays the final (not the database: closing
        another descriptor of a SQLite file would drop SQLite's own locks)."""
        return self.folder / "playing.lock"


class Participant(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A version in the final, as the leaderboard ranked it when the final was planned."""

    rank: int
    bot: str
    version: int
    owner: str
    submission: int
    sha256: str

    @property
    def name(self) -> str:
        """Its name in the final's games, logs and standings."""
        return f"{self.bot}.v{self.version}"

    def public(self) -> dict[str, Any]:
        return {"name": self.name, "bot": self.bot, "version": self.version, "owner": self.owner, "rank": self.rank}


class FinalPlan(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`final.json`: the final as it was decided, before its first game."""

    format: int
    top: int | None  # None: every active bot
    deal_sets: int
    planned: str
    arena_config: str  # arena.toml as it was: the final plays on these settings to its end
    participants: list[Participant]


# ------------------------------------------------------------------ may it start?


def takes_submissions(arena: Arena, conn: sqlite3.Connection, now: float) -> bool:
    """Whether the arena still takes submissions at `now` (arena.toml's
    `submissions_close`, or the host's close or open). An arena without a
    closing time takes them for as long as it is served, so its final has
    to be forced."""
    return not read_controls(conn, arena.submissions_close).closed(now)


def check_can_start(arena: Arena, conn: sqlite3.Connection, *, top: int | None, force: bool, now: float) -> list[Any]:
    """The leaderboard entries a final of the `top` bots would take, best
    first; FinalRefused if it may not start now: submissions still open
    (unless forced), fewer than 2 active bots, or too few for a table."""
    if not force and takes_submissions(arena, conn, now):
        raise FinalRefused(
            "submissions are still open: a final is played once they have closed, so that no version arrives "
            'after it began; force it (arena final --force, or "force": true) to play it now'
        )
    if top is not None and top < 2:
        raise FinalRefused(f"the final needs at least 2 bots: top must be 2 or more, not {top}", status=400)
    board = leaderboard(conn)["bots"]
    if len(board) < 2:
        raise FinalRefused(f"the final needs at least 2 active bots; the arena has {len(board)}")
    chosen = board[:top] if top is not None else board
    if len(chosen) < arena.table_size:
        raise FinalRefused(
            f"a round robin at {arena.table_size} seats needs at least {arena.table_size} bots; "
            f"the final would have {len(chosen)}"
        )
    return list(chosen)


def plan_final(
    arena: Arena, store: ArenaStore, *, top: int | None, deal_sets: int, force: bool, now: float
) -> FinalPlan:
    """Decide a new final: its participants from the leaderboard, the arena's config as it is."""
    if deal_sets < 1:
        raise FinalRefused(f"deal_sets must be 1 or more, not {deal_sets}", status=400)

    def decide(conn: sqlite3.Connection) -> list[Participant]:
        entries = check_can_start(arena, conn, top=top, force=force, now=now)
        return [
            Participant(
                rank=e["rank"],
                bot=e["bot"],
                version=e["version"],
                owner=e["owner"],
                submission=e["submission"],
                sha256=get_submission(conn, e["submission"]).sha256,
            )
            for e in entries
        ]

    participants = store.read(decide)
    seats = arena.table_size
    games = math.comb(len(participants), seats) * seats * deal_sets
    if games > MAX_GAMES:
        raise FinalRefused(
            f"{len(participants)} bots at {seats} seats with {deal_sets} deal sets make {games:,} games, "
            f"more than the {MAX_GAMES:,} a final may have: ask for fewer deal sets or a smaller top",
            status=400,
        )
    text = (arena.folder / "arena.toml").read_text(encoding="utf-8")
    return FinalPlan(
        format=PLAN_FORMAT,
        top=top,
        deal_sets=deal_sets,
        planned=now_text(),
        arena_config=text,
        participants=participants,
    )


# ------------------------------------------------------------------ the plan on disk


def read_plan(paths: FinalPaths) -> FinalPlan | None:
    """The final's plan, or None if no final was planned."""
    try:
        data = paths.plan.read_bytes()
    except FileNotFoundError:
        return None
    try:
        plan = msgspec.json.decode(data, type=FinalPlan)
    except msgspec.DecodeError as exc:
        raise FinalRefused(
            f"{paths.plan}: the final's plan does not read ({exc}); restore it from a backup", status=503
        ) from None
    if plan.format != PLAN_FORMAT:
        raise FinalRefused(f"{paths.plan}: plan format {plan.format}, this referee reads {PLAN_FORMAT}", status=503)
    return plan


def write_plan(paths: FinalPaths, plan: FinalPlan) -> None:
    """`final.json`, written to a temporary file, fsynced, renamed: whole or absent."""
    paths.folder.mkdir(exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".final.", suffix=".json", dir=paths.folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(msgspec.json.format(msgspec.json.encode(plan), indent=2) + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.rename(name, paths.plan)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    sync_folder(paths.folder)


def settle_plan(
    arena: Arena, store: ArenaStore, *, top: int | None, deal_sets: int, force: bool, now: float
) -> FinalPlan:
    """The plan of the final under way, if the same `top` and `deal_sets` ask
    for it; else a new final is planned and written (nothing else exists yet)."""
    paths = FinalPaths(arena.folder)
    plan = read_plan(paths)
    if plan is not None:
        if (plan.top, plan.deal_sets) != (top, deal_sets):
            raise FinalRefused(
                f"a final is under way with {_asked(plan.top, plan.deal_sets)}, not {_asked(top, deal_sets)}: "
                "ask for it as it was started to resume it"
            )
        return plan
    if paths.db.exists() or (paths.logs.is_dir() and any(paths.logs.iterdir())):
        raise FinalRefused(
            f"{paths.folder} holds a final's results but not its plan final.json: restore final.json, "
            f"or move {paths.folder} away to plan a new final"
        )
    plan = plan_final(arena, store, top=top, deal_sets=deal_sets, force=force, now=now)
    write_plan(paths, plan)
    return plan


def _asked(top: int | None, deal_sets: int) -> str:
    return f"top {top if top is not None else 'all'}, {deal_sets} deal set{'s' if deal_sets != 1 else ''}"


# ------------------------------------------------------------------ the tournament it is


def tournament_of(plan: FinalPlan, arena_folder: Path) -> Tournament:
    """The final as a round robin of `tournament`: the plan's participants as
    the arena's recorded builds (built again only if a record is lost), on
    the settings of the arena config the plan keeps. Blocking (a lost build
    is rebuilt): call it on a thread from a Trio loop."""
    arena_folder = arena_folder.resolve()  # the bots' commands and folders must not depend on the working folder
    paths = FinalPaths(arena_folder)
    arena = parse_arena(plan.arena_config, arena_folder, paths.plan)
    bots = tuple(_final_bot(p, arena, paths) for p in plan.participants)
    return Tournament(
        name=f"{arena.name} final",
        path=paths.plan,
        base_dir=paths.folder,
        text=msgspec.json.encode(plan).decode(),
        game=arena.game,
        rules=arena.rules,
        table_size=arena.table_size,
        format="round-robin",
        bots=bots,
        candidates=(),
        deal_sets=plan.deal_sets,
        time_control=arena.time_control,
        policy=arena.policy,
        concurrency=arena.concurrency,
        seed=None,  # drawn in secret and committed to before the first game
        sandbox=arena.sandbox,
    )


def _final_bot(p: Participant, arena: Arena, paths: FinalPaths) -> TournamentBot:
    built = recorded_build(arena.folder, p.sha256) or build(
        arena.folder / "archives" / p.sha256, p.sha256, arena.folder, arena.builds, arena.archives
    )
    spec = run_spec(built, p.name, arena.sandbox)
    assert built.folder is not None and built.recipe is not None  # run_spec refuses a build without them
    # As the results database keeps it: the recipe's command and the build's folder relative to final/,
    # so a moved arena folder still resumes.
    entry = BotEntry(name=p.name, command=list(built.recipe.run), dir=os.path.relpath(built.folder, paths.folder))
    return TournamentBot(entry=entry, spec=spec, workdir=built.folder)


# ------------------------------------------------------------------ who plays it right now


@contextmanager
def holding_play_lock(paths: FinalPaths) -> Iterator[None]:
    """Hold the final's play lock, or FinalRefused if a referee holds it already."""
    paths.folder.mkdir(exist_ok=True)
    fd = os.open(paths.play_lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FinalRefused(
                "the final is being played right now (by arena serve or another arena final); "
                "GET /api/final shows how far it is"
            ) from None
        yield
    finally:
        os.close(fd)


def being_played(paths: FinalPaths) -> bool:
    """Whether a referee, in this process or another, plays the final now."""
    try:
        fd = os.open(paths.play_lock, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
