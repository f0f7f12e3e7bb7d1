"""Tournament config files: TOML (stdlib `tomllib`) -> msgspec Structs -> a
resolved, validated `Tournament`.

Every error names the key it is about (`bots[2].command: ...`,
`table_size: ...`) and the file. Paths in a config (bot commands, `dir`) are
relative to the config file's folder, and bots run in that folder unless
their `dir` says otherwise, so a config works from any current directory.
The full key reference is `tournaments/README.md`.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec

from protocol.messages import TimeControl
from referee.errors import BotStartError, ConfigError
from referee.games import get_game
from referee.games.base import GameDef
from referee.games.rules import build_rules, preset_options
from referee.play.game_spec import FailurePolicy
from referee.seats.bot_command import BotSpec, resolve_command
from referee.seats.clock import DEFAULT_TIME_CONTROL, parse_time_control
from referee.seats.sandbox import SandboxLimits, limits_from_table

TOURNAMENT_SANDBOX = SandboxLimits(freeze_idle=True)  # nobody computes on another bot's time

FORMATS = ("round-robin", "gauntlet")
BOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


# ------------------------------------------------------------------ the file


class BotEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`[[bots]]`: one bot. `command` is split like a shell line (or is a list)."""

    name: str
    command: str | list[str]
    dir: str | None = None  # working directory, relative to the config file
    build: str | None = None  # shell command run in `dir` before the tournament


class RulesEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`[rules]`: a preset plus option overrides (`chicago-referee rules` lists them)."""

    preset: str | None = None
    options: dict[str, Any] = {}


class TimeControlEntry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`[time_control]` as a table; a string like `"decision=500ms,startup=5s"` also works."""

    decision: str = "1s"
    startup: str = "10s"
    bank: str | None = None
    increment: str = "0ms"

    def as_text(self) -> str:
        parts = [f"decision={self.decision}", f"startup={self.startup}"]
        if self.bank is not None:
            parts += [f"bank={self.bank}", f"inc={self.increment}"]
        return ",".join(parts)


