"""What every command module shares: the typer app, the two consoles (results on
stdout, diagnostics on stderr), one-line handling of expected errors, and the
game and rule options. It imports nothing from the other command modules."""

from __future__ import annotations

import dataclasses
import errno
import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
import typer.core
from rich.console import Console
from rich.markup import escape

from referee import __version__
from referee.errors import ClusterError, RefereeError
from referee.games import GAMES, get_game
from referee.games.rules import build_rules, parse_option
from referee.seats.sandbox import SandboxLimits, parse_limits
from referee.visible import visible_lines


def _conventional_help() -> None:
    """Help as man pages write it: `BOT...` for arguments (typer writes
    `{bot}...`), a plain metavar after an option that takes a value (`N`,
    `PATH`, `TEXT`, or the option's own, such as `KEY=VALUE`; typer writes
    `<list[str]>` and `<int range> [x>=1]`), and none after a flag. Ranges
    are enforced all the same: a value out of range is a one-line error."""
    argument, option = typer.core.TyperArgument, typer.core.TyperOption

    def usage_name(self: Any) -> str:
        name = self.metavar or self.name.upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 and not name.endswith("...") else "")

    def option_type(self: Any, ctx: Any) -> str | None:
        if self.is_flag and self.metavar is None:
            return None
        if self.metavar is not None:
            return str(self.metavar)
        desc = self.type_descriptor
        return "PATH" if desc.is_path else "N" if desc.annotation is int else "TEXT"

    argument._usage_display_name = usage_name  # type: ignore[method-assign]
    argument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]  # the name says it
    option.display_type_rich = option_type  # type: ignore[method-assign]
    option._get_number_range_help_str = lambda self: None  # type: ignore[method-assign]
    argument._get_number_range_help_str = lambda self: None  # type: ignore[method-assign]


_conventional_help()
app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Referee and tournament runner for card-game bots (Swedish Chicago, Ghost Hand Euchre).",
)


class TerminalConsole(Console):
    """A rich console on which no printed string can steer the terminal:
    every string printed or put in a table cell has its control and invisible
    characters shown as escapes (`referee.visible`) before its markup is read,
    so a bot's name, reply or stderr cannot retitle, clear or spoof the screen.
    Our own styling still reaches the terminal: it is applied after."""

    def render_str(self, text: str, **kwargs: Any) -> Any:
        return super().render_str(visible_lines(text), **kwargs)


out = TerminalConsole()
err = TerminalConsole(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


# Exit codes, one per kind of outcome, the same for every command.
EXIT_FAILED = 1  # the command ran and found a problem (check failed, verify mismatch)
EXIT_ERROR = 2  # bad input: an option, a config, a bot command, a log, a database
EXIT_FILES = 3  # the file system refused: disk full, read-only, no permission, wrong kind of path
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)

# File-system errors that are the user's to fix, with what to do about each.
_FILE_ERRORS = {
    errno.ENOSPC: "the disk is full: free some space and run again",
    errno.EDQUOT: "the disk quota is used up: free some space and run again",
    errno.EFBIG: "the file is too large for this file system",
    errno.EROFS: "the file system is read-only: choose a writable place",
    errno.EACCES: "permission denied: choose a place you may write to, or fix its permissions",
    errno.EPERM: "operation not permitted: choose another place",
    errno.EISDIR: "that is a folder: give a file name",
    errno.ENOTDIR: "a part of that path is a file, not a folder",
    errno.EEXIST: "that already exists",
    errno.ENOENT: "no such file or folder",
}


def _expected(exc: BaseException) -> list[BaseException] | None:
    """The expected errors `exc` is made of (a trio nursery wraps errors in
    groups): RefereeErrors and file-system errors the user can fix; None if
    anything else is among them (a bug, which keeps its traceback)."""
    if isinstance(exc, RefereeError) or (isinstance(exc, OSError) and exc.errno in _FILE_ERRORS):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        found: list[BaseException] = []
        for inner in exc.exceptions:
            errors = _expected(inner)
            if errors is None:
                return None
            found += errors
        return found
    return None


def is_interrupt(exc: BaseException) -> bool:
    """Ctrl-C, also when a trio nursery delivers it wrapped in a group."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, BaseExceptionGroup) and any(is_interrupt(e) for e in exc.exceptions)


def describe_os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{_FILE_ERRORS.get(exc.errno or 0, exc.strerror or str(exc))}"


def expected_errors(fn: F) -> F:
    """Expected errors print one red line each, no traceback, and exit with
    their code: 2 for bad input, 3 for the file system, 130 for Ctrl-C."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (KeyboardInterrupt, RefereeError, OSError, BaseExceptionGroup) as exc:
            if is_interrupt(exc):
                err.print("[bold red]interrupted[/] (Ctrl-C)", highlight=False)
                raise typer.Exit(EXIT_INTERRUPTED) from None
            errors = _expected(exc)
            if errors is None:
                raise
            code = EXIT_FILES if any(isinstance(e, OSError) for e in errors) else EXIT_ERROR
            for text in error_lines(errors):
                err.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]


