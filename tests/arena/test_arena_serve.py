"""`arena serve` as a host runs it: a subprocess on 127.0.0.1, bots submitted
through the API by `arena submit`, built and checked in the sandbox, played
and rated; then `kill -9` and a restart, and nothing lost or doubled."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from needs import needs_sandbox
from paths import RANDOM_BOT, ROOT
from timing import scaled, wait_until

from referee.arena.online import UnitResult, replay

pytestmark = [needs_sandbox, pytest.mark.slow]

FAST = """
name = "e2e"
game = "chicago"
table_size = 2
concurrency = 2
time_control = "decision=2s,startup=20s"

[rules]
options = { target_score = 8 }

[matchmaking]
placement_units = 2
"""


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=scaled(600),
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})},
    )


def get(url: str, token: str | None = None) -> Any:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=scaled(30)) as resp:
        return json.loads(resp.read())


def games_in(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])


class Served:
    """`arena serve` running in its own process group."""

    def __init__(self, folder: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "arena", "serve", str(folder), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "NO_COLOR": "1"},
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the first line is the address
        assert "http://127.0.0.1:" in line, line + (self.proc.stderr.read() if self.proc.poll() is not None else "")
        self.base = line.split(" at ", 1)[1].strip().removesuffix("/api/leaderboard")

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(scaled(30))


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    folder = tmp_path / "comp"
    assert cli("arena", "init", str(folder)).returncode == 0
    config = folder / "arena.toml"
    config.write_text(FAST)
    tokens = {}
    for user in ("alice", "bob"):
        res = cli("arena", "user", "add", str(folder), user, "--json")
        tokens[user] = json.loads(res.stdout)["token"]
        (tmp_path / f"{user}.token").write_text(tokens[user] + "\n")
    yield folder, tokens


def bot_folder(tmp_path: Path, name: str, source: Path | str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    text = source.read_text() if isinstance(source, Path) else source
    (folder / "main.py").write_text(text)
    return folder


def test_bots_are_built_checked_played_and_survive_a_kill(arena: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    folder, tokens = arena
    served = Served(folder)
    try:
        submit = ["arena", "submit", served.base]
        res = cli(*submit, str(bot_folder(tmp_path, "r", RANDOM_BOT)), "--token-file", str(tmp_path / "alice.token"))
        assert res.returncode == 0 and "active" in res.stderr, res.stderr
        res = cli(
            *submit,
            str(bot_folder(tmp_path, "b", RANDOM_BOT.read_text() + "# bob's copy\n")),
            "--token-file",
            str(tmp_path / "bob.token"),
        )
        assert res.returncode == 0, res.stderr
        # A bot that never says hello fails the gate; its owner sees why, another user does not.
        mute = bot_folder(tmp_path, "mute", "import sys\nfor line in sys.stdin:\n    pass\n")
        res = cli(*submit, str(mute), "--token-file", str(tmp_path / "bob.token"), "--name", "mute", "--json")
        assert res.returncode == 1 and "failed: check:" in res.stderr, res.stderr
        failed = json.loads(res.stdout)
        assert "hello" in failed["reason"] and failed["check_log"]
        assert "reason" not in get(f"{served.base}/api/submissions/{failed['id']}", tokens["alice"])
        # Games are played and rated; a finished game's log verifies.
        assert wait_until(lambda: len(get(f"{served.base}/api/games")["games"]) >= 4, 300), "no games played"
        board = get(f"{served.base}/api/leaderboard")
        assert sorted(e["bot"] for e in board["bots"]) == ["alice", "bob"]
        assert all(e["games"] >= 2 and e["units"] >= 1 for e in board["bots"])
        game = get(f"{served.base}/api/games")["games"][0]
        with urllib.request.urlopen(f"{served.base}/api/games/{game['id']}/log", timeout=scaled(30)) as resp:
            (tmp_path / "game.jsonl").write_bytes(resp.read())
        verified = cli("verify", str(tmp_path / "game.jsonl"))
        assert verified.returncode == 0, verified.stdout + verified.stderr
    finally:
        served.kill()

    db = folder / "arena.db"
    with sqlite3.connect(db) as conn:
        before_games = conn.execute("SELECT count(*) FROM games").fetchone()[0]
        units = conn.execute("SELECT members, totals FROM units WHERE status = 'done' ORDER BY done_order").fetchall()
        saved = dict(conn.execute("SELECT submission, mu FROM ratings").fetchall())
    replayed = replay(UnitResult(tuple(map(str, json.loads(m))), tuple(json.loads(t))) for m, t in units)
    assert {int(k): r.mu for k, r in replayed.items()} == pytest.approx(saved)

    served = Served(folder)  # resumes: a running unit is played again, nothing is counted twice
    try:
        assert wait_until(lambda: games_in(db) > before_games + 4, 300), "play did not go on"
    finally:
        served.kill()
    with sqlite3.connect(db) as conn:
        twice = conn.execute("SELECT unit, rotation, count(*) FROM games GROUP BY unit, rotation HAVING count(*) > 1")
        assert twice.fetchall() == []
        orphans = conn.execute("SELECT count(*) FROM units WHERE status = 'done' AND totals IS NULL").fetchone()[0]
        assert orphans == 0
        logged = [r[0] for r in conn.execute("SELECT log_name FROM games")]
    assert all((folder / "logs" / name).is_file() for name in logged)  # a recorded game has its whole log
