"""The arena's final tournament: a complete round robin of the leaderboard's
top bots, played by `tournament`'s runner from the arena's real builds in the
sandbox, with its seed committed (and shown by `GET /api/final`) before the
first game and revealed at the end; resumed exactly after a `kill -9`;
refused while submissions are open or with fewer than 2 active bots."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from itertools import combinations
from pathlib import Path

import httpx
import pytest
import trio
from arena_served import Served, cli, get
from needs import needs_sandbox
from paths import FIRST_LEGAL_BOT, RANDOM_BOT, ROOT
from timing import scaled, wait_until

from referee.arena.api import make_app
from referee.arena.archives import ArchiveLimits, pack_folder
from referee.arena.builds import build
from referee.arena.config import CONFIG_NAME, load_arena
from referee.arena.final import (
    FinalPaths,
    FinalRefused,
    check_can_start,
    holding_play_lock,
    read_plan,
    settle_plan,
)
from referee.arena.final_run import final_status, open_final, prepare_final, runner_for
from referee.arena.online import Rating
from referee.arena.store import ArenaStore, now_text
from referee.arena.submissions import activate, add_submission, claim_bot
from referee.arena.units import save_ratings
from referee.arena.users import add_user
from referee.errors import ResultsError
from referee.tournament.executors import Placement
from referee.tournament.store_rows import commitment_of

CONFIG = """
name = "cup"
game = "chicago"
table_size = 2
concurrency = 2
time_control = "decision=2s,startup=20s"

