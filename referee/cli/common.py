"""What every command module shares: the typer app, the two consoles (results on
stdout, diagnostics on stderr), one-line handling of expected errors, and the
game and rule options. It imports nothing from the other command modules."""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable
from typing import Annotated, Any, Optional, TypeVar

import typer
import typer.core
from rich.console import Console
from rich.markup import escape

from referee import __version__
from referee.errors import RefereeError
from referee.games import GAMES, get_game
from referee.games.rules import build_rules, parse_option


def _conventional_help() -> None:
    """Help as man pages write it: `BOT...` for arguments (typer writes
    `{bot}...`) and no `<bool>` after a flag, which takes no value."""
    argument, option = typer.core.TyperArgument, typer.core.TyperOption

    def usage_name(self: Any) -> str:
        name = self.metavar or self.name.upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 and not name.endswith("...") else "")

    plain_type = option.display_type_rich

    def option_type(self: Any, ctx: Any) -> str | None:
        return None if self.is_flag and self.metavar is None else plain_type(self, ctx)

    argument._usage_display_name = usage_name  # type: ignore[method-assign]
    option.display_type_rich = option_type  # type: ignore[method-assign]


_conventional_help()
app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Referee and tournament runner for card-game bots (Swedish Chicago, Ghost Hand Euchre).",
)
out = Console()
err = Console(stderr=True)
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
    return f"{where}{_FILE_ERRORS.get(exc.errno, exc.strerror or str(exc))}"


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
            code = EXIT_ERROR
            errors = list({str(e): e for e in errors}.values())  # games failing alike say it once
            for error in errors:
                if isinstance(error, OSError):
                    code = EXIT_FILES
                    text = describe_os_error(error)
                else:
                    text = str(error)
                err.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]


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


GameOpt = Annotated[str, typer.Option("--game", "-g", help="chicago or ghost-euchre.")]
_PRESETS = "; ".join(
    f"{g.name.replace('_', '-')}: " + ", ".join(p + (" (default)" if p == g.default_preset else "") for p in g.presets)
    for g in GAMES.values()
)
RulesOpt = Annotated[Optional[str], typer.Option("--rules", "-r", help=f"Rule preset ({_PRESETS}); `chicago-referee rules` shows each.")]
RuleOpt = Annotated[
    Optional[list[str]], typer.Option("--rule", help="Override one rule option: KEY=VALUE (repeatable).")
]


def rules_for(game_name: str, preset: str | None, rule: list[str] | None) -> tuple[Any, Any]:
    game = get_game(game_name)
    options = dict(parse_option(r) for r in rule or [])
    return game, build_rules(game, preset, options)
