"""`chicago-referee tournament CONFIG` and `chicago-referee standings DB`
(where their results lie: `results_folder`)."""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import trio
import typer
from rich.markup import escape

from referee.cli.common import app, err, expected_errors, out, shown_path
from referee.cli.live_options import HostOpt, NoOpenOpt, PortOpt, RevealOpt, ServeOpt, reveal_seconds
from referee.cli.output import say_phrases
from referee.cli.results_folder import check_results, default_paths, ignore_in_git, refuse_lost_results, resume_command
from referee.seats.clock import format_time_control
from referee.tournament.config import Tournament, default_concurrency, load_config
from referee.tournament.executors import Placement, import_distributed
from referee.tournament.run import (
    RunOutcome,
    TournamentRunner,
    build_bots,
    check_commands,
    handle_signals,
    prepare_store,
)
from referee.tournament.schedule import ScheduledGame
from referee.tournament.store import Store, open_for_reading
from referee.tournament.store_rows import Commitment, GameRow


def _print_seed(sealed: Commitment) -> None:
    origin = (
        "drawn in secret"
        if sealed.source == "drawn"
        else "taken from the config (known to whoever wrote it: the commitment proves only that the deals "
        "follow from it)"
    )
    err.print(
        f"seed commitment: {sealed.commitment} (seed {origin}; revealed when the tournament completes)",
        highlight=False,
        soft_wrap=True,
    )


def _print_reveal(db: Path) -> None:
    """After the standings (which end with the revealed seed): how anyone checks them."""
    out.print(
        f"anyone can check the deals, the logs and every result with: "
        f"chicago-referee verify --db {shlex.quote(shown_path(db))}",
        highlight=False,
        soft_wrap=True,
    )


def _print_tables(console: Any, items: list[Any]) -> None:
    """Tables come fitted to the console's width (`all_tables(st, console.width)`);
    notes keep hashes and seeds whole so they can be copied."""
    for item in items:
        if isinstance(item, str):  # a line with a hash or a salt is not wrapped: it must copy whole
            whole = re.search(r"[0-9a-f]{32}", item) is not None
            console.print(item, highlight=False, soft_wrap=whole, markup=False)
        else:
            console.print(item, highlight=False)


class _Ui:
    """Progress and live standings on stderr (a live view on a terminal, lines otherwise)."""

    def __init__(self, err: Any, t: Tournament, rows: list[GameRow], scheduled: int) -> None:
        self.err = err
        self.t = t
        self.rows = rows
        self.scheduled = scheduled
        self.runner: TournamentRunner | None = None
        self.live: Any = None
        self.progress: Any = None
        self.task: Any = None
        self._next = 0.0
        self._cost = 0.0
        self._every = max(1, scheduled // 20)

    def __enter__(self) -> _Ui:
        if self.err.is_terminal:
            from rich.live import Live
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()
            )
            self.task = self.progress.add_task("games", total=self.scheduled, completed=len(self.rows))
            self.live = Live(self._view(), console=self.err, refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.update(self._view(force=True))
            self.live.__exit__(None, None, None)

    def _view(self, force: bool = False) -> Any:
        from rich.console import Group

        from referee.tournament.standings import compute
        from referee.tournament.standings_tables import live_table

        now = time.monotonic()
        if force or now >= self._next or not hasattr(self, "_table"):
            t0 = time.perf_counter()
            st = compute(
                self.rows, self.t.bot_names, name=self.t.name, table_size=self.t.table_size, scheduled=self.scheduled
            )
            self._table = live_table(
                st,
                self.runner.running if self.runner else 0,
                self.err.width,
                self.runner.in_flight() if self.runner else None,
            )
            self._cost = time.perf_counter() - t0
            self._next = now + max(1.0, 20 * self._cost)  # the loop must not spend long here
        return Group(self.progress, self._table)

    def notify(self, text: str) -> None:
        if self.live is not None:
            self.live.console.print(text, highlight=False)
        else:
            self.err.print(text, highlight=False)

    def _running(self, finishing: int = 0) -> str:
        """`games (5 running)`, with workers `games (5 running: w0 3, w1 2)`."""
        running = (self.runner.running - finishing) if self.runner else 0
        where = self.runner.in_flight() if self.runner else {}
        per_worker = ", ".join(f"{name} {n}" for name, n in where.items()) if set(where) - {"local"} else ""
        return f"games ({running} running" + (f": {per_worker})" if per_worker else ")")

    def on_start(self, g: ScheduledGame) -> None:
        if self.progress is not None:
            self.progress.update(self.task, description=self._running())

    def on_game(self, row: GameRow) -> None:
        self.rows.append(row)
        if self.live is not None:
            self.progress.update(self.task, advance=1, description=self._running(1))  # this game is still counted
            self.live.update(self._view())
        elif len(self.rows) % self._every == 0 or len(self.rows) == self.scheduled:
            pct = 100 * len(self.rows) / max(1, self.scheduled)
            self.err.print(f"[{len(self.rows)}/{self.scheduled}] {pct:.0f}% games finished", highlight=False)


async def _run(
    t: Tournament,
    store: Store,
    schedule: list[ScheduledGame],
    log_dir: Path,
    concurrency: int,
    ui: _Ui,
    placement: Placement,
    live: Any,
    dashboard: Any,
) -> RunOutcome:
    from referee.live.serve import open_planned

    await build_bots(t, ui.notify)
    check_commands(t)
    runner = TournamentRunner(
        t,
        store,
        schedule,
        log_dir=log_dir,
        concurrency=concurrency,
        on_game=ui.on_game,
        on_start=ui.on_start,
        placement=placement,
        watch_games=live.watch_games,
    )
    ui.runner = runner
    for note in runner.notes:
        ui.notify(escape(note))  # a path is text, not markup
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_signals, runner, ui.notify)
        async with open_planned(dashboard):
            outcome = await runner.run()
        nursery.cancel_scope.cancel()
    return outcome


