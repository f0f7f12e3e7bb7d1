"""The playing commands: `match` and `rules`."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import trio
import typer
from rich.markup import escape

from referee.bots import builtin_names
from referee.cli.common import (
    EXIT_INTERRUPTED,
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
    is_interrupt,
    out,
    rules_for,
    sandbox_limits_for,
)
from referee.cli.live_options import HostOpt, NoOpenOpt, PortOpt, RevealOpt, ServeOpt, reveal_seconds
from referee.cli.output import plural, say_phrases
from referee.errors import ConfigError
from referee.games import GAMES
from referee.games.rules import preset_options
from referee.play.deals import load_deals
from referee.play.game_spec import FailurePolicy
from referee.play.match import MatchConfig, run_match, summarize, unique_names
from referee.play.start import read_start, start_file
from referee.play.summary import MatchResult
from referee.seats.bot_command import check_runnable, resolve_command
from referee.seats.clock import DEFAULT_TIME_CONTROL, format_time_control, parse_time_control
from referee.stats.ratings import parse_sprt


@app.command()
@expected_errors
def rules(
    game_name: GameOpt = "chicago",
    preset: RulesOpt = None,
    rule: RuleOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rules as JSON.")] = False,
) -> None:
    """Show a rule preset with every option (and the presets available)."""
    game, rules_obj = rules_for(game_name, preset, rule)
    if as_json:
        out.print_json(msgspec.json.encode(rules_obj).decode())
        return
    name = preset or game.default_preset
    out.print(f"[bold]{game.title}[/], preset [bold]{name}[/] (seats: {', '.join(map(str, game.seat_counts))})")
    for key, value in msgspec.to_builtins(rules_obj).items():
        if key != "game":
            out.print(f"  {key} = {json.dumps(value)}", highlight=False, markup=False)
    presets = ", ".join(
        f"{p} ({'defaults' if not preset_options(game, p) else 'changes ' + ', '.join(preset_options(game, p))})"
        for p in game.presets
    )
    out.print(f"presets: {presets}", highlight=False)
    out.print(f"games: {', '.join(GAMES)}")


@app.command()
@expected_errors
def match(
    bots: Annotated[
        list[str],
        typer.Argument(
            metavar="BOT...",
            help="2-4 bots: a .py or .js file, an executable, a quoted command line, or a built-in bot by name "
            f"({builtin_names()}).",
        ),
    ],
    game_name: GameOpt = "chicago",
    games: Annotated[
        int, typer.Option("--games", "-n", min=1, help="Games to play (rounded up to whole deal sets).")
    ] = 20,
    seed: Annotated[
        int | None, typer.Option("--seed", "-s", help="Match seed (random if not given; always printed).")
    ] = None,
    preset: RulesOpt = None,
    rule: RuleOpt = None,
    deals: Annotated[
        Path | None,
        typer.Option(
            "--deals",
            help='JSON file of explicit deals: a list of {"dealer": 0, "deck": "As Kd 9h ..."} '
            "(the full pack, top card first); seeded shuffles follow the last one.",
        ),
    ] = None,
    time_control: TimeControlOpt = DEFAULT_TIME_CONTROL,
    failure_policy: Annotated[
        str,
        typer.Option(
            "--failure-policy",
            metavar="POLICY",
            help="What a failure costs: forfeit (the game) or substitute (the referee plays a default move and counts "
            "a strike).",
        ),
    ] = "forfeit",
    max_strikes: Annotated[
        int | None,
        typer.Option(
            "--max-strikes", min=0, help="With --failure-policy substitute: strikes allowed per game (default 3)."
        ),
    ] = None,
    log_dir: Annotated[Path | None, typer.Option("--log-dir", help="Write one JSONL log per game here.")] = None,
    sprt_text: Annotated[
        str | None, typer.Option("--sprt", help="Stop early by SPRT: elo0,elo1[,alpha,beta] (2 bots).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a machine-readable summary on stdout.")] = False,
    sandbox: SandboxOpt = False,
    sandbox_limits: SandboxLimitsOpt = None,
    start: StartOpt = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            "-j",
            min=1,
            help="Deal sets played at once, each with its own bot processes; results are the same as one at a time.",
        ),
    ] = 1,
    serve: ServeOpt = False,
    port: PortOpt = 0,
    host: HostOpt = "127.0.0.1",
    no_open: NoOpenOpt = False,
    reveal_delay: RevealOpt = None,
    freeze_idle: Annotated[
        bool,
        typer.Option(
            "--freeze-idle",
            help="With --sandbox: freeze each bot's sandbox while it is not its turn (cgroup "
            "freezer), so no bot computes on another's time.",
        ),
    ] = False,
) -> None:
    """Play a match between 2-4 bots in deal sets and print the standings."""
    delay = reveal_seconds(reveal_delay)
    if delay is not None and not serve:
        raise typer.BadParameter("needs --serve", param_hint="--reveal-delay")
    game, rules_obj = rules_for(game_name, preset, rule)
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    specs = unique_names([resolve_command(b) for b in bots])
    for spec in specs:
        check_runnable(spec)
    config = MatchConfig(
        game=game,
        rules=rules_obj,
        bots=specs,
        games=games,
        seed=seed,
        time_control=parse_time_control(time_control),
        policy=_failure_policy(failure_policy, max_strikes),
        deals=load_deals(deals, game) if deals else (),
        log_dir=log_dir,
        sprt=parse_sprt(sprt_text) if sprt_text else None,
        sandbox=sandbox_limits_for(sandbox, sandbox_limits, freeze_idle),
        hidden=tuple(p for p in (deals, start_file(start)) if p is not None),
        start=read_start(start) if start is not None else None,
        concurrency=concurrency,
    )
    if sprt_text and len(specs) != 2:
        raise typer.BadParameter("SPRT needs exactly 2 bots", param_hint="--sprt")
    _announce(config, preset)
    if serve:
        result, interrupted = _play_served(config, log_dir, delay, host, port, no_open)
    else:
        result, interrupted = _run_with_progress(config, config.n_sets * config.set_size)
    _print_result(result, as_json, log_dir)
    if interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)


def _failure_policy(mode: str, max_strikes: int | None) -> FailurePolicy:
    if mode not in ("forfeit", "substitute"):
        raise typer.BadParameter("must be forfeit or substitute", param_hint="--failure-policy")
    if max_strikes is not None and mode != "substitute":
        raise ConfigError(
            "--max-strikes counts the defaults played for a bot under --failure-policy substitute; "
            "add --failure-policy substitute, or drop --max-strikes"
        )
    return FailurePolicy(
        mode="forfeit" if mode == "forfeit" else "substitute", max_strikes=3 if max_strikes is None else max_strikes
    )


def _announce(config: MatchConfig, preset: str | None) -> None:
    """One line on what is about to be played, and the config's notes."""
    specs, total = config.bots, config.n_sets * config.set_size
    say_phrases(
        err,
        [
            f"{config.game.title} ({preset or config.game.default_preset}): {' vs '.join(s.name for s in specs)}",
            f"{plural(total, 'game')} ({plural(config.n_sets, 'deal set')})",
            f"seed {config.seed}",
            f"clock {format_time_control(config.time_control)}",
            *(["sandboxed"] if config.sandbox else []),
            *(["every game from the --start position"] if config.start else []),
            *([f"concurrency {config.concurrency}"] if config.concurrency > 1 else []),
        ],
    )
    for note in config.notes:
        err.print(note, highlight=False, markup=False, soft_wrap=True)