_WORKER = re.compile(r"worker (\S+): ")


def error_lines(errors: list[BaseException]) -> list[str]:
    """One line per failure: games failing alike say it once, and the same
    refusal from several cluster workers (`worker wA: ...`, `worker wB: ...`,
    which stop a run together) is one line naming them all."""
    lines: dict[str, list[str]] = {}  # the text without its worker -> the workers that said it
    for error in errors:
        text = describe_os_error(error) if isinstance(error, OSError) else str(error)
        said = _WORKER.match(text) if isinstance(error, ClusterError) else None
        rest, worker = (text[said.end() :], said.group(1)) if said else (text, "")
        workers = lines.setdefault(rest, [])
        if worker and worker not in workers:
            workers.append(worker)
    out = []
    for rest, workers in lines.items():
        if len(workers) > 1:
            out.append(f"workers {', '.join(workers)}: {rest}")
        elif workers:
            out.append(f"worker {workers[0]}: {rest}")
        else:
            out.append(rest)
    return out


def _version(value: bool) -> None:
    if value:
        out.print(f"chicago-referee {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Referee and tournament runner for card-game bots."""


GameOpt = Annotated[str, typer.Option("--game", "-g", metavar="GAME", help="chicago or ghost-euchre.")]
_PRESETS = "; ".join(
    f"{g.name.replace('_', '-')}: " + ", ".join(p + (" (default)" if p == g.default_preset else "") for p in g.presets)
    for g in GAMES.values()
)
RulesOpt = Annotated[
    str | None,
    typer.Option(
        "--rules", "-r", metavar="PRESET", help=f"Rule preset ({_PRESETS}); `chicago-referee rules` shows each."
    ),
]
RuleOpt = Annotated[
    list[str] | None,
    typer.Option("--rule", metavar="KEY=VALUE", help="Override one rule option, e.g. target_score=30 (repeatable)."),
]
TimeControlOpt = Annotated[
    str,
    typer.Option(
        "--time-control",
        "-t",
        metavar="TC",
        help="Comma-separated limits: decision=1s (each decision), bank=60s (a time bank), inc=100ms (added to "
        "the bank after each decision; needs bank), startup=10s (to start and answer hello); a lone 1s sets "
        "the decision limit.",
    ),
]
SandboxOpt = Annotated[
    bool,
    typer.Option(
        "--sandbox",
        help="Run each bot isolated (bubblewrap: own PID/network/user namespaces, private scratch, "
        "limits); refuses to start if this machine cannot (see `chicago-referee doctor`).",
    ),
]
SandboxLimitsOpt = Annotated[
    str | None,
    typer.Option(
        "--sandbox-limits",
        metavar="LIMITS",
        help="With --sandbox: comma-separated limits; those not named keep their defaults, memory=1G, processes=64, "
        "cpu=600s, file_size=16M, open_files=256, scratch=64M, freeze_idle=false, and env=NAME:NAME names "
        "variables to pass on (none by default); e.g. memory=512M,processes=32.",
    ),
]
StartOpt = Annotated[
    str | None,
    typer.Option(
        "--start",
        metavar="POSITION",
        help="Play every game from this position (the text form of docs/positions.md, "
        "or @FILE holding it); the seatings rotate the bots through its seats and later deals follow the seed.",
    ),
]


def shown_path(path: Path) -> str:
    """A path as a person would type it here: relative to the working folder
    when it lies inside it, else as it is."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def rules_for(game_name: str, preset: str | None, rule: list[str] | None) -> tuple[Any, Any]:
    game = get_game(game_name)
    options = dict(parse_option(r) for r in rule or [])
    return game, build_rules(game, preset, options)


def sandbox_limits_for(sandbox: bool, limits: str | None, freeze_idle: bool = False) -> SandboxLimits | None:
    """The sandbox `--sandbox`, `--sandbox-limits` and `--freeze-idle` ask for, or None."""
    if limits is not None and not sandbox:
        raise typer.BadParameter("needs --sandbox", param_hint="--sandbox-limits")
    if freeze_idle and not sandbox:
        raise typer.BadParameter("needs --sandbox (it freezes the sandbox's cgroup)", param_hint="--freeze-idle")
    if not sandbox:
        return None
    chosen = parse_limits(limits) if limits else SandboxLimits()
    return dataclasses.replace(chosen, freeze_idle=True) if freeze_idle else chosen
