"""The host's controls and the owner's reactivation, through httpx against the
ASGI app under Trio, on rows written the way the arena writes them: who may
use each route, what a bad body gets, and what each control does to the
arena (the matchmaker, the uploads, the leaderboard, the exports)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from arena_rows import field, record
from timing import scaled
from trio.testing import wait_all_tasks_blocked
from typer.testing import CliRunner

from referee.arena import client
from referee.arena.api import make_app
from referee.arena.config import CONFIG_NAME, load_arena, template
from referee.arena.export import GAME_COLUMNS, RATING_COLUMNS, UNIT_COLUMNS
from referee.arena.final import FinalRefused, check_can_start
from referee.arena.refit import fit_active
from referee.arena.server import ArenaServer
from referee.arena.store import DB_NAME, SCHEMA_VERSION, ArenaStore, now_text
from referee.arena.submissions import SUBMISSIONS_SCHEMA, activate, add_submission, claim_bot, fail
from referee.arena.units import UNITS_SCHEMA, log_name, record_game, start_unit
from referee.arena.users import USERS_SCHEMA, add_user, new_token
from referee.cli import app
from referee.tournament.executors import Placement

BOT = b"import sys\nfor line in sys.stdin:\n    pass\n"


def zipped(text: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("main.py", text)
    return buf.getvalue()


class Field:
    """arena_rows' field (ace v1 retired, ace v2 and bee v1 active, one finished
    unit between them), tokens for alice, bob and the admin `host`, an app
    whose `on_change` calls are counted."""

    def __init__(self, folder: Path, extra_config: str = "") -> None:
        folder.mkdir()
        (folder / CONFIG_NAME).write_text(extra_config + "\n" + template("host", "chicago", 2))
        ArenaStore.create(folder).close()
        self.folder = folder
        self.store, self.ids = field(folder)
        with self.store.transaction() as conn:
            self.tokens = {"host": add_user(conn, "host", admin=True, now=now_text()).token}
            for user in ("alice", "bob"):
                self.tokens[user] = new_token(conn, user).token
        self.changes = 0
        self.on_change = self._changed
        self.arena = load_arena(folder)

    def _changed(self) -> None:
        self.changes += 1

    def _notify(self) -> None:  # whatever `on_change` is now (a test may hand it to a server)
        self.on_change()

    def client(self) -> httpx.AsyncClient:
        app = make_app(self.arena, self.store, self._notify)
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://arena")

    def auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.folder / DB_NAME) as conn:  # another connection: only what is committed
            return conn.execute(query).fetchall()


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Field]:
    f = Field(tmp_path / "comp")
    yield f
    f.store.close()


ADMIN_ROUTES = [
    ("POST", "/api/admin/pause", {}),
    ("POST", "/api/admin/resume", {}),
    ("POST", "/api/admin/close", {}),
    ("POST", "/api/admin/open", {}),
    ("POST", "/api/admin/bots/bee/disqualify", {"reason": "reads the deck"}),
    ("POST", "/api/admin/bots/bee/reinstate", {}),
    ("GET", "/api/admin/users", None),
    ("POST", "/api/admin/users", {"user": "carol"}),
    ("POST", "/api/admin/users/bob/revoke", {}),
    ("POST", "/api/admin/users/bob/token", {}),
    ("GET", "/api/admin/export.json", None),
    ("GET", "/api/admin/export/games.csv", None),
]
STATE = "SELECT (SELECT count(*) FROM controls), (SELECT count(*) FROM disqualifications), (SELECT count(*) FROM users)"


# ------------------------------------------------------------------ who may


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ROUTES)
async def test_an_admin_route_is_401_without_a_token_and_403_for_a_user_and_changes_nothing(
    arena: Field, method: str, path: str, body: dict[str, Any] | None
) -> None:
    before = arena.rows(STATE)
    async with arena.client() as c:
        anonymous = await c.request(method, path, json=body)
        user = await c.request(method, path, json=body, headers=arena.auth("alice"))
    assert anonymous.status_code == 401 and "needs your token" in anonymous.json()["error"]
    assert user.status_code == 403 and user.json() == {"error": "this is the host's: it needs an admin token"}
    assert arena.rows(STATE) == before and arena.changes == 0
    assert arena.tokens["bob"] not in user.text


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/api/admin/pause", b'{"now": true}', "the body: Object contains unknown field `now`"),
        ("/api/admin/close", b'{"at": "tomorrow"}', "the body: Invalid RFC3339 encoded datetime - at `$.at`"),
        ("/api/admin/close", b'{"at": "2026-12-24T18:00:00"}', "has no time zone: write it in UTC"),
        ("/api/admin/close", b"{at: 1}", "the body is not JSON"),
        ("/api/admin/bots/bee/disqualify", b"{}", "the body: Object missing required field `reason`"),
        ("/api/admin/bots/bee/disqualify", b'{"reason": "  "}', "the reason is empty"),
        ("/api/admin/bots/bee/disqualify", b'{"reason": "a\\nb"}', "the reason must be one line of visible text"),
        ("/api/admin/bots/bee/disqualify", b'{"reason": "x\\u202ey"}', "one line of visible text: it holds x\\u202ey"),
        ("/api/admin/bots/bee/disqualify", json.dumps({"reason": "x" * 201}).encode(), "longer than 200 characters"),
        ("/api/admin/users", b'{"user": "Carol Smith"}', "use 1-32 lower-case letters"),
        ("/api/admin/users", json.dumps({"user": "c" * 5000}).encode(), "at most 32 characters, not 5000"),
        ("/api/admin/users", b'{"user": "carol", "admin": "yes"}', "Expected `bool`, got `str` - at `$.admin`"),
    ],
)
async def test_a_bad_body_is_400_in_one_line_and_changes_nothing(
    arena: Field, path: str, body: bytes, says: str
) -> None:
    before = arena.rows(STATE)
    async with arena.client() as c:
        res = await c.post(path, content=body, headers=arena.auth("host"))
    error = res.json()["error"]
    assert res.status_code == 400 and says in error and "\n" not in error, error
    assert arena.rows(STATE) == before and arena.changes == 0


async def test_a_body_larger_than_a_control_takes_is_413(arena: Field) -> None:
    async with arena.client() as c:
        res = await c.post("/api/admin/pause", content=b" " * (17 << 10), headers=arena.auth("host"))
    assert res.status_code == 413 and "16 KiB" in res.json()["error"]
    assert arena.rows("SELECT * FROM controls") == []


# ------------------------------------------------------------------ matchmaking


class IdlePlayer:
    """Stands in for the unit player: a unit 'plays' until the test ends it."""

    def __init__(self) -> None:
        self.units: list[tuple[int, ...]] = []
        self.finish = trio.Event()
        self.games_played = 0

    async def play(self, unit: Any, bots: Any) -> None:
        self.units.append(unit.members)
        await self.finish.wait()


async def test_paused_matchmaking_starts_no_unit_lets_a_running_one_finish_and_resumes(arena: Field) -> None:
    server = ArenaServer(arena.arena, arena.store, Placement(), arena.arena.matchmaking)
    player = IdlePlayer()
    server.player = player  # type: ignore[assignment]

    async def no_build(members: tuple[int, ...]) -> dict[int, Any]:
        return {}

    server._built = no_build  # type: ignore[method-assign]
    arena.on_change = server._wake
    ace, bee = arena.ids[1], arena.ids[2]
    units = "SELECT members FROM units WHERE status = 'running'"
    async with arena.client() as c, trio.open_nursery() as nursery:
        nursery.start_soon(server._matchmake, nursery)
        await wait_all_tasks_blocked()
        assert player.units == [(ace, bee)] or player.units == [(bee, ace)]  # running: the two play at once
        assert (await c.post("/api/admin/pause", headers=arena.auth("host"))).json()["matchmaking"] == "paused"
        assert server.status().paused
        ending, player.finish = player.finish, trio.Event()
        ending.set()  # the running unit ends: the matchmaker looks again, and starts nothing
        await wait_all_tasks_blocked()
        assert len(player.units) == 1 and len(arena.rows(units)) == 1 and server.units_running == 0
        board = (await c.get("/api/leaderboard")).json()
        assert board["matchmaking"] == "paused"
        resumed = await c.post("/api/admin/resume", headers=arena.auth("host"))
        assert resumed.status_code == 200 and resumed.json()["matchmaking"] == "running"
        await wait_all_tasks_blocked()  # woken by the API, not by its once-a-second look
        assert len(player.units) == 2 and server.units_running == 1 and not server.status().paused
        nursery.cancel_scope.cancel()


async def test_the_pause_is_in_the_database_and_outlives_a_restart(arena: Field) -> None:
    async with arena.client() as c:
        res = await c.post("/api/admin/pause", headers=arena.auth("host"))
    assert res.status_code == 200 and arena.changes == 1
    assert arena.rows("SELECT key, value, set_by FROM controls") == [("matchmaking", "paused", "host")]
    arena.store.close()
    arena.store = ArenaStore.open(arena.folder)  # a new server on the same folder
    async with arena.client() as c:
        assert (await c.get("/api/leaderboard")).json()["matchmaking"] == "paused"


# ------------------------------------------------------------------ closing submissions


async def test_closed_submissions_refuse_an_upload_saying_since_when_and_keep_nothing(arena: Field) -> None:
    async with arena.client() as c:
        before = datetime.now(UTC).replace(microsecond=0)
        closed = (await c.post("/api/admin/close", headers=arena.auth("host"), json={})).json()
        when = datetime.fromisoformat(closed["submissions_close"])
        assert closed["submissions"] == "closed" and before <= when <= datetime.now(UTC)
        assert closed["submissions_close_from"] == "host"
        board = (await c.get("/api/leaderboard")).json()
        assert (board["submissions"], board["submissions_close"]) == ("closed", closed["submissions_close"])
        res = await c.post("/api/submissions", headers=arena.auth("alice"), files={"archive": ("b.zip", zipped(BOT))})
        assert res.status_code == 403
        assert res.json()["error"] == (
            f"submissions are closed since {closed['submissions_close']}: the arena takes no new versions"
        )
        later = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
        at = later.astimezone(timezone(timedelta(hours=-5))).isoformat()  # any zone; shown in UTC
        moved = (await c.post("/api/admin/close", headers=arena.auth("host"), json={"at": at})).json()
        assert moved["submissions"] == "open" and moved["submissions_close"] == later.strftime("%Y-%m-%dT%H:%M:%SZ")
        res = await c.post("/api/submissions", headers=arena.auth("alice"), files={"archive": ("b.zip", zipped(BOT))})
        assert res.status_code == 201, res.text
    assert sorted(p.name for p in (arena.folder / "archives").iterdir()) == [res.json()["sha256"]]


async def test_arena_toml_closes_submissions_and_the_host_may_open_them_again(tmp_path: Path) -> None:
    arena = Field(tmp_path / "comp", 'submissions_close = "2020-01-01T12:00:00+02:00"')
    try:
        upload = {"archive": ("b.zip", zipped(BOT))}
        async with arena.client() as c:
            board = (await c.get("/api/leaderboard")).json()
            assert (board["submissions"], board["submissions_close"]) == ("closed", "2020-01-01T10:00:00Z")
            res = await c.post("/api/submissions", headers=arena.auth("bob"), files=upload)
            assert res.status_code == 403 and "closed since 2020-01-01T10:00:00Z" in res.json()["error"]
            opened = (await c.post("/api/admin/open", headers=arena.auth("host"))).json()
            assert opened == {
                "matchmaking": "running",
                "submissions": "open",
                "submissions_close": None,
                "submissions_close_from": "host",
            }
            res = await c.post("/api/submissions", headers=arena.auth("bob"), files=upload)
            assert res.status_code == 201, res.text
    finally:
        arena.store.close()


# ------------------------------------------------------------------ disqualifying


async def test_a_disqualified_bot_leaves_the_leaderboard_and_the_refit_and_takes_no_version(arena: Field) -> None:
    async with arena.client() as c:
        res = await c.post(
            "/api/admin/bots/bee/disqualify", headers=arena.auth("host"), json={"reason": "reads the seed file"}
        )
        assert res.status_code == 200 and arena.changes == 1
        out = res.json()["disqualified"]
        assert (out["reason"], out["set_by"]) == ("reads the seed file", "host")
        board = (await c.get("/api/leaderboard")).json()
        assert [e["bot"] for e in board["bots"]] == ["ace"]
        assert board["disqualified"] == [{"bot": "bee", "reason": "reads the seed file", "since": out["since"]}]
        page = (await c.get("/api/bots/bee")).json()
        assert page["disqualified"] == {"reason": "reads the seed file", "since": out["since"]}
        assert page["active_version"] == 1  # the version stays; it does not play
        again = await c.post("/api/admin/bots/bee/disqualify", headers=arena.auth("host"), json={"reason": "x"})
        assert again.status_code == 409 and "reads the seed file" in again.json()["error"]
        upload = await c.post(
            "/api/submissions",
            headers=arena.auth("bob"),
            files={"archive": ("b.zip", zipped(BOT))},
            data={"name": "bee"},
        )
        assert upload.status_code == 403
        assert upload.json()["error"] == "the bot 'bee' is disqualified (reads the seed file): it takes no new versions"
        assert arena.store.read(fit_active).elo == {}  # bee gone: no unit among the bots in play
        nobody = await c.post("/api/admin/bots/nobody/disqualify", headers=arena.auth("host"), json={"reason": "x"})
        assert nobody.status_code == 404
        back = await c.post("/api/admin/bots/bee/reinstate", headers=arena.auth("host"))
        assert back.json() == {"bot": "bee", "disqualified": None} and arena.changes == 2
        board = (await c.get("/api/leaderboard")).json()
        assert sorted(e["bot"] for e in board["bots"]) == ["ace", "bee"] and board["disqualified"] == []
        assert set(arena.store.read(fit_active).elo) == {arena.ids[1], arena.ids[2]}
        twice = await c.post("/api/admin/bots/bee/reinstate", headers=arena.auth("host"))
        assert twice.status_code == 409 and twice.json()["error"] == "the bot 'bee' is not disqualified"


async def test_the_matchmaker_seats_no_disqualified_bot(arena: Field) -> None:
    with arena.store.transaction() as conn:
        claim_bot(conn, "cat", "bob", now_text())
        cat = add_submission(
            conn, bot="cat", sha256="c" * 64, size=1, kind="zip", files=1, unpacked=1, now=now_text(), epoch=0.0
        )
        activate(conn, cat.id, "python", "ok", now_text())
    server = ArenaServer(arena.arena, arena.store, Placement(), arena.arena.matchmaking)
    assert sorted(e.key for e in server._entrants()) == sorted(str(i) for i in (arena.ids[1], arena.ids[2], cat.id))
    async with arena.client() as c:
        res = await c.post("/api/admin/bots/bee/disqualify", headers=arena.auth("host"), json={"reason": "crashes"})
    assert res.status_code == 200
    assert sorted(e.key for e in server._entrants()) == sorted(str(i) for i in (arena.ids[1], cat.id))


# ------------------------------------------------------------------ users


async def test_users_are_added_listed_revoked_and_given_new_tokens(arena: Field) -> None:
    host = arena.auth("host")
    async with arena.client() as c:
        added = await c.post("/api/admin/users", headers=host, json={"user": "carol", "admin": False})
        assert added.status_code == 201 and added.headers["cache-control"] == "no-store"
        token = added.json()["token"]
        assert added.json() == {"user": "carol", "token": token, "admin": False} and len(token) == 32
        carol = {"Authorization": f"Bearer {token}"}
        assert (await c.get("/api/submissions?mine=1", headers=carol)).json() == {"submissions": []}
        twice = await c.post("/api/admin/users", headers=host, json={"user": "carol"})
        assert twice.status_code == 409 and token not in twice.text
        listed = await c.get("/api/admin/users", headers=host)
        users = listed.json()["users"]
        assert [(u["user"], u["admin"], u["revoked"]) for u in users] == [
            ("alice", False, None),
            ("bob", False, None),
            ("carol", False, None),
            ("host", True, None),
        ]
        assert all(set(u) == {"user", "admin", "created", "revoked"} for u in users)
        digests = [r[0] for r in arena.rows("SELECT token_sha256 FROM users")]
        assert token not in listed.text and not any(d in listed.text for d in digests)
        revoked = await c.post("/api/admin/users/carol/revoke", headers=host)
        assert revoked.status_code == 200 and revoked.json()["revoked"] is not None
        assert (await c.get("/api/submissions?mine=1", headers=carol)).status_code == 401
        fresh = (await c.post("/api/admin/users/carol/token", headers=host)).json()["token"]
        again = {"Authorization": f"Bearer {fresh}"}
        assert fresh != token and (await c.get("/api/submissions?mine=1", headers=again)).status_code == 200
        own = await c.post("/api/admin/users/host/revoke", headers=host)
        assert own.status_code == 409 and "lock you out" in own.json()["error"]
        missing = await c.post("/api/admin/users/dave/revoke", headers=host)
        assert missing.status_code == 404 and missing.json()["error"] == "no user 'dave'"


# ------------------------------------------------------------------ exports


def running_unit(arena: Field) -> int:
    """A unit still playing, with one of its games recorded: neither its seed nor that game may be exported."""
    ace, bee = arena.ids[1], arena.ids[2]
    with arena.store.transaction() as conn:
        unit = start_unit(conn, (ace, bee), 123456789, now_text(), 1.0)
        record_game(conn, unit.id, 0, (ace, bee), record(["x", "y"], [52, 7]), "cd" * 32, now_text())
    (arena.folder / "logs" / log_name(unit.id, 0)).write_text("{}\n")
    return unit.id


async def test_the_json_export_is_the_database_rows(arena: Field) -> None:
    running = running_unit(arena)
    async with arena.client() as c:
        res = await c.get("/api/admin/export.json", headers=arena.auth("host"))
    assert res.status_code == 200 and res.headers["content-disposition"] == 'attachment; filename="host-export.json"'
    doc = res.json()
    names = {sid: f"{bot}.v{v}" for sid, bot, v in arena.rows("SELECT id, bot, version FROM submissions")}
    units = arena.rows("SELECT id, status, members, seed, started, finished, done_order, totals FROM units ORDER BY id")
    assert [[u[k] for k in UNIT_COLUMNS] for u in doc["units"]] == [
        [uid, status, json.loads(m), [names[s] for s in json.loads(m)], seed if status == "done" else None, started]
        + [finished, order, None if totals is None else json.loads(totals)]
        for uid, status, m, seed, started, finished, order, totals in units
    ]
    assert [u["id"] for u in doc["units"] if u["seed"] is None] == [running]
    games = arena.rows(
        "SELECT id, unit, rotation, seats, scores, placements, reason, failures, log_name, log_sha256, finished"
        f" FROM games WHERE unit != {running} ORDER BY id"
    )
    assert len(games) == 2 and [[g[k] for k in GAME_COLUMNS] for g in doc["games"]] == [
        [gid, unit, rot, json.loads(seats), [names[s] for s in json.loads(seats)], json.loads(scores)]
        + [json.loads(places), reason, [{"seat": s, "reason": r} for s, r in json.loads(failures)], log, sha, fin]
        for gid, unit, rot, seats, scores, places, reason, failures, log, sha, fin in games
    ]
    ratings = arena.rows("SELECT submission, mu, sigma FROM ratings ORDER BY submission")
    assert [(r["submission"], r["mu"], r["sigma"], r["ordinal"]) for r in doc["ratings"]] == [
        (sid, mu, sigma, mu - 3 * sigma) for sid, mu, sigma in ratings
    ]
    assert [(r["bot"], r["version"], r["games"], r["units"]) for r in doc["ratings"]] == [
        ("ace", 2, 3, 1),
        ("bee", 1, 3, 1),
    ]  # games recorded


async def test_the_csv_exports_hold_a_header_and_the_same_rows(arena: Field) -> None:
    running_unit(arena)
    with arena.store.transaction() as conn:
        conn.execute(
            "INSERT INTO mle_elo VALUES (?, 61.25, 80.5, 1, 'then'), (?, -61.25, 80.5, 1, 'then')", arena.ids[1:]
        )
    async with arena.client() as c:
        doc = (await c.get("/api/admin/export.json", headers=arena.auth("host"))).json()
        for table, columns in (("units", UNIT_COLUMNS), ("games", GAME_COLUMNS), ("ratings", RATING_COLUMNS)):
            res = await c.get(f"/api/admin/export/{table}.csv", headers=arena.auth("host"))
            assert res.status_code == 200 and res.headers["content-type"].startswith("text/csv")
            rows = list(csv.reader(io.StringIO(res.text)))
            assert tuple(rows[0]) == columns and len(rows) == len(doc[table]) + 1
            for row, want in zip(rows[1:], doc[table]):
                assert row == [_cell(want[k]) for k in columns]
        ratings = list(
            csv.DictReader(io.StringIO((await c.get("/api/admin/export/ratings.csv", headers=arena.auth("host"))).text))
        )
        assert [(r["bot"], r["mle_elo"], r["mle_err95"]) for r in ratings] == [
            ("ace", "61.25", "80.5"),
            ("bee", "-61.25", "80.5"),
        ]
        assert float(ratings[0]["mu"]) == 29.0 and float(ratings[0]["ordinal"]) == 8.0
        missing = await c.get("/api/admin/export/users.csv", headers=arena.auth("host"))
    assert missing.status_code == 404 and missing.json()["error"] == "no export 'users': choose units, games, ratings"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


async def test_an_export_reads_on_its_own_connection_not_under_the_servers_lock(arena: Field) -> None:
    """Holding the store's lock, as the loop does while it writes, does not stop an export."""
    async with arena.client() as c:
        with arena.store.lock, trio.fail_after(scaled(10)):
            res = await c.get("/api/admin/export/units.csv", headers=arena.auth("host"))
    assert res.status_code == 200 and res.text.count("\r\n") == 2  # the header and the one unit


