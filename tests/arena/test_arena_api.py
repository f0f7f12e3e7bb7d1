"""The arena's HTTP API for submissions, through httpx against the ASGI app
under Trio: who may do what, what a submission answers, and what a refused
upload leaves behind (nothing)."""

from __future__ import annotations

import errno
import io
import json
import sqlite3
import zipfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import trio

from referee.arena import intake
from referee.arena.api import make_app
from referee.arena.config import CONFIG_NAME, load_arena, template
from referee.arena.server import watch_disk
from referee.arena.store import DB_NAME, ArenaStore, now_text
from referee.arena.users import add_user
from referee.errors import ResultsError

BOT = b"import sys\nfor line in sys.stdin:\n    pass\n"


def zipped(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


class Arena:
    """An arena folder with two users, and a client for its API."""

    def __init__(self, folder: Path, extra_config: str = "") -> None:
        folder.mkdir()
        (folder / CONFIG_NAME).write_text(template("test", "chicago", 2) + extra_config)
        self.folder = folder
        self.store = ArenaStore.create(folder)
        with self.store.transaction() as conn:
            self.alice = add_user(conn, "alice", admin=False, now=now_text()).token
            self.bob = add_user(conn, "bob", admin=False, now=now_text()).token
            self.host = add_user(conn, "host", admin=True, now=now_text()).token
        self.app = make_app(load_arena(folder), self.store)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://arena")

    def leftovers(self) -> list[str]:
        """Files in the archives folder that are not a kept archive."""
        kept = {r[0] for r in self.store.read(lambda c: c.execute("SELECT sha256 FROM submissions").fetchall())}
        return sorted(p.name for p in (self.folder / "archives").iterdir() if p.name not in kept)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    a = Arena(tmp_path / "comp")
    yield a
    a.store.close()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def submit(a: Arena, token: str, archive: bytes, name: str | None = None) -> httpx.Response:
    async with a.client() as c:
        data = {"name": name} if name is not None else None
        return await c.post("/api/submissions", headers=auth(token), files={"archive": ("bot.zip", archive)}, data=data)


# ------------------------------------------------------------------ submitting


async def test_a_submission_is_kept_before_201_and_the_same_archive_is_one_submission(arena: Arena) -> None:
    archive = zipped({"main.py": BOT})
    first = await submit(arena, arena.alice, archive)
    assert first.status_code == 201, first.text
    body = first.json()
    assert (body["bot"], body["owner"], body["version"], body["status"]) == ("alice", "alice", 1, "queued")
    assert (arena.folder / "archives" / body["sha256"]).read_bytes() == archive
    with sqlite3.connect(arena.folder / DB_NAME) as conn:  # committed: another connection sees it
        assert conn.execute("SELECT bot, version, status FROM submissions").fetchall() == [("alice", 1, "queued")]
    again = await submit(arena, arena.alice, archive)
    assert again.status_code == 200 and again.json()["id"] == body["id"]
    second = await submit(arena, arena.alice, zipped({"main.py": BOT + b"# v2\n"}))
    assert second.status_code == 201 and second.json()["version"] == 2
    named = await submit(arena, arena.alice, archive, name="alice-2")
    assert named.status_code == 201 and (named.json()["bot"], named.json()["version"]) == ("alice-2", 1)
    assert arena.leftovers() == []


async def test_a_bot_name_belongs_to_its_first_submitter(arena: Arena) -> None:
    assert (await submit(arena, arena.alice, zipped({"main.py": BOT}), name="shark")).status_code == 201
    res = await submit(arena, arena.bob, zipped({"main.py": BOT + b"#bob\n"}), name="shark")
    assert res.status_code == 403 and "belongs to another user" in res.json()["error"]
    res = await submit(arena, arena.bob, zipped({"main.py": BOT}), name="../evil")
    assert res.status_code == 400 and "bot name" in res.json()["error"]
    assert arena.leftovers() == []


@pytest.mark.parametrize(
    ("header", "says"),
    [(None, "this needs your token"), ("Bearer " + "0" * 32, "not valid"), ("Basic YWxpY2U6eA==", "not valid")],
)
async def test_no_token_or_a_wrong_one_is_401(arena: Arena, header: str | None, says: str) -> None:
    async with arena.client() as c:
        headers = {"Authorization": header} if header else {}
        res = await c.post("/api/submissions", headers=headers, files={"archive": ("b.zip", zipped({"a": b"x"}))})
    assert res.status_code == 401 and says in res.json()["error"]
    assert res.headers["www-authenticate"] == "Bearer"
    assert arena.leftovers() == []


async def test_a_revoked_token_stops_at_once(arena: Arena) -> None:
    with arena.store.transaction() as conn:
        conn.execute("UPDATE users SET token_sha256 = NULL WHERE name = 'alice'")
    res = await submit(arena, arena.alice, zipped({"main.py": BOT}))
    assert res.status_code == 401 and arena.alice not in res.text


# ------------------------------------------------------------------ refused uploads leave nothing


async def test_a_declared_oversized_body_is_refused_before_it_is_read(tmp_path: Path) -> None:
    a = Arena(tmp_path / "comp", "")
    read = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal read
        for _ in range(200):
            read += 1
            yield b"x" * 65536

    async with a.client() as c:
        headers = {**auth(a.alice), "Content-Type": "multipart/form-data; boundary=b", "Content-Length": "13107200"}
        res = await c.post("/api/submissions", headers=headers, content=body())
    assert res.status_code == 413 and "10 MiB" in res.json()["error"]
    assert read <= 1  # at most what the transport pulled before the answer
    assert a.leftovers() == []
    a.store.close()


async def test_an_undeclared_oversized_stream_stops_at_the_cap(tmp_path: Path) -> None:
    a = Arena(tmp_path / "comp", "")
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'--b\r\nContent-Disposition: form-data; name="archive"; filename="a.zip"\r\n\r\n'
        for _ in range(400):  # 25 MiB if all were read
            sent += 65536
            yield b"\0" * 65536

    async with a.client() as c:
        headers = {**auth(a.alice), "Content-Type": "multipart/form-data; boundary=b"}
        res = await c.post("/api/submissions", headers=headers, content=body())
    assert res.status_code == 413, res.text
    assert sent <= (10 << 20) + 2 * 65536  # stopped at the cap, not at the end of the stream
    assert a.leftovers() == []
    a.store.close()


@pytest.mark.parametrize(
    ("files", "status", "says"),
    [
        ({"../evil.py": BOT}, 400, "../evil.py"),
        ({"/etc/evil": BOT}, 400, "/etc/evil"),
        ({}, 400, "no files"),
    ],
)
async def test_a_hostile_archive_is_refused_naming_the_member_and_leaves_nothing(
    arena: Arena, tmp_path: Path, files: dict[str, bytes], status: int, says: str
) -> None:
    res = await submit(arena, arena.alice, zipped(files))
    assert res.status_code == status and says in res.json()["error"], res.text
    assert arena.leftovers() == []
    assert not (tmp_path / "evil.py").exists() and not (arena.folder / "evil.py").exists()
    assert arena.store.read(lambda c: c.execute("SELECT count(*) FROM submissions").fetchone()) == (0,)


async def test_bad_forms_are_4xx_in_one_line(arena: Arena) -> None:
    async with arena.client() as c:
        res = await c.post("/api/submissions", headers=auth(arena.alice), json={"archive": "x"})
        assert res.status_code == 415 and "multipart/form-data" in res.json()["error"]
        res = await c.post("/api/submissions", headers=auth(arena.alice), files={"code": ("a.zip", b"PK")})
        assert res.status_code == 400 and "unknown form field 'code'" in res.json()["error"]
        res = await c.post("/api/submissions", headers=auth(arena.alice), files={"name": (None, b"x")})
        assert res.status_code == 400 and "no field `archive`" in res.json()["error"]
        res = await c.get("/api/nothing-here")
        assert res.status_code == 404 and res.json()["error"].startswith("no such route")
    assert arena.leftovers() == []


async def test_submissions_per_hour_are_limited_and_the_refusal_says_when(tmp_path: Path) -> None:
    a = Arena(tmp_path / "comp", "")
    cfg = a.folder / CONFIG_NAME
    cfg.write_text(cfg.read_text().replace("submissions_per_hour = 10", "submissions_per_hour = 2"))
    a.app = make_app(load_arena(a.folder), a.store)
    for k in range(2):
        assert (await submit(a, a.alice, zipped({"main.py": BOT + bytes([65 + k])}))).status_code == 201
    res = await submit(a, a.alice, zipped({"main.py": BOT + b"C"}))
    assert res.status_code == 429 and "try again after" in res.json()["error"]
    assert (await submit(a, a.bob, zipped({"main.py": BOT}))).status_code == 201  # per user
    assert a.leftovers() == []
    a.store.close()


# ------------------------------------------------------------------ reading


async def test_a_failure_reason_is_shown_to_its_owner_and_admins_only(arena: Arena) -> None:
    sub = (await submit(arena, arena.alice, zipped({"main.py": BOT}))).json()
    with arena.store.transaction() as conn:
        conn.execute("UPDATE submissions SET status = 'failed', reason = 'check: no hello' WHERE id = ?", (sub["id"],))
    async with arena.client() as c:
        seen = {}
        for who, headers in [("alice", auth(arena.alice)), ("host", auth(arena.host)), ("bob", auth(arena.bob))]:
            seen[who] = (await c.get(f"/api/submissions/{sub['id']}", headers=headers)).json()
        anonymous = (await c.get(f"/api/submissions/{sub['id']}")).json()
        missing = await c.get("/api/submissions/999")
    assert seen["alice"]["reason"] == seen["host"]["reason"] == "check: no hello"
    assert "reason" not in seen["bob"] and "reason" not in anonymous
    assert anonymous["status"] == "failed" and missing.status_code == 404


async def test_a_submissions_source_is_its_owners_and_the_admins_alone(arena: Arena) -> None:
    archive = zipped({"main.py": BOT})
    sub = (await submit(arena, arena.alice, archive)).json()
    async with arena.client() as c:
        got = {
            who: await c.get(f"/api/submissions/{sub['id']}/archive", headers=auth(token) if token else None)
            for who, token in [("alice", arena.alice), ("host", arena.host), ("bob", arena.bob), ("nobody", None)]
        }
        missing = await c.get("/api/submissions/999/archive", headers=auth(arena.alice))
    assert got["alice"].content == got["host"].content == archive  # the bytes as they were sent
    assert 'filename="alice.v1.zip"' in got["alice"].headers["content-disposition"]
    assert got["bob"].status_code == 403 and "only its owner" in got["bob"].json()["error"]
    assert got["nobody"].status_code == 401 and missing.status_code == 404


async def test_mine_lists_only_my_submissions(arena: Arena) -> None:
    await submit(arena, arena.alice, zipped({"main.py": BOT}))
    await submit(arena, arena.bob, zipped({"main.py": BOT}))
    async with arena.client() as c:
        mine = (await c.get("/api/submissions?mine=1", headers=auth(arena.bob))).json()["submissions"]
        res = await c.get("/api/submissions", headers=auth(arena.bob))
    assert [s["owner"] for s in mine] == ["bob"]
    assert res.status_code == 400 and json.loads(res.text)["error"].startswith("list your own")


async def test_a_full_disk_refuses_the_upload_with_507_and_keeps_nothing(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(intake.os, "fsync", disk_full)  # the archive's bytes cannot reach the disk
    res = await submit(arena, arena.alice, zipped({"main.py": BOT}))
    monkeypatch.undo()
    assert res.status_code == 507 and res.json() == {
        "error": "the arena's disk is full: nothing of this request was kept; try again later"
    }
    assert arena.leftovers() == []
    assert arena.store.read(lambda c: c.execute("SELECT * FROM submissions").fetchall()) == []
    again = await submit(arena, arena.alice, zipped({"main.py": BOT}))  # room again: the same upload is taken
    assert again.status_code == 201, again.text


async def test_the_server_stops_in_one_line_before_its_disk_is_full(tmp_path: Path) -> None:
    with trio.move_on_after(0.3) as waited:  # room enough: it keeps watching
        await watch_disk(tmp_path, floor=0, every=0.05)
    assert waited.cancelled_caught
    with pytest.raises(ResultsError) as stopped:
        await watch_disk(tmp_path, floor=1 << 62)
    said = str(stopped.value)
    assert said.startswith(f"{tmp_path}: ") and "free space and run `arena serve` again" in said and "\n" not in said