def _play_served(
    config: MatchConfig, log_dir: Path | None, delay: float | None, host: str, port: int, no_open: bool
) -> tuple[MatchResult, bool]:
    """The match with its live dashboard; the stream goes with the logs (or a
    scratch folder, removed afterwards)."""
    import tempfile
    from dataclasses import replace

    from referee.live.serve import DashboardPlan, match_source, match_writer

    names = [s.name for s in config.bots]
    total = config.n_sets * config.set_size
    with tempfile.TemporaryDirectory(prefix="chicago-referee-live-") as scratch:
        folder = log_dir if log_dir is not None else Path(scratch)
        live = match_writer(folder, name=" vs ".join(names), game=config.game.name, bots=names, scheduled=total)
        source, public, private = match_source(folder, log_dir, " vs ".join(names), delay)
        plan = DashboardPlan(
            source,
            public,
            private,
            host=host,
            port=port,
            open_browser=not no_open,
            on_url=lambda url: err.print(f"live dashboard: {url}", highlight=False, markup=False, soft_wrap=True),
        )
        status = "aborted"
        try:
            result, interrupted = _run_with_progress(replace(config, watch_games=live.watch_games), total, plan)
            status = "stopped" if interrupted else "completed"
        finally:
            live.close(status)
    return result, interrupted


def _print_result(result: MatchResult, as_json: bool, log_dir: Path | None) -> None:
    if as_json:
        from referee.cli.output import match_dict

        sys.stdout.write(json.dumps(match_dict(result), indent=2) + "\n")
        return
    from referee.cli.output import elo_lines, failure_lines, match_table, time_lines

    out.print(match_table(result, out.width))
    for line in [*time_lines(result), *failure_lines(result), *elo_lines(result)]:
        out.print(line, highlight=False, markup=False)
    out.print(f"seed {result.config.seed}" + (f", logs in {log_dir}" if log_dir else ""), highlight=False, markup=False)


async def _run_served(config: MatchConfig, on_game: Any, dashboard: Any) -> Any:
    """The match, with its live dashboard served while it plays (if asked)."""
    from referee.live.serve import open_planned

    async with open_planned(dashboard):
        return await run_match(config, on_game)


def _run_with_progress(config: MatchConfig, total: int, dashboard: Any = None) -> tuple[Any, bool]:
    """(result, interrupted): on Ctrl-C the games finished so far are summed up."""
    finished: list[Any] = []
    progress: Any = None
    wins: dict[str, int] = {}

    def on_game(rec: Any) -> None:
        finished.append(rec)
        if progress is None:
            return
        if rec.winner is not None:
            name = rec.seat_names[rec.winner]
            wins[name] = wins.get(name, 0) + 1
        desc = "  ".join(f"{n} {w}" for n, w in sorted(wins.items()))
        progress.update(task, advance=1, description=escape(f"games [{desc}]"))

    try:
        if not err.is_terminal:
            return trio.run(_run_served, config, on_game, dashboard), False
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("games", total=total)
            return trio.run(_run_served, config, on_game, dashboard), False
    except (KeyboardInterrupt, BaseExceptionGroup) as exc:
        if not is_interrupt(exc):
            raise
        result = summarize(config, finished)
        result.stopped = f"interrupted (Ctrl-C) after {plural(len(finished), 'game')} of {total}"
        return result, True