# ------------------------------------------------------------------ an owner's older version


async def test_an_owner_makes_a_retired_version_active_again_and_the_current_one_retires(arena: Field) -> None:
    v1, v2 = arena.ids[0], arena.ids[1]
    async with arena.client() as c:
        assert (await c.post(f"/api/submissions/{v1}/activate")).status_code == 401
        other = await c.post(f"/api/submissions/{v1}/activate", headers=arena.auth("bob"))
        assert other.status_code == 403 and "another user's bot" in other.json()["error"]
        res = await c.post(f"/api/submissions/{v1}/activate", headers=arena.auth("alice"))
        assert res.status_code == 200 and arena.changes == 1
        assert (res.json()["status"], res.json()["version"], res.json()["retired"]) == ("active", 1, [v2])
        assert arena.rows("SELECT id, status FROM submissions WHERE bot = 'ace' ORDER BY id") == [
            (v1, "active"),
            (v2, "retired"),
        ]
        board = (await c.get("/api/leaderboard")).json()
        assert [(e["bot"], e["version"]) for e in board["bots"] if e["bot"] == "ace"] == [("ace", 1)]
        active = await c.post(f"/api/submissions/{v1}/activate", headers=arena.auth("alice"))
        assert active.status_code == 409 and active.json()["error"] == "ace version 1 is active already"
        assert (await c.post("/api/submissions/999/activate", headers=arena.auth("alice"))).status_code == 404
        by_admin = await c.post(f"/api/submissions/{v2}/activate", headers=arena.auth("host"))
        assert by_admin.status_code == 200 and by_admin.json()["retired"] == [v1]


