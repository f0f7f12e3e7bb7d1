"""`arena init` and `arena user`: an arena's folder, its config, its users and
their tokens, through the command line as a host types it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.arena.config import (
    CONFIG_NAME,
    TEMPLATE,
    ArenaFile,
    BuildsEntry,
    MatchmakingEntry,
    UploadsEntry,
    load_arena,
    parse_arena,
)
from referee.arena.store import DB_NAME, ArenaStore
from referee.arena.users import user_for_token
from referee.cli import app
from referee.errors import ConfigError, ResultsError

runner = CliRunner()


def cli(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


def made(tmp_path: Path, *extra: str) -> Path:
    folder = tmp_path / "comp"
    code, _out, err = cli("arena", "init", str(folder), *extra)
    assert code == 0, err
    return folder


def add(folder: Path, name: str, *extra: str) -> dict[str, object]:
    code, out, err = cli("arena", "user", "add", str(folder), name, "--json", *extra)
    assert code == 0, err
    return json.loads(out)


# ------------------------------------------------------------------ init


def test_init_writes_a_config_with_every_key_that_loads_as_written(tmp_path: Path) -> None:
    folder = made(tmp_path, "--game", "ghost-euchre")
    text = (folder / CONFIG_NAME).read_text()
    arena = load_arena(folder)
    assert arena.game.name == "ghost_euchre" and arena.table_size == 3  # Euchre's only table
    assert arena.archives.max_upload_bytes == 10 << 20 and arena.builds.wall_seconds == 300
    assert arena.sandbox.freeze_idle  # the arena always sandboxes, and freezes idle bots
    structs = ((ArenaFile, ""), (UploadsEntry, "[uploads]"), (BuildsEntry, "[builds]"), (MatchmakingEntry, "[mm]"))
    for struct, table in structs:
        for key in struct.__struct_fields__:
            shown = f"\n{key} =" in text or f"[{key}]" in text
            optional = getattr(struct(), key) is None and f"\n# {key} =" in text  # no default: shown commented
            assert shown or optional, f"{table} {key} is not in the template"
    assert (folder / DB_NAME).is_file() and all((folder / f).is_dir() for f in ("archives", "builds", "logs"))


def test_an_arena_named_by_a_relative_folder_is_held_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bots' commands and folders are made from it: relative, they would name nothing inside a sandbox."""
    made(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert load_arena(Path("comp")).folder == (tmp_path / "comp").resolve()


def test_init_refuses_an_existing_arena_and_a_table_the_game_has_not(tmp_path: Path) -> None:
    folder = made(tmp_path)
    (folder / CONFIG_NAME).write_text((folder / CONFIG_NAME).read_text() + "# mine\n")
    code, _out, err = cli("arena", "init", str(folder))
    assert code == 2 and "is an arena already" in err
    assert (folder / CONFIG_NAME).read_text().endswith("# mine\n")  # untouched
    code, _out, err = cli("arena", "init", str(tmp_path / "e"), "--game", "ghost-euchre", "--table-size", "2")
    assert code == 2 and "played at 3 seats, not 2" in err
    assert not (tmp_path / "e").exists()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("table_size = 5", "table_size: Swedish Chicago is played at 2 or 3 or 4 seats, not 5"),
        ("[uploads]\nmax_filez = 3", "uploads.max_filez: unknown key (did you mean 'max_files'?)"),
        ("[builds]\nwall_seconds = 0", "builds.wall_seconds: must be more than 0"),
        ("[sandbox]\nmemory = 'lots'", "sandbox.memory: 'lots' is not a positive size"),
        ("failure_policy = 'pray'", "failure_policy: invalid value 'pray'; choose forfeit or substitute"),
        ("game = [", "not valid TOML"),
        ("[matchmaking]\ncoverage_share = 2", "matchmaking.coverage_share must be between 0 and 1"),
    ],
)
def test_a_bad_key_is_one_line_naming_it(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_arena(text + "\n", tmp_path, tmp_path / CONFIG_NAME)
    assert says in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith(str(tmp_path / CONFIG_NAME))


def test_an_empty_config_means_every_default_and_the_template_says_them() -> None:
    defaults = parse_arena("", Path("x"))
    written = parse_arena(TEMPLATE.format(name="x", game="chicago", table_size=2), Path("x"))
    assert written == dataclasses.replace(defaults, name="x")


def test_commands_on_a_folder_that_is_not_an_arena_say_so(tmp_path: Path) -> None:
    code, _out, err = cli("arena", "user", "list", str(tmp_path))
    assert code == 2 and "not an arena folder" in err and "arena init" in err


# ------------------------------------------------------------------ users and tokens


def test_a_token_is_shown_once_and_only_its_hash_is_kept(tmp_path: Path) -> None:
    folder = made(tmp_path)
    host = add(folder, "host", "--admin")
    alice = add(folder, "alice")
    assert host["user"] == "host" and host["admin"] is True and alice["admin"] is False
    token = str(alice["token"])
    assert len(token) == 32 and int(token, 16) >= 0 and token != host["token"]
    db = (folder / DB_NAME).read_bytes() + b"".join(p.read_bytes() for p in folder.glob(f"{DB_NAME}-*"))
    assert token.encode() not in db  # not in the database, nor in its write-ahead log
    assert hashlib.sha256(token.encode()).hexdigest().encode() in db
    code, out, _err = cli("arena", "user", "list", str(folder), "--json")
    assert code == 0 and token not in out
    assert [(u["user"], u["admin"], u["revoked"]) for u in json.loads(out)] == [
        ("alice", False, None),
        ("host", True, None),
    ]


def test_tokens_authorise_until_revoked_and_a_new_one_replaces_the_old(tmp_path: Path) -> None:
    folder = made(tmp_path)
    old = str(add(folder, "alice")["token"])
    store = ArenaStore.open(folder)
    try:
        who = store.read(lambda c: user_for_token(c, old))
        assert who is not None and who.name == "alice" and who.active
        assert store.read(lambda c: user_for_token(c, old.upper())) is None  # not the token's text
        assert store.read(lambda c: user_for_token(c, "0" * 32)) is None
        assert store.read(lambda c: user_for_token(c, "x' OR '1'='1")) is None
        code, _out, err = cli("arena", "user", "revoke", str(folder), "alice")
        assert code == 0 and "revoked" in err
        assert store.read(lambda c: user_for_token(c, old)) is None
        code, out, _err = cli("arena", "user", "token", str(folder), "alice", "--json")
        fresh = json.loads(out)["token"]
        assert code == 0 and fresh != old
        assert store.read(lambda c: user_for_token(c, old)) is None
        who = store.read(lambda c: user_for_token(c, fresh))
        assert who is not None and who.name == "alice" and who.active
    finally:
        store.close()


def test_user_mistakes_are_one_line(tmp_path: Path) -> None:
    folder = made(tmp_path)
    add(folder, "alice")
    for args, says in [
        (("add", str(folder), "alice"), "user 'alice' exists"),
        (("add", str(folder), "Alice Smith"), "use 1-32 lower-case letters"),
        (("revoke", str(folder), "bob"), "no user 'bob'"),
        (("token", str(folder), "bob"), "no user 'bob'"),
    ]:
        code, out, err = cli("arena", "user", *args)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and out == ""


def test_a_damaged_database_is_one_line_and_nothing_is_lost_silently(tmp_path: Path) -> None:
    folder = made(tmp_path)
    (folder / DB_NAME).write_bytes(b"not a database at all" * 100)
    code, _out, err = cli("arena", "user", "add", str(folder), "alice")
    assert code == 2 and "arena database is damaged or is not one" in err and "Traceback" not in err
    with pytest.raises(ResultsError):
        ArenaStore.open(folder)


def test_a_database_of_another_version_is_refused(tmp_path: Path) -> None:
    folder = made(tmp_path)
    with sqlite3.connect(folder / DB_NAME) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ResultsError, match="version 99"):
        ArenaStore.open(folder)