@app.command()
@expected_errors
def tournament(
    config: Annotated[
        Path, typer.Argument(metavar="CONFIG", help="Tournament config file (TOML; see tournaments/README.md).")
    ],
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", help="Results database (default: results/<config stem>/tournament.db next to the config)."
        ),
    ] = None,
    log_dir: Annotated[
        Path | None,
        typer.Option(
            "--log-dir", help="Folder for the game logs (default: logs/ next to the default database, or <db>-logs/)."
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            "-j",
            min=0,
            metavar="N",
            help="Games played at once, in all (default: the config's `concurrency`; 0: automatic, cores - 1 and at "
            "least 1).",
        ),
    ] = None,
    resume: Annotated[
        bool | None,
        typer.Option(
            "--resume/--fresh",
            help="--resume: continue the existing database (also the default when it exists); --fresh: delete it and "
            "its logs and start over.",
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            "-w",
            min=0,
            metavar="N",
            help="Spread the games over N worker processes of this machine (one Trio loop each), for when one loop "
            "cannot keep up: many fast games on several cores. 0: all in this process.",
        ),
    ] = 0,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            metavar="ADDRESS",
            help="Play the games on the workers of a running Dask scheduler, e.g. tcp://10.0.0.5:8786: more machines "
            "than one (needs the \\[cluster] extra; docs/cluster.md).",
        ),
    ] = None,
    serve: ServeOpt = False,
    port: PortOpt = 0,
    host: HostOpt = "127.0.0.1",
    no_open: NoOpenOpt = False,
    reveal_delay: RevealOpt = None,
) -> None:
    """Run a round robin or gauntlet from a config file; resumes where it stopped.

    Bots run sandboxed unless the config says `sandbox = false`: that needs
    bubblewrap, and for `freeze_idle` (on by default) root and a cgroup
    freezer; `chicago-referee doctor` says what this machine offers.

    Where games run: this process plays `-j` of them at once in one loop,
    which suits most tournaments; `-w N` adds worker processes on this
    machine when that one loop is the bottleneck; `--cluster` uses other
    machines. Results, standings and resume are the same in every case.
    """
    placement = Placement(workers=workers, cluster=cluster)
    if cluster:
        import_distributed()  # before anything is written: a missing extra is a one-line error
    t = load_config(config)
    db_path, logs = default_paths(config, db, log_dir)
    delay = reveal_seconds(reveal_delay)
    if delay is not None and not serve:
        raise typer.BadParameter("needs --serve (or run `chicago-referee serve` with it)", param_hint="--reveal-delay")
    check_results(db_path, logs, resume)
    if db is None:
        ignore_in_git(db_path, config)
    asked = t.concurrency if concurrency is None else concurrency  # 0 is automatic, in the config and here
    conc = asked or placement.default_concurrency() or default_concurrency()
    store = Store.open(db_path, create=True, lock=True)
    outcome: RunOutcome | None = None
    try:
        refuse_lost_results(db_path, logs, store.finished_count())
        schedule = prepare_store(t, store)
        keys = {g.key for g in schedule}
        rows = [r for r in store.games() if r.key in keys]
        _announce(t, store, schedule, rows, conc, placement, logs)
        served = _Served(serve, delay, host, port, no_open)
        outcome = _play(t, store, schedule, rows, logs, conc, placement, served)
        from referee.tournament.standings import from_store
        from referee.tournament.standings_tables import all_tables

        _print_tables(out, all_tables(from_store(store), out.width))
        if outcome.commitment is not None and outcome.commitment.revealed:
            _print_reveal(db_path)
    except KeyboardInterrupt:  # Ctrl-C outside the games (building bots, printing): no traceback
        err.print("interrupted", highlight=False)
    finally:
        store.close()
    _say_outcome(outcome, resume_command(config, db, log_dir, workers, cluster))


