"""The commands that put one bot through its paces on its own: `check`
(does it speak the protocol, at every seat count, on match's clock?) and
`bench` (how fast is the referee next to a raw pipe to the same bot?)."""

from __future__ import annotations

import json
import statistics
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import trio
import typer
from rich.markup import escape

from referee.bots import builtin_names
from referee.cli.common import (
    EXIT_FAILED,
    GameOpt,
    SandboxLimitsOpt,
    SandboxOpt,
    app,
    err,
    expected_errors,
    out,
    sandbox_limits_for,
)
from referee.cli.output import say_phrases
from referee.errors import ConfigError
from referee.games import get_game
from referee.seats.bot_command import check_runnable, resolve_command
from referee.seats.clock import DEFAULT_TIME_CONTROL, format_time_control, parse_time_control
from referee.seats.isolation import require_isolation
from referee.seats.sandbox import SandboxLimits


@app.command()
@expected_errors
def check(
    bot: Annotated[
        str,
        typer.Argument(
            metavar="BOT", help=f"The bot to check, as for `match` (a command, or a built-in bot: {builtin_names()})."
        ),
    ],
    game_name: GameOpt = "chicago",
    time_control: Annotated[
        str | None,
        typer.Option(
            "--time-control",
            "-t",
            metavar="TC",
            help=f"The clock to check with, as for `match`; by default match's own, {DEFAULT_TIME_CONTROL}.",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            metavar="TOURNAMENT.toml",
            help="Check as that tournament would run the bot: its game, clock, sandbox and limits.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable report.")] = False,
    sandbox: SandboxOpt = False,
    sandbox_limits: SandboxLimitsOpt = None,
) -> None:
    """Conformance check: handshake, every decision kind, a short game at each seat count, on `match`'s clock."""
    from referee.play.check import check_bot, report_dict

    game, clock, limits, source = _check_setup(game_name, time_control, config, sandbox, sandbox_limits)
    spec = resolve_command(bot)
    check_runnable(spec)
    say_phrases(
        err,
        [
            f"checking {spec.name} on {game.title}",
            f"clock {format_time_control(clock)}{source}",
            *(["in the sandbox"] if limits else []),
            f"command: {bot}",
        ],
    )  # as typed: the interpreter and paths it resolves to are in the log
    for note in require_isolation(limits, [spec]):
        err.print(note, highlight=False, markup=False, soft_wrap=True)

    def progress(line: str) -> None:
        err.print(line, highlight=False, markup=False)

    report = trio.run(partial(check_bot, spec, game, clock, on_progress=progress, sandbox=limits))
    if as_json:
        sys.stdout.write(json.dumps(report_dict(report), indent=2) + "\n")
    else:
        # Report lines quote what the bot wrote (field names, actions): text, never markup.
        for line in report.passed:
            out.print(f"[green]ok[/]    {escape(line)}", highlight=False)
        for line in report.notes:
            out.print(f"[yellow]note[/]  {escape(line)}", highlight=False)
        for line in report.warnings:
            out.print(f"[yellow]warning[/] {escape(line)}", highlight=False)
        for line in report.problems:
            out.print(f"[red]FAIL[/]  {escape(line)}", highlight=False)
        for p in report.details:
            if p.evidence:
                out.print(f"      {p.reason}, what the bot wrote: {escape(p.evidence)}", highlight=False)
        verdict = "[green]passed[/]" if report.ok else "[red]failed[/]"
        out.print(f"{escape(spec.name)}: {verdict}", highlight=False)
    if not report.ok:
        raise typer.Exit(EXIT_FAILED)


def _check_setup(
    game_name: str, time_control: str | None, config: Path | None, sandbox: bool, sandbox_limits: str | None
) -> tuple[Any, Any, SandboxLimits | None, str]:
    """(game, clock, sandbox limits, where the clock came from) for `check`:
    `match`'s defaults, or what a tournament config says."""
    if config is None:
        clock = parse_time_control(time_control or DEFAULT_TIME_CONTROL)
        return get_game(game_name), clock, sandbox_limits_for(sandbox, sandbox_limits), ""
    if time_control is not None or sandbox or sandbox_limits is not None:
        raise ConfigError(
            "--config brings the tournament's clock and sandbox: drop --time-control, --sandbox "
            "and --sandbox-limits, or drop --config"
        )
    from referee.tournament.config import load_config

    t = load_config(config)
    require_isolation(t.sandbox)  # fail closed: the tournament would not run unsandboxed either
    return t.game, t.time_control, t.sandbox, f" (from {config})"


