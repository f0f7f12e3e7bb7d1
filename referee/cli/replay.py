"""The `replay` and `verify` commands (registered on the main typer app by `cli.py`).

`replay LOG` re-simulates one game log and prints it deal by deal in the
terminal (or writes the HTML viewer with `--html`); `verify LOG...` re-runs
every game and compares it with everything its log says. Both fail loudly on
any mismatch and never repair a log.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from referee.cli.common import EXIT_FAILED, TerminalConsole, app, err, expected_errors, out
from referee.errors import ConfigError


@app.command()
@expected_errors
def replay(
    log_path: Annotated[Path, typer.Argument(metavar="LOG", help="A game log (.jsonl) written with --log-dir.")],
    seat: Annotated[
        int | None, typer.Option("--seat", min=0, help="Show only what seat N could see at each moment.")
    ] = None,
    show_all: Annotated[
        bool, typer.Option("--all", help="Show everything: every hand, every private event (the default).")
    ] = False,
    public: Annotated[
        bool, typer.Option("--public", help="Show public information only (every hand face down).")
    ] = False,
    deal: Annotated[
        int, typer.Option("--deal", min=1, help="Start at deal K (the earlier deals are re-simulated silently).")
    ] = 1,
    step: Annotated[
        bool,
        typer.Option("--step", help="Wait for Enter after each action (only when stdin and stdout are a terminal)."),
    ] = False,
    width: Annotated[int | None, typer.Option("--width", min=40, help="Line width (default: the terminal's).")] = None,
    html: Annotated[
        Path | None,
        typer.Option("--html", metavar="OUT.html", help="Write the HTML replay viewer to this file instead."),
    ] = None,
) -> None:
    """Replay a game log in the terminal, deal by deal and action by action."""
    from referee.replay.load import load_log
    from referee.replay.text import Viewer, render_replay

    if html is not None:
        try:
            from referee.replay.html import write_html
        except ImportError as exc:
            raise ConfigError(f"--html: the HTML replay viewer is not available ({exc})") from None

        log = load_log(log_path, require_result=False, cut_ok=True)  # a bad log fails here with file:line
        _say_if_cut_off(log)
        write_html(log_path, html)
        err.print(f"wrote {html}", highlight=False)
        return
    if sum([seat is not None, show_all, public]) > 1:
        raise typer.BadParameter("choose one of --seat N, --all and --public")
    log = load_log(log_path, require_result=False, cut_ok=True)
    _say_if_cut_off(log)
    if seat is not None and seat >= log.n_players:
        raise ConfigError(f"--seat {seat}: this game has seats 0-{log.n_players - 1}")
    deals = log.deal_count
    if log.start is not None:  # started from a position: its deal, then the logged ones
        first, last = log.deals_before, log.deals_before + deals
        if deal != 1 and not first <= deal <= last:  # 1, the default, is its first deal
            raise ConfigError(
                f"--deal {deal}: the game in {log_path} started from a position in deal {first} "
                f"and played deals {first}-{last}"
            )
    elif deal > deals:
        raise ConfigError(f"--deal {deal}: the game in {log_path} has {deals} deal{'s' if deals != 1 else ''}")
    viewer = Viewer.for_seat(seat) if seat is not None else Viewer.public() if public else Viewer.everything()
    console = out if width is None else TerminalConsole(width=width, highlight=False)
    pause = _enter_to_continue if step and sys.stdin.isatty() and sys.stdout.isatty() else None
    if pause is not None:
        err.print("[dim]step mode: Enter shows the next action, q then Enter stops[/]")
    render_replay(log, console, viewer, start_deal=deal, pause=pause, width=width)


@app.command()
@expected_errors
def verify(
    paths: Annotated[
        list[Path] | None, typer.Argument(metavar="LOG", help="Game logs, or directories searched for *.jsonl.")
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="A tournament's results database: check every row against its log, every log by re-running it, and "
            "the seed commitment.",
        ),
    ] = None,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=0, help="Processes to use (0 = one per CPU for large folders).")
    ] = 0,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also list every log that verified.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable report on stdout.")] = False,
) -> None:
    """Re-run every game and compare it with its log: deals, events, actions, messages, result.

    With --db: check a tournament's results database against its logs and its seed commitment.
    Exit code 0: all logs verified; 1: a log does not match its re-run (or the database differs); 2: unreadable input.
    """
    from referee.replay.verify import MISMATCH, UNREADABLE, verify_paths

    if db is not None:
        if paths:
            raise typer.BadParameter("give either LOG... or --db DB, not both")
        _verify_db(db, as_json)
        return
    if not paths:
        raise typer.BadParameter("give the game logs to verify (LOG...) or a results database (--db DB)")

    started = time.perf_counter()
    counts = {"ok": 0, MISMATCH: 0, UNREADABLE: 0}
    actions = 0
    report = []
    for verdict in verify_paths(paths, jobs=jobs):
        counts[verdict.status] += 1
        actions += verdict.actions
        if as_json:
            report.append({"path": verdict.path, "status": verdict.status, "message": verdict.message or None})
        elif verdict.status == MISMATCH:
            out.print(f"[red]MISMATCH[/] {verdict.message}", highlight=False, soft_wrap=True)
        elif verdict.status == UNREADABLE:
            err.print(f"[bold red]error:[/] {verdict.message}", highlight=False, soft_wrap=True)
        elif verbose:
            out.print(f"[green]ok[/] {verdict.path} ({verdict.actions} actions)", highlight=False, soft_wrap=True)
    seconds = time.perf_counter() - started
    code = 2 if counts[UNREADABLE] else 1 if counts[MISMATCH] else 0
    if as_json:
        sys.stdout.write(
            json.dumps(
                {
                    "verified": counts["ok"],
                    "mismatched": counts[MISMATCH],
                    "unreadable": counts[UNREADABLE],
                    "actions": actions,
                    "seconds": round(seconds, 3),
                    "logs": report,
                },
                indent=2,
            )
            + "\n"
        )
    else:
        total = sum(counts.values())
        failed = counts[MISMATCH] + counts[UNREADABLE]
        colour = "green" if not failed else "red"
        extra = f" ({counts[MISMATCH]} mismatched, {counts[UNREADABLE]} unreadable)" if failed else ""
        out.print(
            f"[{colour}]{counts['ok']} verified, {failed} failed[/]{extra} of {total} log{'s' if total != 1 else ''}, "
            f"{actions} actions re-simulated in {seconds:.1f} s",
            highlight=False,
            soft_wrap=True,
        )
    if code:
        raise typer.Exit(code)


def _verify_db(db: Path, as_json: bool) -> None:
    """`verify --db`: every difference on a line of its own; exit 1 if there is any."""
    from referee.tournament.audit import NOT_REVEALED, VERIFIED, audit_path

    started = time.perf_counter()
    audit = audit_path(db)
    seconds = time.perf_counter() - started
    if as_json:
        sys.stdout.write(json.dumps({**audit.to_dict(), "seconds": round(seconds, 3)}, indent=2) + "\n")
    else:
        for d in audit.differences:
            out.print(f"[red]DIFFERS[/] {d}", highlight=False, soft_wrap=True)
        seed = {
            VERIFIED: "the revealed seed matches the commitment",
            NOT_REVEALED: "the seed is not revealed yet (the tournament has not completed)",
        }.get(audit.commitment, "the seed cannot be checked")
        colour = "green" if audit.ok else "red"
        out.print(
            f"[{colour}]{audit.games} games checked against their logs, {len(audit.differences)} "
            f"difference{'s' if len(audit.differences) != 1 else ''}[/]; {seed}; {audit.actions} actions "
            f"re-simulated in {seconds:.1f} s; results digest {audit.digest}",
            highlight=False,
            soft_wrap=True,
        )
    if not audit.ok:
        raise typer.Exit(EXIT_FAILED)


def _say_if_cut_off(log: Any) -> None:
    if log.result is None:
        last = log.records[-1][0] if log.records else 1
        err.print(
            f"note: {log.path} is cut off after line {last} (the game did not finish: was the referee "
            "stopped?); showing what there is",
            highlight=False,
            markup=False,
        )


def _enter_to_continue() -> bool:
    """Step mode: Enter shows the next action, q (or end of input) stops."""
    try:
        answer = input()
    except (EOFError, KeyboardInterrupt):
        return False
    return answer.strip().lower() not in ("q", "quit")