def _announce(
    t: Tournament,
    store: Store,
    schedule: list[ScheduledGame],
    rows: list[GameRow],
    conc: int,
    placement: Placement,
    logs: Path,
) -> None:
    """What will be played, where, where results go, the seed's commitment."""
    sealed = store.commitment()
    assert sealed is not None  # prepare_store committed
    n_tables = len({g.table for g in schedule})
    say_phrases(
        err,
        [
            f"{t.name}: {t.game.title}",
            f"{t.format} of {len(t.bots)} bots at {t.table_size} seats:",
            f"{n_tables} tables x {t.deal_sets} deal sets = {len(schedule)} games",
            f"clock {format_time_control(t.time_control)}",
            f"failure policy {t.policy.mode}",
            f"concurrency {conc}",
            *([placement.describe()] if placement.workers or placement.cluster else []),
            "bots sandboxed" if t.sandbox is not None else "bots NOT sandboxed (sandbox = false)",
        ],
    )
    err.print(f"results: {shown_path(store.path)}", highlight=False, markup=False, soft_wrap=True)
    err.print(f"logs:    {shown_path(logs)}", highlight=False, markup=False, soft_wrap=True)
    _print_seed(sealed)
    if rows:
        err.print(f"resuming: {len(rows)} of {len(schedule)} games already finished", highlight=False)


@dataclass(frozen=True)
class _Served:
    """Whether and where the live dashboard is served."""

    serve: bool
    delay: float | None
    host: str
    port: int
    no_open: bool


def _play(
    t: Tournament,
    store: Store,
    schedule: list[ScheduledGame],
    rows: list[GameRow],
    logs: Path,
    conc: int,
    placement: Placement,
    served: _Served,
) -> RunOutcome:
    """The games, with progress on the terminal and the live stream (served, if asked)."""
    from referee.live.serve import DashboardPlan, tournament_source, tournament_writer

    live = tournament_writer(
        store.path, name=t.name, game=t.game.name, bots=list(t.bot_names), scheduled=len(schedule), finished=len(rows)
    )
    outcome: RunOutcome | None = None
    try:
        with _Ui(err, t, rows, len(schedule)) as ui:
            dashboard = None
            if served.serve:  # the live stream beside the database, served from this process
                source, public, private = tournament_source(store.path, served.delay)
                dashboard = DashboardPlan(
                    source,
                    public,
                    private,
                    host=served.host,
                    port=served.port,
                    open_browser=not served.no_open,
                    on_url=lambda url: ui.notify(f"live dashboard: {url}"),
                )
            outcome = trio.run(_run, t, store, schedule, logs, conc, ui, placement, live, dashboard)
    finally:
        live.close(outcome.status if outcome is not None else "aborted")
    if live.broken != "closed":
        err.print(f"warning: {live.broken}; the games were not affected", highlight=False, soft_wrap=True)
    return outcome


def _say_outcome(outcome: RunOutcome | None, resume: list[str]) -> None:
    """How it ended; if not completed, how to resume (exit code 130)."""
    if outcome is not None:
        err.print(
            f"{outcome.status}: {outcome.recorded} games played in {outcome.seconds:.1f} s; "
            f"{outcome.finished}/{outcome.scheduled} finished",
            highlight=False,
        )
    if outcome is None or outcome.status != "completed":
        left = f"{outcome.remaining} games left; " if outcome is not None else ""
        err.print(f"{left}resume with:  {shlex.join(resume)}", highlight=False)
        raise typer.Exit(130)


@app.command()
@expected_errors
def standings(
    db: Annotated[Path, typer.Argument(help="Results database (or the tournament config: its default database).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON on stdout.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the standings table as CSV on stdout.")] = False,
    html_out: Annotated[Path | None, typer.Option("--html", help="Write a self-contained HTML report here.")] = None,
) -> None:
    """Print a tournament's standings from its results database (works while it runs)."""
    from referee.tournament.report import MAX_REPLAY_PAGES, to_html, write_replay_pages
    from referee.tournament.standings import from_store
    from referee.tournament.standings_export import to_csv, to_dict
    from referee.tournament.standings_tables import all_tables

    if db.suffix == ".toml":
        db, _ = default_paths(db, None, None)
    store = open_for_reading(db)
    try:
        st = from_store(store)
        if html_out is not None:
            html_out.parent.mkdir(parents=True, exist_ok=True)
            _written, skipped = write_replay_pages(st, store)
            if skipped:
                err.print(
                    f"replay pages written for the first {MAX_REPLAY_PAGES} games without one; "
                    f"{skipped} more link their log (chicago-referee replay LOG --html PAGE writes one)",
                    highlight=False,
                )
            html_out.write_text(to_html(st, store, html_out), encoding="utf-8")
            err.print(f"wrote {html_out}", highlight=False)
        if as_json:
            sys.stdout.write(json.dumps(to_dict(st), indent=2) + "\n")
        elif as_csv:
            sys.stdout.write(to_csv(st))
        else:
            _print_tables(out, all_tables(st, out.width))
            runs = store.runs()
            killed = sum(1 for r in runs if r.status == "running")
            err.print(
                f"{st.finished}/{st.scheduled} games finished over {len(runs)} run(s)"
                + (f" ({killed} ended without a goodbye: killed, or still running)" if killed else ""),
                highlight=False,
            )
    finally:
        store.close()