@app.command()
@expected_errors
def bench(
    bot: Annotated[
        str | None,
        typer.Argument(
            metavar="[BOT]",
            help=f"Bot used for both measurements, as for `match` (built-in: {builtin_names()}); default first-legal, "
            "which answers at once.",
        ),
    ] = None,
    game_name: GameOpt = "chicago",
    rounds: Annotated[int, typer.Option(help="Interleaved rounds (referee and raw pipe) compared by median.")] = 12,
    games: Annotated[int, typer.Option(help="Games played through the referee per round.")] = 4,
    sandbox: Annotated[
        bool,
        typer.Option("--sandbox", help="Measure the sandbox instead: decisions/s and start-up with and without it."),
    ] = False,
    sandbox_limits: SandboxLimitsOpt = None,
) -> None:
    """Referee decisions/s against the raw pipe round trip with the same bot processes."""
    from referee.play.bench import run_bench

    if rounds < 1 or games < 1:
        raise ConfigError("--rounds and --games must be at least 1")
    spec = resolve_command(bot or "first-legal")
    check_runnable(spec)
    limits = sandbox_limits_for(sandbox, sandbox_limits)
    if limits is not None:
        _bench_sandbox(spec, get_game(game_name).name, rounds, games, limits)
        return
    res = trio.run(run_bench, spec, get_game(game_name).name, rounds, games)
    low, high = res.ratio_range
    rows = [
        ("raw pipe, one process", f"{res.raw_single_per_s:8.0f} round trips/s"),
        ("raw pipe, game stream (trio)", f"{res.trio_stream_per_s:8.0f} round trips/s"),
        ("raw pipe, game stream (direct)", f"{res.raw_stream_per_s:8.0f} round trips/s"),
        ("through the referee", f"{res.referee_per_s:8.0f} decisions/s"),
        ("referee / game stream (trio)", f"{100 * res.ratio_trio:8.1f} %"),
        ("referee / game stream (direct)", f"{100 * res.ratio:8.1f} %  (rounds {100 * low:.0f}-{100 * high:.0f} %)"),
        ("referee / one process", f"{100 * res.ratio_single:8.1f} %"),
        ("referee's own time (runner)", f"{res.overhead_us:8.1f} us per decision"),
        ("referee's own CPU (all of it)", f"{res.own_cpu_us:8.1f} us per decision  (less the stream's)"),
    ]
    out.print(
        f"{res.decisions} decisions; medians of {len(res.rounds)} interleaved rounds "
        "(trio: send_all/receive_some; direct: the referee's own pipe reads and writes)",
        highlight=False,
    )
    for label, value in rows:
        out.print(f"{label:<32}: {value}", highlight=False)


def _bench_sandbox(spec: Any, game: str, rounds: int, games: int, limits: SandboxLimits) -> None:
    from referee.play.bench import run_sandbox_bench

    res = trio.run(run_sandbox_bench, spec, game, rounds, games, limits)
    med = statistics.median
    rows = [
        ("through the referee, no sandbox", f"{med(res.plain_per_s):8.0f} decisions/s"),
        ("through the referee, sandboxed", f"{med(res.sandboxed_per_s):8.0f} decisions/s"),
        ("sandboxed / no sandbox", f"{100 * res.ratio:8.1f} %"),
        ("start-up to hello, no sandbox", f"{med(res.plain_start_ms):8.1f} ms"),
        ("start-up to hello, sandboxed", f"{med(res.sandboxed_start_ms):8.1f} ms"),
        (
            "added start-up per bot",
            f"{res.added_start_ms:8.1f} ms  (quartiles "
            + " to ".join(f"{q:.1f}" for q in res.added_start_quartiles)
            + " ms)",
        ),
    ]
    out.print(
        f"{res.decisions} decisions; medians of {len(res.plain_per_s)} interleaved rounds and "
        f"{len(res.plain_start_ms)} start-ups of each kind, paired (load {res.load[0]:.1f} before, "
        f"{res.load[1]:.1f} after)",
        highlight=False,
    )
    for label, value in rows:
        out.print(f"{label:<32}: {value}", highlight=False)
