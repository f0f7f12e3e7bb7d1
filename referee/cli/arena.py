"""`chicago-referee arena ...`: a competition as a service (docs/arena.md).

`arena init` makes an arena's folder, `arena user` manages who may submit.
A token is printed once, when it is issued; the arena keeps only its hash.
`arena kit` writes a competitor a starter bot to begin from.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import trio
import typer

from referee.arena.kits import KIT_LANGUAGES  # names only: the kit's files load when `arena kit` runs
from referee.cli.common import EXIT_FAILED, GameOpt, app, err, expected_errors, out
from referee.errors import ConfigError
from referee.games import get_game

if TYPE_CHECKING:  # the arena's modules load when an arena command runs: the other commands start faster
    from referee.arena.server import ArenaServer
    from referee.arena.store import ArenaStore
    from referee.arena.users import IssuedToken

arena_app = typer.Typer(
    no_args_is_help=True,
    help="Host a competition: competitors submit bots; the arena builds, checks, plays and rates them.",
)
user_app = typer.Typer(no_args_is_help=True, help="Who may submit: add users, issue and revoke their tokens.")
arena_app.add_typer(user_app, name="user")
app.add_typer(arena_app, name="arena")

FolderArg = Annotated[Path, typer.Argument(metavar="FOLDER", help="The arena's folder (holds arena.toml).")]
UserArg = Annotated[str, typer.Argument(metavar="USER", help="A user name: lower-case letters, digits, '_', '-'.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]


@arena_app.command("init")
@expected_errors
def init(
    folder: FolderArg,
    game_name: GameOpt = "chicago",
    table_size: Annotated[
        int | None, typer.Option("--table-size", min=2, max=4, help="Seats at a table (default 2).")
    ] = None,
) -> None:
    """Make an arena's folder: arena.toml (every key, commented), its database and folders."""
    from referee.arena.config import CONFIG_NAME, load_arena, template
    from referee.arena.store import ArenaStore

    game = get_game(game_name)
    seats = table_size or min(game.seat_counts)
    if seats not in game.seat_counts:
        counts = " or ".join(str(c) for c in game.seat_counts)
        raise ConfigError(f"--table-size: {game.title} is played at {counts} seats, not {seats}")
    config = folder / CONFIG_NAME
    if config.exists():
        raise ConfigError(f"{config} exists: this folder is an arena already (edit it, or choose another folder)")
    folder.mkdir(parents=True, exist_ok=True)
    config.write_text(template(folder.resolve().name, game.name, seats), encoding="utf-8")
    load_arena(folder)  # what init writes must load
    ArenaStore.create(folder).close()
    err.print(
        f"made the arena {folder}: edit {config}, add users with `chicago-referee arena user add`", highlight=False
    )


def _opened(folder: Path) -> ArenaStore:
    from referee.arena.config import load_arena
    from referee.arena.store import ArenaStore

    load_arena(folder)  # says clearly when the folder is not an arena
    return ArenaStore.open(folder)


def _print_token(issued: IssuedToken, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(issued.as_dict()) + "\n")
        return
    role = " (admin)" if issued.admin else ""
    err.print(f"token for {issued.user}{role}, shown this once (the arena keeps only its hash):", highlight=False)
    out.print(issued.token, highlight=False, markup=False)


