"""An arena's config, `arena.toml` in its folder: what the competition plays,
on what clock, in what sandbox, and what it takes from competitors.

`arena init` writes every key with its default and a comment (`TEMPLATE`),
so a host edits values rather than looking keys up. TOML is read into
msgspec Structs and every error names the key and the file, as tournament
configs do. The arena always sandboxes its bots (they are strangers'
programs): the `[sandbox]` table sets limits, never turns it off.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import msgspec

from protocol.messages import TimeControl
from referee.arena.archives import ArchiveLimits
from referee.arena.controls import in_utc
from referee.arena.matchmaking import MatchmakingPolicy
from referee.errors import ConfigError
from referee.games.base import GameDef
from referee.play.game_spec import FailurePolicy
from referee.seats.sandbox import SandboxLimits, limits_from_table
from referee.tournament.config import (
    TOURNAMENT_SANDBOX,
    RulesEntry,
    TimeControlEntry,
    decode_toml,
    resolve_game,
    resolve_play,
)

CONFIG_NAME = "arena.toml"
MIB = 1 << 20


class UploadsEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`[uploads]`: what a submission may be, and how much of it a user may send."""

    max_upload_mib: int = 10
    max_files: int = 2000
    max_unpacked_mib: int = 50
    max_ratio: float = 100.0
    submissions_per_hour: int = 10
    kept_mib_per_user: int = 200


class BuildsEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`[builds]`: the limits of one build in the sandbox."""

    wall_seconds: int = 300
    memory_mib: int = 2048
    processes: int = 256
    output_mib: int = 200


class MatchmakingEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`[matchmaking]`: who plays next (docs/arena.md says what each key does)."""

    placement_units: int = 10
    placement_bands: int = 3
    window_seconds: float = 3600.0
    width_sigmas: float = 1.0
    coverage_share: float = 0.15


class ArenaFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The top level of `arena.toml`."""

    name: str = "arena"
    game: str = "chicago"
    table_size: int = 2
    rules: RulesEntry = RulesEntry()
    time_control: str | TimeControlEntry = "decision=1s,startup=10s"
    failure_policy: Literal["forfeit", "substitute"] | FailurePolicy = "forfeit"
    concurrency: int = 0
    submissions_close: datetime | None = None
    reveal_delay: float | None = None
    sandbox: dict[str, Any] = {}
    uploads: UploadsEntry = UploadsEntry()
    builds: BuildsEntry = BuildsEntry()
    matchmaking: MatchmakingEntry = MatchmakingEntry()


_STRUCT_AT: dict[str, type[msgspec.Struct]] = {
    "": ArenaFile,
    "rules": RulesEntry,
    "time_control": TimeControlEntry,
    "failure_policy": FailurePolicy,
    "uploads": UploadsEntry,
    "builds": BuildsEntry,
    "matchmaking": MatchmakingEntry,
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "failure_policy": ("forfeit", "substitute"),
    "failure_policy.mode": ("forfeit", "substitute"),
}


@dataclass(frozen=True)
class BuildLimits:
    """What one build may use in the sandbox."""

    wall_seconds: int
    memory_mib: int
    processes: int
    output_bytes: int


@dataclass(frozen=True)
class UserLimits:
    """What one user may send."""

    submissions_per_hour: int
    kept_bytes: int


@dataclass(frozen=True)
class Arena:
    """A resolved, checked arena config."""

    name: str
    folder: Path
    game: GameDef
    rules: Any
    table_size: int
    time_control: TimeControl
    policy: FailurePolicy
    concurrency: int
    sandbox: SandboxLimits
    archives: ArchiveLimits
    builds: BuildLimits
    users: UserLimits
    matchmaking: MatchmakingPolicy
    submissions_close: datetime | None = None  # UTC; the host may close or reopen through the API (controls.py)
    reveal_delay: float | None = None  # seconds after which /live/ shows every card of a running game; None: never


def load_arena(folder: Path) -> Arena:
    """Read and check `folder/arena.toml`."""
    path = folder / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{folder}: not an arena folder (no {CONFIG_NAME}; `arena init {folder}` makes one)"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the arena config: {exc.strerror or exc}") from None
    return parse_arena(text, folder.resolve(), path)  # bots' commands and folders must not depend on the cwd


def parse_arena(text: str, folder: Path, source: Path | None = None) -> Arena:
    where = str(source) if source is not None else "arena config"
    cfg = decode_toml(text, ArenaFile, where, _STRUCT_AT, _CHOICES)
    try:
        return _resolve(cfg, folder)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _positive(key: str, value: float) -> None:
    if value <= 0:
        raise ConfigError(f"{key}: must be more than 0, got {value}")


def _resolve(cfg: ArenaFile, folder: Path) -> Arena:
    game, rules = resolve_game(cfg.game, cfg.table_size, cfg.rules)
    time_control, policy = resolve_play(cfg.time_control, cfg.failure_policy)
    if cfg.concurrency < 0:
        raise ConfigError(f"concurrency: must be 0 (automatic) or more, got {cfg.concurrency}")
    try:
        sandbox = limits_from_table(cfg.sandbox, TOURNAMENT_SANDBOX)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("sandbox ", "sandbox.", 1)) from None
    try:
        close = None if cfg.submissions_close is None else in_utc(cfg.submissions_close)
    except ValueError as exc:
        raise ConfigError(f"submissions_close: {exc}") from None
    if cfg.reveal_delay is not None and cfg.reveal_delay < 0:
        raise ConfigError(f"reveal_delay: must be 0 seconds or more, got {cfg.reveal_delay}")
    up, b = cfg.uploads, cfg.builds
    for table, entry in (("uploads", up), ("builds", b)):
        for key in entry.__struct_fields__:
            _positive(f"{table}.{key}", getattr(entry, key))
    return Arena(
        name=cfg.name,
        folder=folder,
        game=game,
        rules=rules,
        table_size=cfg.table_size,
        time_control=time_control,
        policy=policy,
        concurrency=cfg.concurrency,
        sandbox=sandbox,
        archives=ArchiveLimits(
            max_upload_bytes=up.max_upload_mib * MIB,
            max_files=up.max_files,
            max_unpacked_bytes=up.max_unpacked_mib * MIB,
            max_ratio=up.max_ratio,
        ),
        builds=BuildLimits(
            wall_seconds=b.wall_seconds,
            memory_mib=b.memory_mib,
            processes=b.processes,
            output_bytes=b.output_mib * MIB,
        ),
        users=UserLimits(submissions_per_hour=up.submissions_per_hour, kept_bytes=up.kept_mib_per_user * MIB),
        matchmaking=MatchmakingPolicy(**msgspec.structs.asdict(cfg.matchmaking)),
        submissions_close=close,
        reveal_delay=cfg.reveal_delay,
    )


def template(name: str, game: str, table_size: int) -> str:
    """`arena.toml` as `arena init` writes it: every key, its default, what it does."""
    return TEMPLATE.format(name=name, game=game, table_size=table_size)


TEMPLATE = """\
# An arena of chicago-referee: competitors submit bots, the arena builds,
# checks, plays and rates them (docs/arena.md). Every key is shown with its
# default; change a value and restart `chicago-referee arena serve`.

