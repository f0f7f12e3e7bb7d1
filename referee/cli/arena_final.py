"""`chicago-referee arena final FOLDER`: the arena's final tournament, a round
robin of the leaderboard's top bots played as `tournament` plays, with a seed
committed to before the first game (docs/arena.md, "The final tournament").

The same command again resumes a final that was stopped or killed; a final
that has finished is not played again: the command says where its results are.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import TYPE_CHECKING, Annotated, Any

import trio
import typer

from referee.cli.arena import FolderArg, arena_app
from referee.cli.common import err, expected_errors, out, shown_path

if TYPE_CHECKING:
    from referee.arena.final import FinalPaths
    from referee.arena.final_run import OpenFinal
    from referee.tournament.executors import Placement
    from referee.tournament.run import RunOutcome
    from referee.tournament.store_rows import GameRow


@arena_app.command("final")
@expected_errors
def final(
    folder: FolderArg,
    deal_sets: Annotated[
        int,
        typer.Option(
            "--deal-sets",
            min=1,
            metavar="D",
            help="Deal sets every table plays (a deal set: one deal sequence under every rotation of the seats).",
        ),
    ],
    top: Annotated[
        int | None,
        typer.Option(
            "--top", min=2, metavar="N", help="The leaderboard's top N bots play (default: every active bot)."
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Start the final while the arena still takes submissions.")
    ] = False,
    workers: Annotated[
        int, typer.Option("--workers", "-w", min=0, metavar="N", help="Play the games on N worker processes.")
    ] = 0,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            metavar="ADDRESS",
            help="Play the games on a running Dask cluster (tcp://HOST:PORT); every worker must see this arena's "
            "folder at the same path.",
        ),
    ] = None,
) -> None:
    """Play the final: the active versions of the top N bots in a complete round robin.

    A fresh secret seed is committed to before the first game and revealed
    with its salt when the last game is in; anyone can then check every
    result with `chicago-referee verify --db FOLDER/final/tournament.db`.
    Stopped or killed, the same command resumes it exactly.
    """
    from referee.arena.config import load_arena
    from referee.arena.final import FinalPaths
    from referee.arena.final_run import final_concurrency, finished_commitment, open_final, prepare_final
    from referee.arena.store import ArenaStore
    from referee.seats.isolation import require_isolation
    from referee.tournament.executors import Placement, import_distributed

    placement = Placement(workers=workers, cluster=cluster)
    if cluster:
        import_distributed()  # before anything is written: a missing extra is a one-line error
    arena = load_arena(folder)
    require_isolation(arena.sandbox)  # fail closed, before a final is planned
    paths = FinalPaths(folder)
    if finished_commitment(paths) is not None:
        _say_finished(paths)
        return
    store = ArenaStore.open(folder)
    try:
        plan, t = prepare_final(arena, store, top=top, deal_sets=deal_sets, force=force, now=time.time())
    finally:
        store.close()
    opened = open_final(folder, plan, t)
    outcome: RunOutcome | None = None
    try:
        conc = final_concurrency(arena, placement)
        _announce(opened, conc, placement)
        outcome = trio.run(_play, opened, placement, conc)
        _print_standings(opened)
    except KeyboardInterrupt:  # Ctrl-C outside the games: no traceback
        err.print("interrupted", highlight=False)
    finally:
        opened.close()
    again = ["chicago-referee", "arena", "final", str(folder), "--deal-sets", str(deal_sets)]
    again += ["--top", str(top)] if top is not None else []
    again += ["--workers", str(workers)] if workers else []
    again += ["--cluster", cluster] if cluster else []
    _say_outcome(outcome, again, paths)


def _say_finished(paths: FinalPaths) -> None:
    db = shlex.quote(shown_path(paths.db))
    err.print("the final has finished and is not played again; its results:", highlight=False)
    for line in (
        f"  chicago-referee standings {db}",
        f"  chicago-referee verify --db {db}",
        "  GET /api/final on the arena's server",
    ):
        out.print(line, highlight=False, markup=False, soft_wrap=True)


def _announce(opened: OpenFinal, conc: int, placement: Placement) -> None:
    """Who plays, how many games, where the results go, the seed's commitment."""
    t, plan = opened.tournament, opened.plan
    sealed = opened.store.commitment()
    assert sealed is not None  # prepare_store committed
    field = f"the top {plan.top} bots" if plan.top is not None else "every active bot"
    tables = len({g.table for g in opened.schedule})
    where = f", {placement.describe()}" if placement.workers or placement.cluster else ""
    err.print(
        f"{t.name}: {field} of the leaderboard in a round robin at {t.table_size} seats: {_count(tables, 'table')} x "
        f"{_count(t.deal_sets, 'deal set')} = {_count(len(opened.schedule), 'game')}; concurrency {conc}{where}; "
        "bots sandboxed",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    for p in plan.participants:
        err.print(f"  {p.rank:>3}. {p.name} ({p.owner})", highlight=False, markup=False)
    err.print(f"results: {shown_path(opened.paths.db)}", highlight=False, markup=False, soft_wrap=True)
    err.print(f"logs:    {shown_path(opened.paths.logs)}", highlight=False, markup=False, soft_wrap=True)
    err.print(
        f"seed commitment: {sealed.commitment} (seed drawn in secret; publish this before the first game; "
        "seed and salt are revealed when the final completes)",
        highlight=False,
        soft_wrap=True,
    )
    finished = opened.store.finished_count()
    if finished:
        err.print(f"resuming: {finished} of {len(opened.schedule)} games already finished", highlight=False)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


async def _play(opened: OpenFinal, placement: Placement, conc: int) -> RunOutcome:
    from referee.arena.final_run import runner_for
    from referee.tournament.run import handle_signals

    total = len(opened.schedule)
    done = [opened.store.finished_count()]
    every = max(1, total // 20)

    def on_game(_row: GameRow) -> None:
        done[0] += 1
        if done[0] % every == 0 or done[0] == total:
            err.print(f"[{done[0]}/{total}] {100 * done[0] / total:.0f}% games finished", highlight=False)

    runner = runner_for(opened, placement, conc, on_game)
    for note in runner.notes:
        err.print(note, highlight=False, markup=False, soft_wrap=True)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(handle_signals, runner, lambda text: err.print(text, highlight=False))
        outcome = await runner.run()
        nursery.cancel_scope.cancel()
    return outcome


def _print_standings(opened: OpenFinal) -> None:
    from referee.tournament.standings import from_store
    from referee.tournament.standings_tables import all_tables

    items: list[Any] = all_tables(from_store(opened.store), out.width)
    for item in items:
        if isinstance(item, str):  # a line with a hash or a salt is not wrapped: it must copy whole
            out.print(item, highlight=False, markup=False, soft_wrap=re.search(r"[0-9a-f]{32}", item) is not None)
        else:
            out.print(item, highlight=False)


def _say_outcome(outcome: RunOutcome | None, again: list[str], paths: FinalPaths) -> None:
    """How it ended: the command that checks a completed final, or the one that resumes (exit 130)."""
    if outcome is not None and outcome.status == "completed":
        out.print(
            "anyone can check the deals, the logs and every result with: "
            f"chicago-referee verify --db {shlex.quote(shown_path(paths.db))}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        err.print(f"completed: {outcome.recorded} games played in {outcome.seconds:.1f} s", highlight=False)
        return
    if outcome is not None:
        err.print(f"{outcome.status}: {outcome.finished}/{outcome.scheduled} games finished", highlight=False)
    err.print(f"resume with:  {shlex.join(again)}", highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(130)