@user_app.command("add")
@expected_errors
def user_add(
    folder: FolderArg,
    name: UserArg,
    admin: Annotated[bool, typer.Option("--admin", help="May do what the host can.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Add a user and print their token, once."""
    from referee.arena.store import now_text
    from referee.arena.users import add_user

    store = _opened(folder)
    try:
        with store.transaction() as conn:
            issued = add_user(conn, name, admin=admin, now=now_text())
    finally:
        store.close()
    _print_token(issued, as_json)


@user_app.command("token")
@expected_errors
def user_token(folder: FolderArg, name: UserArg, as_json: JsonOpt = False) -> None:
    """Issue a user a new token (lost or leaked); the old one stops working at once."""
    from referee.arena.users import new_token

    store = _opened(folder)
    try:
        with store.transaction() as conn:
            issued = new_token(conn, name)
    finally:
        store.close()
    _print_token(issued, as_json)


@user_app.command("revoke")
@expected_errors
def user_revoke(folder: FolderArg, name: UserArg) -> None:
    """Stop a user's token; their bots and results stay."""
    from referee.arena.store import now_text
    from referee.arena.users import revoke

    store = _opened(folder)
    try:
        with store.transaction() as conn:
            revoke(conn, name, now=now_text())
    finally:
        store.close()
    err.print(f"revoked the token of {name}", highlight=False)


@user_app.command("list")
@expected_errors
def user_list(folder: FolderArg, as_json: JsonOpt = False) -> None:
    """The arena's users (never their tokens)."""
    from referee.arena.users import list_users

    store = _opened(folder)
    try:
        users = store.read(list_users)
    finally:
        store.close()
    if as_json:
        rows = [{"user": u.name, "admin": u.admin, "created": u.created, "revoked": u.revoked} for u in users]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    for u in users:
        state = f"revoked {u.revoked}" if u.revoked else "active"
        out.print(f"{u.name:<32} {'admin' if u.admin else 'user':<5}  since {u.created}  {state}", highlight=False)
    if not users:
        err.print("no users yet: `chicago-referee arena user add FOLDER NAME`", highlight=False)


# ------------------------------------------------------------------ serving


@arena_app.command("serve")
@expected_errors
def serve(
    folder: FolderArg,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (default 127.0.0.1: this machine only).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (0: a free one).")] = 8000,
    workers: Annotated[
        int, typer.Option("--workers", min=0, help="Play the games on N worker processes (as `tournament`).")
    ] = 0,
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            metavar="ADDRESS",
            help="Play the games on a running Dask cluster (tcp://HOST:PORT), as `tournament`; "
            "every worker must see this arena's folder at the same path (docs/arena.md).",
        ),
    ] = None,
    public_name: Annotated[
        list[str] | None,
        typer.Option(
            "--public-name",
            metavar="NAME",
            help="A host name people reach the arena by (repeat for more); other Host headers are refused.",
        ),
    ] = None,
    secure_cookies: Annotated[
        bool,
        typer.Option("--secure-cookies", help="Mark session cookies Secure: the arena sits behind TLS (a proxy)."),
    ] = False,
) -> None:
    """Run the arena until Ctrl-C: its pages and API, builds, checks, games and ratings. Resumes where it stopped."""
    from referee.arena.config import load_arena
    from referee.arena.server import ArenaServer
    from referee.arena.store import ArenaStore
    from referee.live.arena_feed import ArenaLive
    from referee.seats.isolation import require_isolation
    from referee.tournament.executors import Placement
    from referee.web.arena_site import make_site
    from referee.web.security import allowed_hosts

    arena = load_arena(folder)
    require_isolation(arena.sandbox)  # fail closed: strangers' bots never run unsandboxed
    if host not in ("127.0.0.1", "localhost", "::1"):
        err.print(
            f"serving on {host}: reachable from the network; put TLS in a reverse proxy in front of it",
            highlight=False,
        )
    store = ArenaStore.open(folder)
    reader = ArenaStore.open(folder)  # the pages' own connection: their reads never wait on the games' writes
    hosts = allowed_hosts(host, public_name or ())
    # Games played in this process are watched move by move on /live/; a pool's or a cluster's are not.
    live = None if workers or cluster else ArenaLive(arena.name, arena.game.name, arena.reveal_delay)
    site = partial(
        make_site, reader=reader, hosts=hosts, secure_cookies=secure_cookies, live_routes=live.routes if live else ()
    )
    server = ArenaServer(
        arena,
        store,
        Placement(workers=workers, cluster=cluster),
        arena.matchmaking,
        site,
        watch_games=live.watch_games if live else None,
        watch_final=live.watch_final if live else None,
    )
    if live is not None:
        live.unit_running = server.unit_running
        live.final_running = lambda: server.final.playing
    try:
        trio.run(_serve, server, host, port)
    finally:
        if live is not None:
            live.close()
        reader.close()
        store.close()


async def _serve(server: ArenaServer, host: str, port: int) -> None:
    def said_url(url: str) -> None:
        out.print(f"arena {server.arena.name} at {url}/ (its API under {url}/api/)", highlight=False, markup=False)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(_progress, server)
        await server.run(host, port, said_url)


async def _progress(server: ArenaServer) -> None:
    """One line that says what the arena is doing: in place on a terminal; in a
    log, when the queue, the leader or a host's switch changes, and once a minute."""
    last, printed = "", 0.0
    while True:
        s = server.status()
        line = (
            f"waiting {s.queued}, building {s.building}, checking {s.checking}; "
            f"units running {s.units_running}, games played {s.games_played}"
            + (f"; leading {s.leader}" if s.leader else "")
            + ("; matchmaking paused" if s.paused else "")
            + ("; submissions closed" if s.submissions_closed else "")
        )
        state = (s.queued, s.building, s.checking, s.leader, s.paused, s.submissions_closed)
        if err.is_terminal:
            err.file.write("\r\x1b[K" + line)
            err.file.flush()
        elif str(state) != last or time.monotonic() - printed >= 60:
            err.print(line, highlight=False, markup=False, soft_wrap=True)  # one line in a log, however long
            printed = time.monotonic()
        last = str(state)
        await trio.sleep(1.0)


# ------------------------------------------------------------------ a competitor's side

TokenFileOpt = Annotated[
    Path | None,
    typer.Option("--token-file", metavar="FILE", help="File holding your token (or set CHICAGO_REFEREE_ARENA_TOKEN)."),
]
UrlArg = Annotated[str, typer.Argument(metavar="URL", help="The arena's address, http://HOST:PORT.")]
FOLLOWED = ("active", "failed", "retired")


@arena_app.command("submit")
@expected_errors
def submit(
    url: UrlArg,
    bot_folder: Annotated[Path, typer.Argument(metavar="FOLDER", help="Your bot's folder (packed as it is).")],
    token_file: TokenFileOpt = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The bot's name in the arena (default: your user name).")
    ] = None,
    follow: Annotated[bool, typer.Option("--follow/--no-follow", help="Wait until it is active or failed.")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Submit a bot folder; follow it to `active`, or to the one-line reason it failed."""
    from referee.arena.archives import ArchiveLimits, pack_folder
    from referee.arena.client import multipart, read_token, request

    token = read_token(token_file)
    if not bot_folder.is_dir():
        raise ConfigError(f"{bot_folder}: not a folder: give your bot's folder")
    archive = pack_folder(bot_folder, ArchiveLimits())
    body, ctype = multipart(archive, name)
    status, sub = request(url, "/api/submissions", token=token, body=body, content_type=ctype)
    fresh = "submitted" if status == 201 else "already submitted (the same files)"
    err.print(f"{fresh}: {sub['bot']} version {sub['version']}, {sub['status']}", highlight=False)
    seen = sub["status"]
    while follow and sub["status"] not in FOLLOWED:
        time.sleep(1.0)
        _status, sub = request(url, f"/api/submissions/{sub['id']}", token=token)
        if sub["status"] != seen:
            seen = sub["status"]
            err.print(f"{sub['bot']} version {sub['version']}: {seen}", highlight=False)
    if as_json:
        sys.stdout.write(json.dumps(sub, indent=2) + "\n")
    if sub["status"] == "failed":
        err.print(f"failed: {sub.get('reason', 'no reason given')}", highlight=False, markup=False)
        raise typer.Exit(EXIT_FAILED)


@arena_app.command("status")
@expected_errors
def status(url: UrlArg, as_json: JsonOpt = False) -> None:
    """The arena's leaderboard, from its API."""
    from referee.arena.client import request

    _code, board = request(url, "/api/leaderboard")
    if as_json:
        sys.stdout.write(json.dumps(board, indent=2) + "\n")
        return
    out.print(f"{board['arena']}: {board['game']}, {board['table_size']} seats; order: {board['order']}", markup=False)
    for e in board["bots"]:
        r = e["rating"]
        out.print(
            f"{e['rank']:>3}. {e['bot']:<24} v{e['version']:<3} {e['owner']:<16} {r['ordinal']:8.2f}"
            f"  (mu {r['mu']:.2f} +- {2 * r['sigma']:.2f})  {e['games']} games, {e['units']} units",
            highlight=False,
            markup=False,
        )
    for d in board.get("disqualified", []):
        out.print(f"     {d['bot']:<24} disqualified since {d['since']}: {d['reason']}", highlight=False, markup=False)
    if not board["bots"]:
        err.print("no bot is active yet", highlight=False)
    if board.get("matchmaking") == "paused":
        err.print("matchmaking is paused by the host: no new units start", highlight=False)
    if board.get("submissions_close"):
        verb = "closed" if board.get("submissions") == "closed" else "close"
        err.print(f"submissions {verb} at {board['submissions_close']}", highlight=False, markup=False)


@arena_app.command("kit")
@expected_errors
def kit(
    language: Annotated[
        str, typer.Argument(metavar="LANG", help=f"The kit's language: {', '.join(KIT_LANGUAGES)}.", show_default=False)
    ],
    folder: Annotated[Path, typer.Argument(metavar="FOLDER", help="A new or empty folder to write it to.")],
) -> None:
    """Write a starter kit: a small, complete bot in LANG that the arena builds, checks and plays as it is."""
    from referee.arena.kits import get_kit, kit_recipe, local_steps, missing_toolchains, write_kit
    from referee.arena.toolchains import probe_toolchains

    starter = get_kit(language)
    written = write_kit(starter, folder)
    names = ", ".join(str(path.relative_to(folder)) for path in written)
    err.print(
        f"wrote the {starter.title} starter kit to {folder}: {names}", highlight=False, markup=False, soft_wrap=True
    )
    missing = missing_toolchains(starter, probe_toolchains(starter.toolchains))
    if missing:
        err.print(
            f"note: this machine has no {' or '.join(missing)}: install it to build and check the kit here "
            f"(Debian: {starter.install})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    err.print("build and check it here, then submit it:", highlight=False)
    for step in local_steps(kit_recipe(folder), folder):
        out.print(f"  {step}", highlight=False, markup=False, soft_wrap=True)
    submit = f"chicago-referee arena submit URL {shlex.quote(os.fspath(folder))} --token-file FILE"
    out.print(f"  {submit}", highlight=False, markup=False, soft_wrap=True)