async def test_only_a_version_that_passed_its_check_and_only_while_the_bot_may_change(arena: Field) -> None:
    with arena.store.transaction() as conn:
        broken = add_submission(
            conn, bot="ace", sha256="f" * 64, size=1, kind="zip", files=1, unpacked=1, now=now_text(), epoch=0.0
        )
        fail(conn, broken.id, "check: no hello", now_text())
    v1 = arena.ids[0]
    async with arena.client() as c:
        res = await c.post(f"/api/submissions/{broken.id}/activate", headers=arena.auth("alice"))
        assert res.status_code == 409
        assert (
            res.json()["error"]
            == "ace version 3 is failed: only a version that passed its check (retired) can be made active again"
        )
        await c.post("/api/admin/close", headers=arena.auth("host"))
        closed = await c.post(f"/api/submissions/{v1}/activate", headers=arena.auth("alice"))
        assert closed.status_code == 403 and "submissions are closed since" in closed.json()["error"]
        await c.post("/api/admin/open", headers=arena.auth("host"))
        await c.post("/api/admin/bots/ace/disqualify", headers=arena.auth("host"), json={"reason": "plays for bee"})
        out = await c.post(f"/api/submissions/{v1}/activate", headers=arena.auth("host"))
        assert out.status_code == 403 and "is disqualified (plays for bee)" in out.json()["error"]
    assert arena.rows("SELECT status FROM submissions WHERE bot = 'ace' ORDER BY id") == [
        ("retired",),
        ("active",),
        ("failed",),
    ]