[rules]
options = { target_score = 8 }
"""
# (bot, owner, program, mu): the leaderboard orders them by mu - 3 sigma, so as listed.
FIELD = [
    ("ace", "alice", FIRST_LEGAL_BOT, 30.0),
    ("bee", "bob", RANDOM_BOT, 27.0),
    ("cat", "carol", RANDOM_BOT, 24.0),
]


def new_arena(tmp_path: Path, field: list[tuple[str, str, Path, float]], *, built: bool = True) -> Path:
    """An arena whose `field` is active: each bot a real archive, built in the
    sandbox as the arena builds it (`built`), rated so the leaderboard lists
    them in order; the user `host` is an admin (token in host.token)."""
    folder = tmp_path / "comp"
    folder.mkdir()
    (folder / CONFIG_NAME).write_text(CONFIG)
    arena = load_arena(folder)
    store = ArenaStore.create(folder)
    try:
        with store.transaction() as conn:
            issued = add_user(conn, "host", admin=True, now=now_text())
        (tmp_path / "host.token").write_text(issued.token)
        for bot, owner, program, mu in field:
            source = tmp_path / "src" / bot
            source.mkdir(parents=True)
            (source / "main.py").write_text(program.read_text() + f"# {bot}\n")
            archive = pack_folder(source, ArchiveLimits())
            sha = hashlib.sha256(archive).hexdigest()
            (folder / "archives" / sha).write_bytes(archive)
            if built:
                result = build(folder / "archives" / sha, sha, folder, arena.builds, arena.archives)
                assert result.ok, result.reason
            with store.transaction() as conn:
                if conn.execute("SELECT 1 FROM users WHERE name = ?", (owner,)).fetchone() is None:
                    add_user(conn, owner, admin=False, now=now_text())
                claim_bot(conn, bot, owner, now_text())
                sub = add_submission(
                    conn, bot=bot, sha256=sha, size=len(archive), kind="tar.gz", files=1, unpacked=1,
                    now=now_text(), epoch=time.time(),
                )  # fmt: skip
                activate(conn, sub.id, "python", "ok", now_text())
                save_ratings(conn, {sub.id: Rating(mu=mu, sigma=1.0)})
    finally:
        store.close()
    return folder


def client(folder: Path, store: ArenaStore) -> httpx.AsyncClient:
    app = make_app(load_arena(folder), store)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://arena")


def final_games(folder: Path) -> list[tuple[str, str, int]]:
    """(key, table, run) of every recorded game of the final (none while its database is being made)."""
    with sqlite3.connect(FinalPaths(folder).db) as conn:
        try:
            return conn.execute("SELECT key, table_key, run_id FROM games ORDER BY game_id").fetchall()
        except sqlite3.OperationalError:  # no table yet
            return []


def check_complete_round_robin(folder: Path, names: list[str], deal_sets: int) -> None:
    """Every pair met at its table on every deal set under both rotations, once each."""
    games = final_games(folder)
    keys = [key for key, _table, _run in games]
    assert len(keys) == len(set(keys)), "a game was recorded twice"
    want = {f"{a}+{b}/d{d}/r{r}" for a, b in combinations(names, 2) for d in range(deal_sets) for r in range(2)}
    assert set(keys) == want
    assert Counter(table for _key, table, _run in games) == {
        f"{a}+{b}": 2 * deal_sets for a, b in combinations(names, 2)
    }
    logs = sorted(p.name for p in FinalPaths(folder).logs.glob("*.jsonl"))
    assert len(logs) == len(keys)
    with sqlite3.connect(FinalPaths(folder).db) as conn:  # every bot started and played: real games
        assert conn.execute("SELECT bot, reason, message FROM failures").fetchall() == []
        assert conn.execute("SELECT count(*) FROM games WHERE decisions = 0").fetchone()[0] == 0


# ------------------------------------------------------------------ played in process


@needs_sandbox
async def test_the_final_commits_before_the_first_game_plays_the_round_robin_and_verifies(tmp_path: Path) -> None:
    folder = new_arena(tmp_path, FIELD)
    arena = load_arena(folder)
    store = ArenaStore.open(folder)
    try:
        plan, t = prepare_final(arena, store, top=3, deal_sets=2, force=True, now=time.time())
        opened = open_final(folder, plan, t)
        try:
            async with client(folder, store) as c:
                before = (await c.get("/api/final")).json()
            assert final_games(folder) == []  # the commitment is public before any game is recorded
            outcome = await runner_for(opened, Placement(), 2).run()
        finally:
            opened.close()
        async with client(folder, store) as c:
            after = (await c.get("/api/final")).json()
    finally:
        store.close()

    assert before["state"] == "committed" and before["progress"] == {"played": 0, "scheduled": 12}
    sealed = before["commitment"]
    assert len(sealed["commitment"]) == 64 and sealed["revealed"] is False and "seed" not in sealed
    assert "salt" not in json.dumps(before) and "standings" not in before
    assert [(p["rank"], p["name"], p["owner"]) for p in before["participants"]] == [
        (1, "ace.v1", "alice"),
        (2, "bee.v1", "bob"),
        (3, "cat.v1", "carol"),
    ]
    assert outcome.status == "completed" and outcome.recorded == 12
    check_complete_round_robin(folder, ["ace.v1", "bee.v1", "cat.v1"], 2)

    assert after["state"] == "done" and after["progress"] == {"played": 12, "scheduled": 12}
    revealed = after["commitment"]
    assert revealed["commitment"] == sealed["commitment"]  # the one published before the first game
    assert commitment_of(revealed["seed"], revealed["salt"]) == sealed["commitment"]
    st = after["standings"]
    assert sorted(b["bot"] for b in st["standings"]) == ["ace.v1", "bee.v1", "cat.v1"]
    assert all(b["games"] == 8 and b["failures"] == {} and b["err95"] is not None for b in st["standings"])
    assert st["los"]["ace.v1"].keys() == {"bee.v1", "cat.v1"}
    assert sum(cell["w"] + cell["l"] + cell["d"] for cell in st["crosstable"]["ace.v1"].values()) == 8
    assert st["seed"]["results_digest"] == revealed["results_digest"]
    # The documented commands, run as anyone would: the commitment, then every result.
    shell = await trio.run_process(after["verify"]["commitment"], shell=True, capture_stdout=True)
    assert shell.stdout.decode().split()[0] == sealed["commitment"]
    verify = after["verify"]["command"].split()
    assert verify[:2] == ["chicago-referee", "verify"]
    with trio.fail_after(scaled(300)):
        done = await trio.run_process(
            [sys.executable, "-m", "referee.cli", *verify[1:]], cwd=folder, check=False, capture_stdout=True,
            capture_stderr=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    # Played again, the same final is refused: it has finished.
    store = ArenaStore.open(folder)
    try:
        with pytest.raises(FinalRefused, match="has finished and is not played again"):
            prepare_final(arena, store, top=3, deal_sets=2, force=True, now=time.time())
    finally:
        store.close()


# ------------------------------------------------------------------ refusals (no games)


def test_a_final_is_refused_while_submissions_are_open_unless_forced(tmp_path: Path) -> None:
    folder = new_arena(tmp_path, FIELD, built=False)
    arena = load_arena(folder)
    store = ArenaStore.open(folder)
    try:
        with pytest.raises(FinalRefused, match="submissions are still open"):
            store.read(lambda c: check_can_start(arena, c, top=None, force=False, now=time.time()))
        taken = store.read(lambda c: check_can_start(arena, c, top=2, force=True, now=time.time()))
        with pytest.raises(FinalRefused, match="submissions are still open"):
            prepare_final(arena, store, top=None, deal_sets=1, force=False, now=time.time())
    finally:
        store.close()
    assert [e["bot"] for e in taken] == ["ace", "bee"]  # the leaderboard's top 2
    assert read_plan(FinalPaths(folder)) is None  # nothing planned, nothing written


def test_a_final_needs_two_active_bots(tmp_path: Path) -> None:
    folder = new_arena(tmp_path, FIELD[:1], built=False)
    arena = load_arena(folder)
    store = ArenaStore.open(folder)
    try:
        with pytest.raises(FinalRefused, match="at least 2 active bots; the arena has 1"):
            prepare_final(arena, store, top=None, deal_sets=1, force=True, now=time.time())
    finally:
        store.close()
    res = cli("arena", "final", str(folder), "--deal-sets", "1", "--force")
    assert res.returncode == 2 and "at least 2 active bots; the arena has 1" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert read_plan(FinalPaths(folder)) is None


def test_a_final_under_way_resumes_only_as_it_was_asked(tmp_path: Path) -> None:
    folder = new_arena(tmp_path, FIELD, built=False)
    arena = load_arena(folder)
    store = ArenaStore.open(folder)
    paths = FinalPaths(folder)
    try:
        with pytest.raises(FinalRefused, match="deal_sets must be 1 or more"):
            settle_plan(arena, store, top=None, deal_sets=0, force=True, now=time.time())
        with pytest.raises(FinalRefused, match="more than the 1,000,000 a final may have"):
            settle_plan(arena, store, top=None, deal_sets=200_000, force=True, now=time.time())
        with pytest.raises(FinalRefused, match="top must be 2 or more"):
            settle_plan(arena, store, top=1, deal_sets=1, force=True, now=time.time())
        assert read_plan(paths) is None
        plan = settle_plan(arena, store, top=2, deal_sets=3, force=True, now=time.time())
        assert read_plan(paths) == plan and [p.name for p in plan.participants] == ["ace.v1", "bee.v1"]
        with store.transaction() as conn:  # the leaderboard changes; the final keeps its field
            conn.execute("UPDATE ratings SET mu = 40 WHERE submission = 3")
        assert settle_plan(arena, store, top=2, deal_sets=3, force=False, now=time.time()) == plan
        with pytest.raises(FinalRefused, match="a final is under way with top 2, 3 deal sets, not top all, 3 deal"):
            settle_plan(arena, store, top=None, deal_sets=3, force=True, now=time.time())
    finally:
        store.close()
    assert final_status(folder, {}) == {"state": "none"}  # planned, but no seed committed: nothing published


async def test_a_final_whose_database_is_being_made_shows_none_and_a_damaged_one_says_so(tmp_path: Path) -> None:
    folder = new_arena(tmp_path, FIELD, built=False)
    arena = load_arena(folder)
    store = ArenaStore.open(folder)
    paths = FinalPaths(folder)
    try:
        settle_plan(arena, store, top=None, deal_sets=1, force=True, now=time.time())
        paths.db.write_bytes(b"")  # as SQLite leaves it for a moment while the final's referee makes it
        with holding_play_lock(paths):
            assert final_status(folder, {}) == {"state": "none"}
        with pytest.raises(ResultsError, match="not a chicago-referee results database"):
            final_status(folder, {})
        async with client(folder, store) as c:
            damaged = await c.get("/api/final")
    finally:
        store.close()
    assert damaged.status_code == 503 and "tournament.db" in damaged.json()["error"]


async def test_only_an_admin_starts_the_final_and_only_in_a_server(tmp_path: Path) -> None:
    folder = new_arena(tmp_path, FIELD, built=False)
    store = ArenaStore.open(folder)
    with store.transaction() as conn:
        someone = add_user(conn, "someone", admin=False, now=now_text()).token
    admin = (tmp_path / "host.token").read_text()
    try:
        async with client(folder, store) as c:
            nobody = await c.post("/api/admin/final", json={"deal_sets": 1})
            user = await c.post(
                "/api/admin/final", json={"deal_sets": 1}, headers={"Authorization": f"Bearer {someone}"}
            )
            bad = await c.post(
                "/api/admin/final", json={"deal_sets": "x"}, headers={"Authorization": f"Bearer {admin}"}
            )
            extra = await c.post(
                "/api/admin/final", json={"deal_sets": 1, "seed": 7}, headers={"Authorization": f"Bearer {admin}"}
            )
            serverless = await c.post(
                "/api/admin/final", json={"deal_sets": 1}, headers={"Authorization": f"Bearer {admin}"}
            )
            shown = (await c.get("/api/final")).json()
    finally:
        store.close()
    assert nobody.status_code == 401 and user.status_code == 403 and "only an admin" in user.json()["error"]
    assert bad.status_code == 400 and "deal_sets" in bad.json()["error"]
    assert extra.status_code == 400 and "seed" in extra.json()["error"]
    assert serverless.status_code == 503 and "arena serve" in serverless.json()["error"]
    assert shown == {"state": "none"}


# ------------------------------------------------------------------ the command, killed and resumed


def final_command(folder: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "referee.cli", "arena", "final", str(folder), *options]


@needs_sandbox
@pytest.mark.slow
def test_a_final_killed_mid_way_resumes_with_the_same_command_and_nothing_twice(tmp_path: Path) -> None:
    folder = new_arena(tmp_path, FIELD)
    options = ("--deal-sets", "6", "--force")
    proc = subprocess.Popen(
        final_command(folder, *options),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        start_new_session=True,
    )
    try:
        played = wait_until(lambda: FinalPaths(folder).db.is_file() and len(final_games(folder)) >= 3, 300, every=0.01)
        assert played, "no game of the final was recorded"
        status = final_status(folder, {})
        assert status["state"] == "running" and status["playing"] is True
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(scaled(30))
    killed_at = final_games(folder)
    assert 3 <= len(killed_at) < 36, "the final was not killed mid-way"
    assert final_status(folder, {})["playing"] is False  # the play lock went with the process

    res = cli("arena", "final", str(folder), *options, "--workers", "1")  # where games run is no part of the final
    assert res.returncode == 0, res.stderr
    assert f"resuming: {len(killed_at)} of 36 games already finished" in res.stderr
    assert "anyone can check" in res.stdout and "verify --db" in res.stdout
    check_complete_round_robin(folder, ["ace.v1", "bee.v1", "cat.v1"], 6)
    after = final_games(folder)
    assert set(killed_at) <= set(after)  # the games of the killed run kept as recorded, none played again
    assert {run for _k, _t, run in after} == {1, 2}
    status = final_status(folder, {})
    assert status["state"] == "done" and status["progress"] == {"played": 36, "scheduled": 36}
    verify = subprocess.run(
        [sys.executable, "-m", "referee.cli", "verify", "--db", "final/tournament.db"], cwd=folder,
        capture_output=True, text=True, timeout=scaled(300), env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr

    again = cli("arena", "final", str(folder), *options)
    assert again.returncode == 0 and "has finished and is not played again" in again.stderr, again.stderr
    assert "chicago-referee standings" in again.stdout
    assert final_games(folder) == after
    with sqlite3.connect(FinalPaths(folder).db) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 2


# ------------------------------------------------------------------ started inside `arena serve`


def post(url: str, token: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=scaled(60)) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def unit_starts(folder: Path) -> list[str]:
    with sqlite3.connect(folder / "arena.db") as conn:
        return [r[0] for r in conn.execute("SELECT started FROM units ORDER BY id")]


@needs_sandbox
@pytest.mark.slow
def test_an_admin_starts_the_final_in_a_running_server_and_matchmaking_waits(tmp_path: Path) -> None:
    folder = new_arena(tmp_path, FIELD)
    admin = (tmp_path / "host.token").read_text()
    served = Served(folder)
    try:
        assert wait_until(lambda: unit_starts(folder), 120), "the arena played no unit"
        code, started = post(f"{served.base}/api/admin/final", admin, {"deal_sets": 1, "top": 3})
        assert code == 409 and "submissions are still open" in str(started["error"])
        code, started = post(f"{served.base}/api/admin/final", admin, {"deal_sets": 2, "top": 3, "force": True})
        assert code == 202, started
        assert started["state"] in ("committed", "running") and started["playing"] is True
        assert len(started["commitment"]["commitment"]) == 64 and not started["commitment"]["revealed"]
        code, twice = post(f"{served.base}/api/admin/final", admin, {"deal_sets": 2, "top": 3, "force": True})
        assert code == 409 and "being played" in str(twice["error"])
        done = wait_until(lambda: get(f"{served.base}/api/final")["state"] == "done", 300)
        assert done, get(f"{served.base}/api/final")
        shown = get(f"{served.base}/api/final")
        # Matchmaking went on once the final was over.
        revealed = shown["commitment"]["revealed_at"]
        assert wait_until(lambda: any(s > revealed for s in unit_starts(folder)), 120), "matchmaking did not resume"
    finally:
        served.kill()
    committed = shown["commitment"]["committed_at"]
    assert not [s for s in unit_starts(folder) if committed <= s <= revealed], "a unit started during the final"
    assert shown["progress"] == {"played": 12, "scheduled": 12}
    assert commitment_of(shown["commitment"]["seed"], shown["commitment"]["salt"]) == shown["commitment"]["commitment"]
    check_complete_round_robin(folder, ["ace.v1", "bee.v1", "cat.v1"], 2)
    res = subprocess.run(
        [sys.executable, "-m", "referee.cli", "verify", "--db", "final/tournament.db"], cwd=folder,
        capture_output=True, text=True, timeout=scaled(300), env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
