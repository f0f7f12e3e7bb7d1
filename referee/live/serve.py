"""Running a dashboard: the stream follower, the standings and the server.

`open_dashboard` serves a `LiveSource` on the referee's Trio loop with the
web seat's start-up (`referee.web.server.start_server`: 127.0.0.1 unless told
otherwise, a free port with 0, the printed URL good once, then a session
cookie) and follows the stream files until it is closed. `tournament_source` and `match_source` say what a
tournament's or a match's dashboard shows; `tournament_writer` and
`match_writer` open the streams the two write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import trio

from referee.live.app import Dashboard
from referee.live.board import LiveBoard
from referee.live.follow import DbStandings, follow
from referee.live.source import LiveSource
from referee.live.stream import PRIVATE_SUFFIX, PUBLIC_SUFFIX, LiveWriter, stream_paths
from referee.play.runner import log_path_for
from referee.web.server import Served, start_server

MATCH_STREAM = "match"


def tournament_source(db: Path, reveal_delay: float | None) -> tuple[LiveSource, Path, Path]:
    """A tournament's dashboard: its database read-only and the stream beside it."""
    standings = DbStandings(db)
    standings.refresh()
    public, private = stream_paths(db)
    title = standings.standings.name if standings.standings is not None else db.stem
    source = LiveSource(board=LiveBoard(reveal_delay), title=title, db=standings, log_of=standings.log_of)
    return source, public, private


def match_source(
    folder: Path, log_dir: Path | None, title: str, reveal_delay: float | None
) -> tuple[LiveSource, Path, Path]:
    """A match's dashboard: its stream in `folder`, its logs (if any) in `log_dir`."""
    public, private = stream_paths(folder / MATCH_STREAM)

    def log_of(game_id: int) -> Path | None:
        return log_path_for(log_dir, game_id)

    return LiveSource(board=LiveBoard(reveal_delay), title=title, log_of=log_of), public, private


def stream_source(public: Path, reveal_delay: float | None) -> tuple[LiveSource, Path, Path]:
    """A dashboard of a stream file alone (a match's, with its game logs beside it)."""
    name = public.name[: -len(PUBLIC_SUFFIX)] if public.name.endswith(PUBLIC_SUFFIX) else public.stem
    source, _, private = match_source(public.parent, public.parent, name, reveal_delay)
    return source, public, private.with_name(name + PRIVATE_SUFFIX)


def tournament_writer(db: Path, *, name: str, game: str, bots: list[str], scheduled: int, finished: int) -> LiveWriter:
    public, private = stream_paths(db)
    return LiveWriter(
        public, private, source="tournament", name=name, game=game, bots=bots, scheduled=scheduled, finished=finished
    )


def match_writer(folder: Path, *, name: str, game: str, bots: list[str], scheduled: int) -> LiveWriter:
    public, private = stream_paths(folder / MATCH_STREAM)
    return LiveWriter(public, private, source="match", name=name, game=game, bots=bots, scheduled=scheduled)


@asynccontextmanager
async def open_dashboard(
    source: LiveSource,
    public: Path,
    private: Path | None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    on_url: Callable[[str], None] | None = None,
) -> AsyncIterator[Served]:
    """Serve the dashboard while the block runs."""
    async with trio.open_nursery() as nursery:
        served = await start_server(
            nursery,
            Dashboard(source).routes,
            host=host,
            port=port,
            open_browser=open_browser,
            on_url=on_url,
        )
        nursery.start_soon(follow, source.board, public, private, source.db)
        try:
            yield served
        finally:
            served.stop.set()
            nursery.cancel_scope.cancel()
            source.close()


@dataclass
class DashboardPlan:
    """A dashboard to serve beside a match or a tournament in the same process."""

    source: LiveSource
    public: Path
    private: Path | None
    host: str = "127.0.0.1"
    port: int = 0
    open_browser: bool = True
    on_url: Callable[[str], None] | None = None


@asynccontextmanager
async def open_planned(plan: DashboardPlan | None) -> AsyncIterator[Served | None]:
    """`open_dashboard` for a plan; nothing at all without one."""
    if plan is None:
        yield None
        return
    async with open_dashboard(
        plan.source,
        plan.public,
        plan.private,
        host=plan.host,
        port=plan.port,
        open_browser=plan.open_browser,
        on_url=plan.on_url,
    ) as served:
        yield served
