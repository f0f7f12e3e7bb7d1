"""`chicago-referee serve DB_OR_CONFIG`: a tournament's live dashboard.

It reads the results database read-only and follows the live stream beside
it (docs/live.md), so it runs beside the tournament process, before it,
after it or while it is resumed; `tournament --serve` and `match --serve`
start the same dashboard in their own process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import trio
import typer

from referee.cli.common import app, err, expected_errors
from referee.cli.live_options import HostOpt, NoOpenOpt, PortOpt, RevealOpt, print_url, reveal_seconds
from referee.errors import RefereeError


def database_of(target: Path) -> Path:
    """The results database of a config (its default place) or the database itself."""
    if target.suffix == ".toml":
        from referee.cli.results_folder import default_paths  # the one place that says where results go

        return default_paths(target, None, None)[0]
    return target


@app.command()
@expected_errors
def serve(
    target: Annotated[
        Path,
        typer.Argument(
            metavar="DB_OR_CONFIG",
            help="Results database, or the tournament config (its default database), or a match's live stream file: "
            "`match --serve --log-dir DIR` writes DIR/match.live.ndjson, and a tournament writes "
            "tournament.live.ndjson beside its database.",
        ),
    ],
    port: PortOpt = 0,
    host: HostOpt = "127.0.0.1",
    no_open: NoOpenOpt = False,
    reveal_delay: RevealOpt = None,
) -> None:
    """Serve a live dashboard of a tournament or match (running, finished or being resumed) until Ctrl-C.

    It follows the live stream file the tournament (or `match --serve
    --log-dir DIR`) writes while it plays, and reads the results database
    read-only, so it can run beside the games, before them or after them.
    """
    from referee.live.serve import open_dashboard, stream_source, tournament_source
    from referee.live.stream import PUBLIC_SUFFIX

    delay = reveal_seconds(reveal_delay)
    if target.name.endswith(PUBLIC_SUFFIX):
        if not target.is_file():
            raise RefereeError(f"{target}: no such live stream file")
        source, public, private = stream_source(target, delay)
    else:
        db = database_of(target)
        if target.suffix != ".toml" and not db.is_file():
            raise RefereeError(f"{db}: no such results database (has the tournament been started?)")
        source, public, private = tournament_source(db, delay)

    async def run() -> None:
        async with open_dashboard(
            source, public, private, host=host, port=port, open_browser=not no_open, on_url=print_url
        ):
            await trio.sleep_forever()

    if source.db is not None and source.db.error is not None:
        if source.db.path.is_file():
            raise RefereeError(source.db.error)
        err.print(
            f"no results at {source.db.path} yet: waiting for the tournament to start", highlight=False, soft_wrap=True
        )
    if not public.exists():
        err.print(
            f"no live stream at {public} yet: showing the results database; games appear once the tournament runs",
            highlight=False,
            soft_wrap=True,
        )
    trio.run(run)
