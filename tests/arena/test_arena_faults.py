"""`arena serve` under the faults a host meets: the server `kill -9`ed in
the middle of a build (the build goes with it and runs again after the
restart), and a disk that fills while the arena runs (it stops in one line
before anything is lost). Real subprocesses; the full disk is a small tmpfs
in a mount namespace of the server's own, so the machine's disks are never
filled."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from arena_served import Served, cli, get, new_arena
from needs import needs_sandbox
from paths import RANDOM_BOT
from proctools import procs_with, wait_no_procs
from timing import scaled, wait_until

pytestmark = [needs_sandbox, pytest.mark.slow]

SLOW_BUILD = 'name = "slow"\nrun = "python3 main.py"\nbuild = "sleep 7.31 && echo built > built.txt"\n'


def status(base: str, sub: int, token: str) -> str:
    return str(get(f"{base}/api/submissions/{sub}", token)["status"])


def test_a_build_cut_by_kill_9_goes_with_the_server_and_runs_again(tmp_path: Path) -> None:
    folder, tokens = new_arena(tmp_path)
    bot = tmp_path / "slow"
    bot.mkdir()
    (bot / "main.py").write_text(RANDOM_BOT.read_text())
    (bot / "bot.toml").write_text(SLOW_BUILD)
    served = Served(folder)
    try:
        res = cli(
            "arena",
            "submit",
            served.base,
            str(bot),
            "--token-file",
            str(tmp_path / "alice.token"),
            "--no-follow",
            "--json",
        )
        assert res.returncode == 0, res.stderr
        sub = json.loads(res.stdout)["id"]
        assert wait_until(lambda: status(served.base, sub, tokens["alice"]) == "building", 120)
        assert wait_until(lambda: bool(procs_with("sleep 7.31")), 60), "the build never started"
        os.kill(served.proc.pid, signal.SIGKILL)  # the server alone, as the kernel's OOM killer would
        served.proc.wait(scaled(30))
    finally:
        served.kill()
    assert wait_no_procs("sleep 7.31", within=30) == []  # the build did not outlive the server
    assert not (folder / "builds" / f"{_sha(folder, sub)}.json").exists()  # nothing recorded of it

    served = Served(folder)
    try:
        assert wait_until(lambda: status(served.base, sub, tokens["alice"]) in ("active", "failed"), 300)
        shown = get(f"{served.base}/api/submissions/{sub}", tokens["alice"])
        assert shown["status"] == "active", shown
    finally:
        served.kill()
    built = folder / "builds" / _sha(folder, sub)
    assert (built / "built.txt").read_text() == "built\n"


def _sha(folder: Path, sub: int) -> str:
    import sqlite3

    with sqlite3.connect(folder / "arena.db") as conn:
        return str(conn.execute("SELECT sha256 FROM submissions WHERE id = ?", (sub,)).fetchone()[0])


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1) to mount a tmpfs"
)
def test_a_disk_that_fills_stops_the_server_in_one_line(tmp_path: Path) -> None:
    source, _tokens = new_arena(tmp_path)
    mount = tmp_path / "small"
    mount.mkdir()
    folder = mount / "comp"
    script = 'mount -t tmpfs -o size=160m tmpfs "$1" && cp -a "$2" "$3" && shift 3 && exec "$@"'
    wrapper = (
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        str(mount),
        str(source),
        str(folder),
    )
    served = Served(folder, wrapper=wrapper)
    try:
        seen = Path(f"/proc/{served.proc.pid}/root") / str(folder).lstrip("/")  # the tmpfs, as the server sees it
        assert (seen / "arena.toml").is_file()
        stat = os.statvfs(seen)
        with (seen / "filler").open("wb") as fh:  # leave 32 MiB: under the 64 MiB the arena keeps
            fh.truncate(0)
            chunk = b"\0" * (1 << 20)
            for _ in range(max(0, (stat.f_bavail * stat.f_frsize >> 20) - 32)):
                fh.write(chunk)
        rc = served.proc.wait(scaled(60))
    finally:
        served.kill()
    assert served.proc.stderr is not None
    said = served.proc.stderr.read()
    errors = [line for line in said.splitlines() if line.startswith("error:")]
    assert rc != 0 and len(errors) == 1 and "free on the arena's disk" in errors[0], said
    assert "Traceback" not in said
    assert not mount.joinpath("comp").exists()  # the tmpfs was the server's alone