# ------------------------------------------------------------------ an older database


def test_a_version_1_database_opens_with_its_rows_and_gains_the_controls(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / CONFIG_NAME).write_text(template("old", "chicago", 2))
    with sqlite3.connect(folder / DB_NAME) as conn:  # what version 1 made: its tables, no controls
        conn.executescript(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            + USERS_SCHEMA
            + SUBMISSIONS_SCHEMA
            + UNITS_SCHEMA
            + "INSERT INTO meta VALUES ('schema_version', '1');"
        )
        conn.execute("INSERT INTO users (name, admin, created) VALUES ('alice', 0, 'then')")
    store = ArenaStore.open(folder)
    try:
        assert store.read(lambda c: c.execute("SELECT name FROM users").fetchall()) == [("alice",)]
        version = store.read(lambda c: c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone())
        assert version == (str(SCHEMA_VERSION),) and SCHEMA_VERSION == 2
        assert store.read(lambda c: c.execute("SELECT count(*) FROM rating_history").fetchone()) == (0,)
        with store.transaction() as conn:
            conn.execute("INSERT INTO controls VALUES ('matchmaking', 'paused', 'host', 'now')")
            conn.execute("INSERT INTO bots VALUES ('ace', 'alice', 'then')")
            conn.execute("INSERT INTO disqualifications VALUES ('ace', 'why', 'host', 'now')")
    finally:
        store.close()
    again = ArenaStore.open(folder)  # and again: upgraded once, the rows kept
    try:
        assert again.read(lambda c: c.execute("SELECT key, value FROM controls").fetchall()) == [
            ("matchmaking", "paused")
        ]
    finally:
        again.close()