class TournamentFile(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The top level of a tournament config file."""

    bots: list[BotEntry]
    seed: int | None = None  # None: the referee draws a secret one and commits to it
    name: str | None = None
    game: str = "chicago"
    rules: RulesEntry = RulesEntry()
    table_size: int = 2
    format: Literal["round-robin", "gauntlet"] = "round-robin"
    candidates: list[str] = []
    deal_sets: int = 2
    time_control: str | TimeControlEntry = DEFAULT_TIME_CONTROL
    failure_policy: Literal["forfeit", "substitute"] | FailurePolicy = "forfeit"
    concurrency: int = 0
    sandbox: bool | dict[str, Any] = True  # true, false (written out), or a table of limits


# Which Struct sits at which key path, for "unknown key" suggestions.
_STRUCT_AT: dict[str, type[msgspec.Struct]] = {
    "": TournamentFile,
    "bots[]": BotEntry,
    "rules": RulesEntry,
    "time_control": TimeControlEntry,
    "failure_policy": FailurePolicy,
}


_CHOICES: dict[str, tuple[str, ...]] = {
    "format": FORMATS,
    "failure_policy": ("forfeit", "substitute"),
    "failure_policy.mode": ("forfeit", "substitute"),
}


def explain(
    exc: msgspec.ValidationError,
    structs: dict[str, type[msgspec.Struct]] = _STRUCT_AT,
    choices: dict[str, tuple[str, ...]] = _CHOICES,
) -> str:
    """msgspec's message -> `key.path: what is wrong`. `structs` says which Struct
    sits at which key path (for "did you mean"), `choices` what an enum key takes."""
    text = str(exc)
    where = ""
    m = re.search(r" - at `\$\.?(.*)`$", text)
    if m:
        where, text = m.group(1), text[: m.start()]

    def join(key: str) -> str:
        return f"{where}.{key}" if where else key

    if m := re.fullmatch(r"Object missing required field `(.+)`", text):
        return f"{join(m.group(1))}: required key is missing"
    if m := re.fullmatch(r"Object contains unknown field `(.+)`", text):
        struct = structs.get(re.sub(r"\[\d+\]", "[]", where))
        hint = ""
        if struct is not None:
            fields = list(struct.__struct_fields__)
            close = difflib.get_close_matches(m.group(1), fields, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; valid keys: {', '.join(fields)}"
        return f"{join(m.group(1))}: unknown key{hint}"
    if m := re.fullmatch(r"Expected `(.+)`, got `(.+)`", text):
        want = m.group(1).replace("object", "table").replace("array", "list").replace(" | null", "")  # TOML has no null
        got = m.group(2).replace("object", "table").replace("array", "list")
        return f"{where or 'config'}: expected {want}, got {got}"
    if m := re.fullmatch(r"Invalid enum value (.+)", text):
        valid = choices.get(where)
        extra = f"; choose {' or '.join(valid)}" if valid else ""
        return f"{where}: invalid value {m.group(1)}{extra}"
    return f"{where or 'config'}: {text}"


# ------------------------------------------------------------------ resolved


@dataclass(frozen=True)
class TournamentBot:
    """A bot of the tournament: as written in the file, and resolved to an argv."""

    entry: BotEntry
    spec: BotSpec
    workdir: Path

    @property
    def name(self) -> str:
        return self.entry.name

    def identity(self) -> dict[str, Any]:
        """What identifies the bot for resume checks (paths as written, not resolved)."""
        return {"command": self.entry.command, "dir": self.entry.dir, "build": self.entry.build}


@dataclass(frozen=True)
class Tournament:
    name: str
    path: Path | None
    base_dir: Path
    text: str
    game: GameDef
    rules: Any
    table_size: int
    format: str
    bots: tuple[TournamentBot, ...]
    candidates: tuple[str, ...]
    deal_sets: int
    time_control: TimeControl
    policy: FailurePolicy
    concurrency: int  # 0 = automatic
    seed: int | None  # as configured; None: drawn in secret when the tournament starts
    sandbox: SandboxLimits | None = None  # None: `sandbox = false`, bots unisolated

    @property
    def bot_names(self) -> list[str]:
        return [b.name for b in self.bots]

    def bot(self, name: str) -> TournamentBot:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    @property
    def field(self) -> list[str]:
        """Gauntlet: the bots the candidates play against."""
        return [n for n in self.bot_names if n not in self.candidates]

    def definition(self) -> dict[str, Any]:
        """Everything that determines which games are played and how (JSON-able).

        Stored in the results database; `concurrency` and paths of outputs are
        not part of it, since they change no game.
        """
        return {
            "game": self.game.name,
            "rules": msgspec.to_builtins(self.rules),
            "table_size": self.table_size,
            "format": self.format,
            "candidates": list(self.candidates),
            "deal_sets": self.deal_sets,
            "seed": self.seed,
            "time_control": msgspec.to_builtins(self.time_control),
            "failure_policy": msgspec.to_builtins(self.policy),
            "bots": {b.name: b.identity() for b in self.bots},
        }


def default_concurrency() -> int:
    """Cores - 1, at least 1 (the referee itself needs a core)."""
    return max(1, (os.cpu_count() or 1) - 1)


def load_config(path: Path | str) -> Tournament:
    """Read and validate a tournament config file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tournament config: {exc.strerror or exc}") from None
    return parse_config(text, base_dir=path.resolve().parent, source=path)


S = TypeVar("S", bound=msgspec.Struct)


def decode_toml(
    text: str,
    struct: type[S],
    where: str,
    structs: dict[str, type[msgspec.Struct]] = _STRUCT_AT,
    choices: dict[str, tuple[str, ...]] = _CHOICES,
) -> S:
    """TOML text as the Struct of a config file; one ConfigError line naming the key if not."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    try:
        return msgspec.convert(raw, type=struct)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{where}: {explain(exc, structs, choices)}") from None


def parse_config(text: str, base_dir: Path, source: Path | None = None) -> Tournament:
    """Validate config text; relative paths are taken from `base_dir`."""
    where = str(source) if source is not None else "config"
    cfg = decode_toml(text, TournamentFile, where)
    try:
        return _resolve(cfg, text, base_dir, source)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _resolve(cfg: TournamentFile, text: str, base_dir: Path, source: Path | None) -> Tournament:
    game, rules = resolve_game(cfg.game, cfg.table_size, cfg.rules)
    time_control, policy = resolve_play(cfg.time_control, cfg.failure_policy)
    _check_counts(cfg)
    sandbox = _resolve_sandbox(cfg)
    bots = tuple(_resolve_bot(i, b, base_dir, sandbox) for i, b in enumerate(cfg.bots))
    _check_format(cfg, [b.name for b in bots])
    name = cfg.name or (source.stem if source is not None else "tournament")
    return Tournament(
        name=name,
        path=source,
        base_dir=base_dir,
        text=text,
        game=game,
        rules=rules,
        table_size=cfg.table_size,
        format=cfg.format,
        bots=bots,
        candidates=tuple(cfg.candidates),
        deal_sets=cfg.deal_sets,
        time_control=time_control,
        policy=policy,
        concurrency=cfg.concurrency,
        seed=cfg.seed,
        sandbox=sandbox,
    )


def resolve_game(name: str, table_size: int, rules: RulesEntry) -> tuple[GameDef, Any]:
    """The game, its table size, and its rules (a preset and options)."""
    try:
        game = get_game(name)
    except ConfigError as exc:
        raise ConfigError(f"game: {exc}") from None
    if table_size not in game.seat_counts:
        counts = " or ".join(str(c) for c in game.seat_counts)
        raise ConfigError(f"table_size: {game.title} is played at {counts} seats, not {table_size}")
    preset = rules.preset or game.default_preset
    try:
        preset_options(game, preset)
    except ConfigError as exc:
        raise ConfigError(f"rules.preset: {exc}") from None
    try:
        return game, build_rules(game, preset, dict(rules.options))
    except ConfigError as exc:
        raise ConfigError(f"rules.options: {exc}") from None


def resolve_play(
    clock: str | TimeControlEntry, failure_policy: Literal["forfeit", "substitute"] | FailurePolicy
) -> tuple[TimeControl, FailurePolicy]:
    """The clock and what happens to a bot that fails."""
    tc_text = clock if isinstance(clock, str) else clock.as_text()
    try:
        time_control = parse_time_control(tc_text)
    except ConfigError as exc:
        raise ConfigError(f"time_control: {exc}") from None
    policy = failure_policy if isinstance(failure_policy, FailurePolicy) else FailurePolicy(mode=failure_policy)
    if policy.max_strikes < 0:
        raise ConfigError("failure_policy.max_strikes: must be 0 or more")
    return time_control, policy


def _check_counts(cfg: TournamentFile) -> None:
    if cfg.deal_sets < 1:
        raise ConfigError(f"deal_sets: must be at least 1, got {cfg.deal_sets}")
    if cfg.concurrency < 0:
        raise ConfigError(f"concurrency: must be 0 (automatic) or more, got {cfg.concurrency}")
    if cfg.name is not None and not BOT_NAME.match(cfg.name):
        raise ConfigError(f"name: {cfg.name!r} must be 1-40 letters, digits, '_', '.' or '-'")


def _resolve_sandbox(cfg: TournamentFile) -> SandboxLimits | None:
    """`true` (the tournament's limits), `false` (none) or a table of limits."""
    if not isinstance(cfg.sandbox, dict):
        return TOURNAMENT_SANDBOX if cfg.sandbox else None
    try:
        return limits_from_table(cfg.sandbox, TOURNAMENT_SANDBOX)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("sandbox ", "sandbox.", 1)) from None


def _check_format(cfg: TournamentFile, names: list[str]) -> None:
    """Unique bot names, and enough bots (and candidates) for the format."""
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"bots: bot names must be unique; repeated: {', '.join(dupes)}")
    k = cfg.table_size
    if cfg.format == "round-robin":
        if cfg.candidates:
            raise ConfigError('candidates: only used with format = "gauntlet"')
        if len(names) < k:
            raise ConfigError(f"bots: a round robin at {k} seats needs at least {k} bots, got {len(names)}")
        return
    if not cfg.candidates:
        raise ConfigError("candidates: a gauntlet needs at least one candidate (a list of bot names)")
    for c in cfg.candidates:
        if c not in names:
            raise ConfigError(f"candidates: {c!r} is not the name of a bot; bots: {', '.join(names)}")
    if len(set(cfg.candidates)) != len(cfg.candidates):
        raise ConfigError("candidates: a bot is listed twice")
    field_size = len(names) - len(cfg.candidates)
    if field_size < k - 1:
        raise ConfigError(
            f"bots: a gauntlet at {k} seats needs at least {k - 1} bots besides the candidates, got {field_size}"
        )


def _resolve_bot(i: int, entry: BotEntry, base_dir: Path, sandbox: SandboxLimits | None) -> TournamentBot:
    label = f"bots[{i}]"
    if not BOT_NAME.match(entry.name):
        raise ConfigError(
            f"{label}.name: {entry.name!r} must be 1-40 letters, digits, '_', '.' or '-' "
            "(it names log files and database rows)"
        )
    label = f"bots[{i}] ({entry.name})"
    workdir = (base_dir / entry.dir).resolve() if entry.dir else base_dir
    if not workdir.is_dir():
        raise ConfigError(f"{label}.dir: {workdir} is not a directory")
    command = entry.command
    if (isinstance(command, str) and not command.strip()) or (isinstance(command, list) and not command):
        raise ConfigError(f"{label}.command: must not be empty")
    try:
        spec = resolve_command(command, name=entry.name, cwd=str(workdir), sandbox=sandbox)
    except BotStartError as exc:
        raise ConfigError(f"{label}.command: {exc}") from None
    return TournamentBot(entry=entry, spec=spec, workdir=workdir)
