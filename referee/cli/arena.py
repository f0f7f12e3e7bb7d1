"""`chicago-referee arena ...`: a competition as a service (docs/arena.md).

`arena init` makes an arena's folder, `arena user` manages who may submit.
A token is printed once, when it is issued; the arena keeps only its hash.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from referee.arena.config import CONFIG_NAME, load_arena, template
from referee.arena.store import ArenaStore, now_text
from referee.arena.users import IssuedToken, add_user, list_users, new_token, revoke
from referee.cli.common import GameOpt, app, err, expected_errors, out
from referee.errors import ConfigError
from referee.games import get_game

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
