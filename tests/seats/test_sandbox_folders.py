"""A bot's folder as its sandbox shows it, real subprocesses and real bubblewrap.

As root every seat is a uid of its own, which cannot read a folder other
users may not read (a bot in a home folder). Such a bot plays from a
read-only copy, made once per digest of its files, readable by the seats
alone, and gone when the referee exits, Ctrl-C included; a folder too large
to copy is refused in one line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
import trio
from needs import SANDBOX_PROBLEMS, needs_sandbox
from paths import FIRST_LEGAL_BOT, ROOT, TEST_BOTS
from proctools import procs_with, wait_no_procs
from timing import scaled, wait_until

from protocol.messages import TimeControl
from referee.errors import SandboxUnavailable
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, run_match
from referee.play.session import stderr_path
from referee.seats.bot_command import resolve_command
from referee.seats.sandbox import SandboxLimits
from referee.seats.sandbox import folder as bot_folder
from referee.seats.sandbox.files import stage

GAME = get_game("chicago")
RULES = build_rules(GAME, None, {"target_score": 10})
TC = TimeControl(decision_ms=2000, startup_ms=10000)
LIMITS = SandboxLimits(memory_mb=256, processes=16, cpu_s=60, file_size_mb=1, open_files=64, scratch_mb=8)
needs_root_sandbox = pytest.mark.skipif(
    bool(SANDBOX_PROBLEMS) or os.geteuid() != 0,
    reason="needs a sandbox as root (a uid per seat): " + ("; ".join(SANDBOX_PROBLEMS) or "not root"),
)
BOUND_S = scaled(120.0)


def private_bot(tmp_path: Path) -> Path:
    """det_bot and its helper in `home/mybot`, with `home` closed to other users."""
    home = tmp_path / "home"
    folder = home / "mybot"
    folder.mkdir(parents=True)
    home.chmod(0o700)
    for name in ("det_bot.py", "_botlib.py"):
        shutil.copy(TEST_BOTS / name, folder / name)
    assert bot_folder.blocked_for_seats(folder) != ""
    return folder / "det_bot.py"


def stages_of(pid: int) -> list[Path]:
    return sorted(Path(tempfile.gettempdir()).glob(f"chicago-referee-files-{pid}-*"))


def copies_of(pid: int) -> list[Path]:
    return [p for s in stages_of(pid) for p in (s / "bots").glob("*") if not p.name.startswith(".")]


@needs_root_sandbox
async def test_two_starts_of_a_private_bot_make_one_copy_the_seats_alone_can_read(tmp_path: Path) -> None:
    bot = private_bot(tmp_path)
    marker = f"copymark-{uuid.uuid4().hex}"
    bots = [resolve_command([str(bot), marker, f"salt={name}"], name=name) for name in "ab"]
    made = bot_folder.COPIES.made
    config = MatchConfig(game=GAME, rules=RULES, bots=bots, games=2, seed=5, time_control=TC, sandbox=LIMITS)
    closed = bot_folder.blocked_for_seats(bot)  # the first folder other users may not pass
    assert config.notes == tuple(
        f"bot {name!r}: {closed} cannot be read by other users, so its sandbox shows it a "
        f"read-only copy of {bot.parent} (made once, removed when the referee exits)"
        for name in "ab"
    )
    with trio.fail_after(BOUND_S):
        result = await run_match(config)
    assert [r.failures for r in result.records] == [[], []]  # both seats played from the copy
    assert bot_folder.COPIES.made == made + 1  # two starts, one copy
    copy = bot_folder.COPIES.shown(bot.parent, "a")
    assert copy.parent == stage() / "bots" and sorted(p.name for p in copy.iterdir()) == ["_botlib.py", "det_bot.py"]
    for path in [copy.parent, copy, copy / "det_bot.py"]:
        st = path.stat()
        assert (st.st_uid, st.st_gid) == (0, bot_folder.SEAT_GROUP) and st.st_mode & 0o007 == 0, path
    assert copy.parent.stat().st_mode & 0o777 == 0o710  # the seats may pass, not list the copies
    assert bot_folder.COPIES.made == made + 1  # asking again for the unchanged folder copies nothing
    (bot.parent / "data.txt").write_text("an edit")
    assert bot_folder.COPIES.shown(bot.parent, "a") != copy  # an edited folder is a new digest, a new copy
    assert wait_no_procs(marker) == []


@needs_root_sandbox
def test_a_private_bot_plays_from_the_command_line_and_its_copy_goes_with_the_referee(tmp_path: Path) -> None:
    """Its copy is gone after a match that ends and after one stopped with Ctrl-C."""
    bot = private_bot(tmp_path)
    marker = f"copymark-{uuid.uuid4().hex}"
    base = [
        sys.executable,
        "-m",
        "referee.cli",
        "match",
        f"{bot} {marker} salt=a",
        str(FIRST_LEGAL_BOT),
        "--seed",
        "4",
        "--rule",
        "target_score=10",
        "--sandbox",
        "--time-control",
        "decision=5s,startup=20s",
    ]
    proc = subprocess.Popen(
        [*base, "--games", "2", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    out, err = proc.communicate(timeout=BOUND_S)
    assert proc.returncode == 0, err
    assert f"shows it a read-only copy of {bot.parent} (made once, removed when the referee exits)" in err
    assert all(not b["failures"] for b in json.loads(out)["bots"])
    assert stages_of(proc.pid) == []  # its staging folder, the copy in it, went with it

    proc = subprocess.Popen(
        [*base, "--games", "400"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        running = wait_until(lambda: proc.poll() is not None or (copies_of(proc.pid) and procs_with(marker)), 120)
        assert running and proc.poll() is None, "the bot never ran from its copy"
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        _, err = proc.communicate(timeout=BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err, err
    assert stages_of(proc.pid) == []
    assert wait_no_procs(marker) == []


@needs_root_sandbox
def test_a_private_folder_too_large_to_copy_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = private_bot(tmp_path)
    (bot.parent / "weights.bin").write_bytes(b"\0" * 4096)
    monkeypatch.setattr(bot_folder, "MAX_COPY_BYTES", 2048)
    bots = [resolve_command([str(bot)], name="big"), resolve_command([str(FIRST_LEGAL_BOT)], name="first")]
    with pytest.raises(SandboxUnavailable) as caught:
        MatchConfig(game=GAME, rules=RULES, bots=bots, games=2, seed=1, sandbox=LIMITS)
    message = str(caught.value)
    closed = bot_folder.blocked_for_seats(bot)
    assert "\n" not in message and message.startswith(f"bot 'big': {closed} cannot be read by other users")
    assert f"its folder {bot.parent} is too large to copy (more than 2 KiB or 10,000 files and folders)" in message


@needs_sandbox
async def test_nothing_a_bot_can_read_names_its_real_folder_the_checkout_or_the_run(tmp_path: Path) -> None:
    """A bot in this checkout reads its sandbox's PID 1 (bubblewrap: command
    line, environment, descriptors), itself and its mount table. bubblewrap's
    options reach it through `--args`, and the bot's folder is a copy, so no
    path of the bot's folder, of the checkout or of the run's files appears;
    the mount table names the staging folder the copies live in (and /usr),
    nothing else of the host."""
    marker = f"pathmark-{uuid.uuid4().hex}"
    spec = resolve_command([str(TEST_BOTS / "hostile_paths.py"), marker], name="paths")
    opponent = resolve_command([str(FIRST_LEGAL_BOT)], name="first")
    logs = tmp_path / "logs"
    config = MatchConfig(
        game=GAME, rules=RULES, bots=[spec, opponent], games=2, seed=5, time_control=TC, sandbox=LIMITS, log_dir=logs
    )
    with trio.fail_after(BOUND_S):
        result = await run_match(config)
    assert [r.failures for r in result.records] == [[], []]
    reports = []
    for rec in result.records:
        kept = stderr_path(Path(rec.log_path or ""), rec.seat_names.index("paths"))
        lines = kept.read_text().splitlines() if kept.exists() else []  # it reports once, when it starts
        reports += [json.loads(line[7:]) for line in lines if line.startswith("REPORT {")]
    assert reports
    staging = str(stage())
    host_paths = [str(ROOT), str(TEST_BOTS), str(tmp_path), staging, sys.prefix, tempfile.gettempdir() + "/"]
    for rep in reports:
        for key, value in rep.items():
            text = json.dumps(value)
            for path in host_paths:
                if key.endswith("/mountinfo") and path in (staging, tempfile.gettempdir() + "/"):
                    continue  # the staging folder: the one host path a mount table names (docs/hosting.md)
                assert path not in text, (key, path, value)
        assert "bwrap --args " in rep["1/cmdline"] and "/bot/hostile_paths.py" in rep["self/cmdline"]
        for key in ("1/mountinfo", "self/mountinfo"):
            roots = {line.split()[3] for line in rep[key].splitlines()}
            shown = {r for r in roots if not r.startswith(staging + "/")}
            assert shown <= {"/", "/newroot", "/usr", "/null", "/zero", "/urandom"}, shown
            assert {f"{staging}/etc", f"{staging}/lib"} <= roots
            assert any(r.startswith(f"{staging}/bots/") for r in roots)  # the bot's folder, a copy
    assert wait_no_procs(marker) == []