name = "{name}"                # shown on the leaderboard
game = "{game}"                # chicago or ghost-euchre
table_size = {table_size}                 # seats at a table: a unit is one deal set under every rotation of them
concurrency = 0                # games at once on this machine (0: cores - 1, at least 1)
time_control = "decision=1s,startup=10s"   # as for `match`; the gate's `check` uses it too
failure_policy = "forfeit"     # forfeit (the game) or substitute (a default move and a strike)
# submissions_close = 2026-12-24T18:00:00Z   # no new versions from then on (UTC); unset: open until the host
                               # closes them (POST /api/admin/close, which also overrides this time)
# reveal_delay = 60            # seconds: /live/ shows every card of a running game this long after it is
                               # played (a unit's cards all once it is over); unset: the public view only

[rules]
# preset = "gamerules"         # `chicago-referee rules` lists presets and options
# options = {{ target_score = 52 }}

[sandbox]                      # every bot plays sandboxed; these are its limits
# memory = "1G"
# processes = 64
# cpu = "600s"
# file_size = "16M"
# open_files = 256
# scratch = "64M"
# env = []
# freeze_idle = true

[uploads]
max_upload_mib = 10            # an archive larger than this is refused while it arrives
max_files = 2000               # members of one archive
max_unpacked_mib = 50          # bytes of one archive once unpacked
max_ratio = 100.0              # unpacked / uploaded beyond this is a bomb
submissions_per_hour = 10      # per user
kept_mib_per_user = 200        # archives kept per user, all versions together

[builds]                       # one build, in the sandbox, with no network
wall_seconds = 300
memory_mib = 2048
processes = 256
output_mib = 200               # build output kept for its owner, at most

[matchmaking]                  # who plays next (docs/arena.md, "Matchmaking and ratings")
placement_units = 10           # a new version's first units: ahead of everyone, against the whole field
placement_bands = 3            # rating bands its placement opponents cycle through
window_seconds = 3600          # normal play seats first the bot with the fewest units in this window
width_sigmas = 1.0             # opponents drawn near the focal bot's rating, this many field deviations wide
coverage_share = 0.15          # share of seats given to the least-met opponent instead
"""
