"""`arena serve` as a host runs it, for the tests that drive it end to end:
the CLI as a subprocess, the API over HTTP, a server in its own process
group that a test can `kill -9`."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from paths import ROOT
from timing import scaled

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

    def __init__(self, folder: Path, *options: str, wrapper: tuple[str, ...] = ()) -> None:
        """`wrapper`: a command that runs the server (e.g. in a namespace of its own)."""
        self.proc = subprocess.Popen(
            [*wrapper, sys.executable, "-m", "referee.cli", "arena", "serve", str(folder), "--port", "0", *options],
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
        self.base = line.split(" at ", 1)[1].split()[0].rstrip("/")

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # it stopped by itself, and so did all its group
            pass
        self.proc.wait(scaled(30))


def new_arena(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An arena folder with the FAST config and two users, alice and bob,
    whose tokens are also in `alice.token` and `bob.token` beside it."""
    folder = tmp_path / "comp"
    assert cli("arena", "init", str(folder)).returncode == 0
    config = folder / "arena.toml"
    config.write_text(FAST)
    tokens = {}
    for user in ("alice", "bob"):
        res = cli("arena", "user", "add", str(folder), user, "--json")
        tokens[user] = json.loads(res.stdout)["token"]
        (tmp_path / f"{user}.token").write_text(tokens[user] + "\n")
    return folder, tokens


def bot_folder(tmp_path: Path, name: str, source: Path | str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    text = source.read_text() if isinstance(source, Path) else source
    (folder / "main.py").write_text(text)
    return folder


def submit_copies(base: str, tmp_path: Path, users: tuple[str, ...] = ("alice", "bob")) -> None:
    """Each user submits a copy of the random sample bot (a comment apart, so each is its own archive)
    with their token file, and follows it to `active`."""
    random_bot = ROOT / "sample_bots" / "python" / "random_bot.py"
    for user in users:
        sent = cli(
            "arena",
            "submit",
            base,
            str(bot_folder(tmp_path, user, random_bot.read_text() + f"# {user}\n")),
            "--token-file",
            str(tmp_path / f"{user}.token"),
        )
        assert sent.returncode == 0 and "active" in sent.stderr, sent.stderr
