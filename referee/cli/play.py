"""`chicago-referee play`: a person against 1-3 bots, in the terminal or the browser."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Annotated, Any

import trio
import typer
from rich.markup import escape

from referee.bots import builtin_names
from referee.cli.common import (
    GameOpt,
    RuleOpt,
    RulesOpt,
    SandboxLimitsOpt,
    SandboxOpt,
    StartOpt,
    TimeControlOpt,
    app,
    err,
    expected_errors,
    out,
    rules_for,
)
from referee.cli.output import say_phrases
from referee.errors import ConfigError
from referee.games import get_game
from referee.play.deals import load_deals
from referee.play.game_spec import GameRecord
from referee.play.match import unique_names
from referee.play.start import read_start, start_file
from referee.play.table import TableConfig, play_table
from referee.seats.bot_command import BotSpec, resolve_command
from referee.seats.clock import DEFAULT_TIME_CONTROL, format_time_control, parse_time_control
from referee.seats.sandbox import SandboxLimits, parse_limits


def opponents(game_name: str, bots: list[str]) -> tuple[list[BotSpec], str]:
    """The bots at the table and how the intro line names them."""
    if bots:
        specs = unique_names([resolve_command(b) for b in bots])
        return specs, " and ".join(s.name for s in specs)
    # The game's default opponent (pimc for both games: the built-in bot measured above the heuristic
    # ones at every table, the ladder in docs/bots.md), one per other seat of its smallest table.
    game = get_game(game_name)
    count = min(game.seat_counts) - 1
    specs = unique_names([resolve_command(game.default_opponent) for _ in range(count)])
    name = specs[0].name  # the others are name#2, name#3
    label = name if count == 1 else f"{_NUMBERS.get(count, count)} {name} bots"
    return specs, f"{label}, this game's default opponent"


_NUMBERS = {2: "two", 3: "three"}


@app.command()
@expected_errors
def play(
    bots: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="BOT",
            help=f"0-3 bots to play against: commands, or built-in bots by name ({builtin_names()}); none: pimc, the "
            "strongest.",
        ),
    ] = None,
    game_name: GameOpt = "chicago",
    seat: Annotated[int, typer.Option("--seat", help="Your seat, 0 = first.")] = 0,
    seed: Annotated[
        int | None, typer.Option("--seed", "-s", help="Seed of the deals (random if not given; always printed).")
    ] = None,
    preset: RulesOpt = None,
    rule: RuleOpt = None,
    deals: Annotated[Path | None, typer.Option("--deals", help="JSON file of explicit deals (as for `match`).")] = None,
    games: Annotated[int, typer.Option("--games", "-n", min=1, help="Games to play before asking 'play again?'.")] = 1,
    time_control: TimeControlOpt = DEFAULT_TIME_CONTROL,
    human_time: Annotated[
        str | None,
        typer.Option(
            "--human-time",
            help="Your limit (none by default), e.g. 60s or decision=30s,bank=300s; out of time forfeits.",
        ),
    ] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Write one JSONL log per game here.")] = None,
    name: Annotated[str, typer.Option("--name", help="Your name at the table and in the log.")] = "human",
    web: Annotated[bool, typer.Option("--web", help="Play in the browser instead of the terminal.")] = False,
    host: Annotated[
        str, typer.Option("--host", help="With --web: the address to serve on (127.0.0.1 = this machine only).")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="With --web: the port (0 picks a free one).")
    ] = 0,
    no_open: Annotated[
        bool, typer.Option("--no-open", help="With --web: print the address but open no browser.")
    ] = False,
    sandbox: SandboxOpt = False,
    sandbox_limits: SandboxLimitsOpt = None,
    start: StartOpt = None,
) -> None:
    """Play against the computer: you take one seat, 1-3 bots the others."""
    game, rules_obj = rules_for(game_name, preset, rule)
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    specs, label = opponents(game.name, list(bots or []))
    if any(s.name == name for s in specs):
        raise ConfigError(f"a bot is already called {name!r}: choose another --name")
    config = TableConfig(
        game=game,
        rules=rules_obj,
        bots=specs,
        seed=seed,
        human_seat=seat,
        human_name=name,
        games=games,
        time_control=parse_time_control(time_control),
        human_time=parse_time_control(human_time) if human_time else None,
        deals=load_deals(deals, game) if deals else (),
        log_dir=log_dir,
        sandbox=_sandbox(sandbox, sandbox_limits),
        hidden=tuple(p for p in (deals, start_file(start)) if p is not None),
        start=read_start(start) if start is not None else None,
    )
    you = (
        f"you ({name}, seat {seat}"
        + (f", {format_time_control(config.human_time)}" if config.human_time else ", no time limit")
        + ")"
    )
    say_phrases(
        err,
        [
            f"{game.title} ({preset or game.default_preset}):",
            you,
            f"against {label}",
            f"seed {seed}",
            f"bots' clock {format_time_control(config.time_control)}",
            *(["bots sandboxed"] if config.sandbox else []),
        ],
    )
    for note in config.notes:
        err.print(note, highlight=False, markup=False, soft_wrap=True)
    if web:
        from referee.web.table import serve_table

        result = trio.run(serve_table, config, host, port, not no_open, _print_url)
    else:
        result = _play_in_terminal(config)
    if len(result.records) > 1:
        from referee.cli.output import match_table

        out.print(match_table(result, out.width))
    for rec in result.records[-1:] if len(result.records) == 1 else []:
        _print_end(rec)
    if log_dir is not None:
        out.print(escape(f"seed {seed}, logs in {log_dir}"), highlight=False)


def _sandbox(sandbox: bool, limits: str | None) -> SandboxLimits | None:
    if limits is not None and not sandbox:
        raise typer.BadParameter("needs --sandbox", param_hint="--sandbox-limits")
    if not sandbox:
        return None
    return parse_limits(limits) if limits else SandboxLimits()


def _print_url(url: str) -> None:
    out.print(f"open {url}", highlight=False, markup=False, soft_wrap=True)
    sys.stdout.flush()


def _print_end(rec: GameRecord) -> None:
    scores = ", ".join(f"{n} {s}" for n, s in zip(rec.seat_names, rec.scores, strict=True))
    who = "nobody" if rec.winner is None else rec.seat_names[rec.winner]
    out.print(
        escape(f"winner: {who}; final scores: {scores}" + (f"; log {rec.log_path}" if rec.log_path else "")),
        highlight=False,
        soft_wrap=True,
    )


def _play_in_terminal(config: TableConfig) -> Any:
    from referee.human.terminal import LineSource, TerminalPlayer

    async def main() -> Any:
        lines = LineSource()
        player = TerminalPlayer(out, lines)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lines.pump)
            result = await play_table(config, player, player.again)
            nursery.cancel_scope.cancel()
        return result

    return trio.run(main)
