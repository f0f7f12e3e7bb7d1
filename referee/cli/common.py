"""What every command module shares: the typer app, the two consoles (results on
stdout, diagnostics on stderr), one-line handling of expected errors, and the
game and rule options. It imports nothing from the other command modules."""

from __future__ import annotations

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


def _referee_errors(exc: BaseException) -> list[RefereeError] | None:
    """The RefereeErrors `exc` is made of (a trio nursery wraps errors in
    groups); None if anything else is among them."""
    if isinstance(exc, RefereeError):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        found: list[RefereeError] = []
        for inner in exc.exceptions:
            errors = _referee_errors(inner)
            if errors is None:
                return None
            found += errors
        return found
    return None


def expected_errors(fn: F) -> F:
    """Print RefereeErrors as one red line each and exit 2 (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (RefereeError, BaseExceptionGroup) as exc:
            errors = _referee_errors(exc)
            if errors is None:
                raise
            for error in errors:
                err.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

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