async def test_arena_status_shows_the_disqualified_the_pause_and_the_close(
    arena: Field, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with arena.client() as c:
        await c.post("/api/admin/bots/bee/disqualify", headers=arena.auth("host"), json={"reason": "reads the deck"})
        await c.post("/api/admin/pause", headers=arena.auth("host"))
        await c.post("/api/admin/close", headers=arena.auth("host"), json={"at": "2020-02-02T20:20:20Z"})
        board = (await c.get("/api/leaderboard")).json()
    monkeypatch.setattr(client, "request", lambda url, path, **_kw: (200, board))
    monkeypatch.setenv("COLUMNS", "200")  # a row on one line
    res = CliRunner().invoke(app, ["arena", "status", "http://arena"])
    assert res.exit_code == 0, res.stderr
    ranked = [line.split()[:3] for line in res.stdout.splitlines() if line.lstrip()[:1].isdigit()]
    assert ranked == [["1.", "ace", "v2"]]  # bee is not ranked, and is listed apart with its reason
    out = [line.split(None, 2) for line in res.stdout.splitlines() if "disqualified since" in line]
    assert [(d[0], d[1], d[2].endswith(": reads the deck")) for d in out] == [("bee", "disqualified", True)]
    assert res.stderr.splitlines() == [
        "matchmaking is paused by the host: no new units start",
        "submissions closed at 2020-02-02T20:20:20Z",
    ]


async def test_a_final_may_start_without_force_once_submissions_have_closed(arena: Field) -> None:
    def may_start() -> list[str] | str:
        try:
            entries = arena.store.read(
                lambda c: check_can_start(arena.arena, c, top=None, force=False, now=time.time())
            )
        except FinalRefused as exc:
            return str(exc)
        return [e["bot"] for e in entries]

    assert "submissions are still open" in str(may_start())
    async with arena.client() as c:
        await c.post("/api/admin/close", headers=arena.auth("host"))
        assert may_start() == ["ace", "bee"]
        await c.post("/api/admin/open", headers=arena.auth("host"))
        assert "submissions are still open" in str(may_start())
