"""What every command module shares: the typer app, the two consoles (results on
stdout, diagnostics on stderr), one-line handling of expected errors, and the
game and rule options. It imports nothing from the other command modules."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, Optional, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from referee import __version__
from referee.errors import RefereeError
from referee.games import get_game
from referee.games.rules import build_rules, parse_option

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
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
RulesOpt = Annotated[Optional[str], typer.Option("--rules", "-r", help="Rule preset (see `chicago-referee rules`).")]
RuleOpt = Annotated[
    Optional[list[str]], typer.Option("--rule", help="Override one rule option: KEY=VALUE (repeatable).")
]


def rules_for(game_name: str, preset: str | None, rule: list[str] | None) -> tuple[Any, Any]:
    game = get_game(game_name)
    options = dict(parse_option(r) for r in rule or [])
    return game, build_rules(game, preset, options)
