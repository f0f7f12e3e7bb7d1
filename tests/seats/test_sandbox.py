"""The sandbox against hostile bots: real subprocesses, real matches.

Each test plays a short sandboxed match of one hostile bot (tests/bots/
hostile_*.py) against the random sample bot, with small limits so that
nothing a bot does can harm the machine (128 MiB, 16 processes, 3 CPU
seconds, 1 MiB files, an 8 MiB scratch), and checks containment: the
hostile bot is charged with the right reason, the innocent one is not, the
match finishes, and afterwards no process is left in any PID namespace a
bot of the match had (whatever it did to its session, environment or pid).
What a bot saw it reports on stderr, which the referee keeps beside each
game log; the tests read it there.

The tests skip, with the reason, only where the machine cannot sandbox.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio
from needs import needs_sandbox
from paths import RANDOM_BOT, ROOT, TEST_BOTS
from proctools import procs_with
from timing import await_until, scaled

import referee
from protocol.messages import TimeControl
from referee.errors import ConfigError, SandboxUnavailable
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, MatchResult, run_match
from referee.play.session import stderr_path
from referee.seats import sandbox as sandbox_module
from referee.seats.bot_command import BotSpec, resolve_command
from referee.seats.guardian import GUARDIAN
from referee.seats.sandbox import (
    SEAT_UID_BASE,
    SEAT_UIDS_PER_REFEREE,
    SandboxLimits,
    limits_from_table,
    parse_limits,
    probe_host,
)
from referee.seats.sandbox import host as sandbox_host

GAME = get_game("chicago")
RULES = build_rules(GAME, None, {"target_score": 10})
TC = TimeControl(decision_ms=1000, startup_ms=10000)
LIMITS = SandboxLimits(memory_mb=128, processes=16, cpu_s=3, file_size_mb=1, open_files=64, scratch_mb=8)
MATCH_BOUND_S = scaled(90.0)


# ------------------------------------------------------------------ helpers


def pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def session_of(pid: int) -> int | None:
    """The session a process is in (a daemon has one of its own), or None once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def procs_in(namespaces: set[str]) -> list[int]:
    """Live processes in any of these PID namespaces."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and pid_namespace(int(entry.name)) in namespaces:
            try:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def seat_uid_procs() -> list[int]:
    """Processes running under this referee's seat uids."""
    block = SEAT_UID_BASE + SEAT_UIDS_PER_REFEREE * (os.getpid() % 4096)
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
            if block <= uid < block + SEAT_UIDS_PER_REFEREE:
                found.append(int(entry.name))
    return found


async def wait_empty(fn: Any, within: float = 5.0) -> list[int]:
    await await_until(lambda: not fn(), within)
    return fn()


async def watch_namespaces(marker: str, seen: set[str]) -> None:
    """While the match runs: the PID namespaces of the bots' processes."""
    while True:
        for pid in procs_with(marker):
            ns = pid_namespace(pid)
            if ns is not None and ns != pid_namespace(os.getpid()):
                seen.add(ns)
        await trio.sleep(0.02)


def hostile(name: str, marker: str, *options: str) -> BotSpec:
    return resolve_command([str(TEST_BOTS / f"hostile_{name}.py"), marker, *options], name="hostile")


class Outcome:
    def __init__(self, result: MatchResult, reports: list[dict[str, Any]], stderr: str) -> None:
        self.result = result
        self.reports = reports
        self.stderr = stderr

    def reasons(self, name: str) -> list[str]:
        return [f.reason for r in self.result.records for f in r.failures if r.seat_names[f.seat] == name]


async def sandboxed_match(
    tmp_path: Path, bot: BotSpec, marker: str, limits: SandboxLimits = LIMITS, tc: TimeControl = TC, games: int = 2
) -> Outcome:
    """Play, then check what every test needs: it finished, the innocent bot
    was not charged, and nothing of any sandbox is left."""
    log_dir = tmp_path / "logs"
    innocent = resolve_command([str(RANDOM_BOT), marker], name="innocent")
    config = MatchConfig(
        game=GAME,
        rules=RULES,
        bots=[bot, innocent],
        games=games,
        seed=3,
        time_control=tc,
        log_dir=log_dir,
        sandbox=limits,
    )
    seen: set[str] = set()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_namespaces, marker, seen)
        with trio.fail_after(MATCH_BOUND_S):
            result = await run_match(config)
        nursery.cancel_scope.cancel()
    assert len(result.records) == games
    assert seen, "the bots' processes were never seen in a PID namespace of their own"
    assert await wait_empty(lambda: procs_in(seen)) == []
    assert await wait_empty(lambda: procs_with(marker)) == []
    if os.geteuid() == 0:
        assert await wait_empty(seat_uid_procs) == []
    stderr = ""
    for rec in result.records:
        path = stderr_path(Path(rec.log_path or ""), rec.seat_names.index("hostile"))
        stderr += path.read_text() if path.exists() else ""
    reports = [json.loads(line[7:]) for line in stderr.splitlines() if line.startswith("REPORT {")]
    outcome = Outcome(result, reports, stderr)
    assert outcome.reasons("innocent") == []
    return outcome


# ------------------------------------------------------------------ limits


@needs_sandbox
async def test_a_fork_bomb_meets_the_process_limit(tmp_path: Path) -> None:
    marker = f"refmark-{uuid.uuid4().hex}"
    out = await sandboxed_match(tmp_path, hostile("fork_bomb", marker), marker)
    assert "process_limit" in out.reasons("hostile")
    assert set(out.reasons("hostile")) <= {"process_limit"}


@needs_sandbox
async def test_a_memory_hog_meets_the_memory_limit(tmp_path: Path) -> None:
    marker = f"refmark-{uuid.uuid4().hex}"
    tc = TimeControl(decision_ms=20000, startup_ms=10000)  # the limit, not the clock, stops it
    out = await sandboxed_match(tmp_path, hostile("memory_hog", marker, "mb=512"), marker, tc=tc)
    assert out.reasons("hostile")[:1] == ["memory_limit"]
    failure = next(f for r in out.result.records for f in r.failures)
    assert "128 MiB" in failure.message


@needs_sandbox
async def test_a_cpu_burner_meets_the_cpu_limit_and_its_escaped_child_dies(tmp_path: Path) -> None:
    marker = f"refmark-{uuid.uuid4().hex}"
    # One CPU second, and a decision limit far beyond it even on a busy machine.
    tc = TimeControl(decision_ms=30000, startup_ms=10000)
    limits = dataclasses.replace(LIMITS, cpu_s=1)
    out = await sandboxed_match(tmp_path, hostile("cpu_escape", marker), marker, limits=limits, tc=tc, games=2)
    assert "cpu_limit" in out.reasons("hostile")
    assert "REPORT child=" in out.stderr  # the child really started (and the match's sweep got it)


@needs_sandbox
@pytest.mark.parametrize("mode", ["pidhop", "daemon"])
async def test_processes_that_hop_pids_or_daemonize_do_not_survive(tmp_path: Path, mode: str) -> None:
    marker = f"refmark-{uuid.uuid4().hex}"
    out = await sandboxed_match(tmp_path, hostile("escapes", marker, f"mode={mode}"), marker)
    assert out.reasons("hostile") == []  # it played; what it left behind was swept


# ------------------------------------------------------------------ what a bot can see and touch


@needs_sandbox
async def test_a_snooping_bot_sees_only_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"refmark-{uuid.uuid4().hex}"
    secret = f"secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("CHICAGO_TEST_SECRET", secret)
    config_file = tmp_path / "tournament.toml"
    config_file.write_text(f"seed = 1  # {secret}\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    guardian = GUARDIAN._proc
    pids = [str(os.getpid())] + ([str(guardian.pid)] if guardian is not None else [])
    source = Path(referee.__file__).resolve()
    planted = [tmp_path / "planted.txt", source.with_name("planted.py"), Path.cwd() / "planted-by-bot.txt"]
    first_log = tmp_path / "logs" / "game-00001.jsonl"  # open for writing by the referee meanwhile
    bot = hostile(
        "snoop",
        marker,
        f"pids={','.join(pids)}",
        f"port={port}",
        f"paths={config_file},{first_log},{source}",
        f"write={','.join(str(p) for p in [*planted, first_log])}",
    )
    try:
        out = await sandboxed_match(tmp_path, bot, marker)
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection ever reached the host's loopback
    finally:
        listener.close()
    assert out.reasons("hostile") == []
    assert out.reports, out.stderr
    for rep in out.reports:
        # Processes: its own PID namespace, nobody else's pipes.
        assert rep["own_pid"] < 100 and rep["own_pid"] in rep["visible_pids"]
        assert len(rep["visible_pids"]) <= 3  # bwrap's init, the bot (a user's: prlimit exec'd into it), nothing else
        # (bwrap's init holds /dev/null, not the bot's stdin; no other pipe is in sight)
        assert all(link == "/dev/null" or link.startswith("error") for link in rep["fd0_of_others"].values())
        for pid, probes in rep["pids"].items():
            assert probes == {
                "environ": "FileNotFoundError",
                "cmdline": "FileNotFoundError",
                "signal": "ProcessLookupError",
            }, pid
        # Environment: the allowlist only, no secret.
        assert secret not in json.dumps(rep["env"])
        assert set(rep["env"]) <= {"PATH", "LANG", "HOME", "TMPDIR", "PWD", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"}
        assert rep["env"]["HOME"] == rep["cwd"] == "/scratch"
        # Network: none.
        assert rep["connect"] != "connected"
        # Files: the config, the logs and the referee's source are not there;
        # its own folder is read-only, its scratch is writable.
        assert set(rep["paths"].values()) == {"FileNotFoundError"}
        assert rep["import_referee_games"] == "ok"  # the pure engine is shown, read-only
        assert rep["engine_files"] == ["__init__.py", "bots", "errors.py", "games"]  # the engine and built-in bots only
        assert rep["engine_write"] in ("OSError", "PermissionError")
        assert set(rep["import_runtime"].values()) == {"ModuleNotFoundError"}, rep["import_runtime"]
        assert rep["write"]["/bot/planted.txt"] in ("OSError", "PermissionError")
        assert rep["write"]["/scratch/mine.txt"] == "written"
        # No unbounded tmpfs: / and /dev are read-only, and there is no /dev/shm.
        assert [rep["write"][p] for p in ("/planted.txt", "/dev/planted.txt", "/dev/shm/planted.txt")] == [
            "OSError",
            "OSError",
            "FileNotFoundError",
        ]
        assert all(rep["write"][str(p)] != "written" for p in [*planted, first_log])
        # Devices: the few programs use, no terminal, no pseudo-terminals.
        assert rep["dev"] == ["fd", "null", "random", "stderr", "stdin", "stdout", "urandom", "zero"]
        assert rep["devices"] == {"null": 1, "zero": 4, "urandom": 4, "random": 4, "tty": "FileNotFoundError"}
        if os.geteuid() == 0:
            assert rep["uid"] != 0
    assert secret not in out.stderr
    assert not any(p.exists() for p in planted) and not (TEST_BOTS / "planted.txt").exists()
    lines = first_log.read_text().splitlines()  # intact: every line a record, the header first
    assert [json.loads(line)["type"] for line in lines][:: len(lines) - 1] == ["header", "result"]
    assert GUARDIAN._proc is None or GUARDIAN._proc.poll() is None


@needs_sandbox
async def test_the_log_header_records_the_isolation(tmp_path: Path) -> None:
    marker = f"refmark-{uuid.uuid4().hex}"
    out = await sandboxed_match(tmp_path, hostile("escapes", marker, "mode=daemon"), marker, games=2)
    header = json.loads(Path(out.result.records[0].log_path or "").read_text().splitlines()[0])
    assert header["isolation"]["sandbox"] == "bubblewrap"
    assert header["isolation"]["limits"]["memory_mb"] == 128
    assert "network" in header["isolation"]["namespaces"] and "pid" in header["isolation"]["namespaces"]


# ------------------------------------------------------------------ as an unprivileged user


def _copy_for_nobody(dest: Path) -> tuple[Path, Path]:
    """The referee, its dependencies and the bots, readable by every user."""
    import attr  # noqa: F401  (trio's dependencies, imported to find their folders)
    import msgspec
    import outcome
    import sniffio
    import sortedcontainers

    lib = dest / "lib"
    for module in (
        referee,
        sys.modules["protocol"],
        trio,
        msgspec,
        outcome,
        sniffio,
        sortedcontainers,
        sys.modules["attr"],
        __import__("attrs"),
        __import__("idna"),
    ):
        src = Path(module.__file__ or "").parent
        shutil.copytree(src, lib / src.name, ignore=shutil.ignore_patterns("__pycache__"))
    bots = dest / "bots"
    bots.mkdir()
    for name in ("_botlib.py", "hostile_fork_bomb.py"):
        shutil.copy(TEST_BOTS / name, bots / name)
    shutil.copy(RANDOM_BOT, bots / "random_bot.py")
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return lib, bots


NOBODY_MATCH = """
import json, sys, trio
from pathlib import Path
from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, run_match
from referee.seats.bot_command import resolve_command
from referee.seats.sandbox import SandboxLimits
bots, marker = Path(sys.argv[1]), sys.argv[2]
game = get_game("chicago")
config = MatchConfig(game=game, rules=build_rules(game, None, {"target_score": 10}), games=2, seed=3,
    bots=[resolve_command([str(bots / "hostile_fork_bomb.py"), marker], name="hostile"),
          resolve_command([str(bots / "random_bot.py"), marker], name="innocent")],
    time_control=TimeControl(decision_ms=1000, startup_ms=10000),
    sandbox=SandboxLimits(memory_mb=128, processes=16, cpu_s=3, file_size_mb=1, open_files=64, scratch_mb=8))
result = trio.run(run_match, config)
print(json.dumps([[r.seat_names[f.seat], f.reason] for r in result.records for f in r.failures]))
"""


@needs_sandbox
@pytest.mark.skipif(os.geteuid() != 0, reason="runs the match as nobody, which needs root to switch to")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
def test_a_sandboxed_match_as_an_unprivileged_user() -> None:
    python = sandbox_module.sandbox_python()
    if python is None:
        pytest.skip("needs a system python of the referee's version (nobody cannot run a venv under root's home)")
    with tempfile.TemporaryDirectory(prefix="sandbox-nobody-") as tmp:  # pytest's tmp folders are root's only
        _match_as_nobody(Path(tmp), python)


def _match_as_nobody(tmp_path: Path, python: str) -> None:
    tmp_path.chmod(0o755)
    lib, bots = _copy_for_nobody(tmp_path / "copy")
    script = tmp_path / "copy" / "match.py"
    script.write_text(NOBODY_MATCH)
    script.chmod(0o644)
    marker = f"refmark-{uuid.uuid4().hex}"
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(lib),
        "HOME": str(tmp_path / "copy"),
        "LANG": "C.UTF-8",
    }
    res = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, str(script), str(bots), marker],
        capture_output=True,
        text=True,
        timeout=MATCH_BOUND_S,
        env=env,
        cwd=str(tmp_path / "copy"),
    )
    assert res.returncode == 0, res.stderr[-2000:]
    failures = json.loads(res.stdout.strip().splitlines()[-1])
    assert ["hostile", "process_limit"] in failures
    assert all(name == "hostile" for name, _ in failures)
    assert procs_with(marker) == []


# ------------------------------------------------------------------ fail closed, and the limit syntax


def test_a_sandboxed_match_refuses_to_start_without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    real = probe_host()
    missing = sandbox_module.HostReport(**{**real.__dict__, "bwrap": None, "works": False})
    monkeypatch.setattr(sandbox_host, "probe_host", lambda: missing)
    bots = [resolve_command([str(RANDOM_BOT)]), resolve_command([str(RANDOM_BOT)], name="b")]
    with pytest.raises(SandboxUnavailable, match=r"bubblewrap \(bwrap\) is not installed: install bubblewrap"):
        MatchConfig(game=GAME, rules=RULES, bots=bots, games=2, seed=1, sandbox=SandboxLimits())
    MatchConfig(game=GAME, rules=RULES, bots=bots, games=2, seed=1)  # unsandboxed still runs


@needs_sandbox
def test_a_bot_whose_folder_holds_the_referee_is_refused(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("")
    (tmp_path / "logs").mkdir()
    bots = [resolve_command([str(bot)]), resolve_command([str(RANDOM_BOT)], name="b")]
    with pytest.raises(SandboxUnavailable, match="would be visible to it and holds"):
        MatchConfig(
            game=GAME, rules=RULES, bots=bots, games=2, seed=1, sandbox=SandboxLimits(), log_dir=tmp_path / "logs"
        )


def test_limits_parse_and_name_what_is_wrong() -> None:
    limits = parse_limits("memory=2G,processes=32,cpu=2m,file_size=8M,open_files=100,scratch=16,env=API_KEY:OTHER")
    assert limits == SandboxLimits(
        memory_mb=2048, processes=32, cpu_s=120, file_size_mb=8, open_files=100, scratch_mb=16, env=("API_KEY", "OTHER")
    )
    assert parse_limits("processes=8") == SandboxLimits(processes=8)
    assert limits_from_table({"memory": 256, "env": ["A"]}) == SandboxLimits(memory_mb=256, env=("A",))
    for text, message in [
        ("memory=lots", "sandbox memory: 'lots' is not a positive size"),
        ("cpu=0", "sandbox cpu"),
        ("fork=3", "unknown limit 'fork'"),
        ("memory", "is not KEY=VALUE"),
        ("env=1BAD", "give variable names"),
    ]:
        with pytest.raises(ConfigError, match=message):
            parse_limits(text)
    assert isinstance(BotSpec("x", ("x",)).sandbox, type(None))


REFEREE_MATCH = """
import sys, trio
from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, run_match
from referee.seats.bot_command import resolve_command
from referee.seats.sandbox import SandboxLimits
bot, innocent, marker = sys.argv[1:4]
game = get_game("chicago")
config = MatchConfig(game=game, rules=build_rules(game), games=200, seed=3,
    bots=[resolve_command([bot, marker, "mode=daemon"], name="hostile"),
          resolve_command([innocent, marker], name="innocent")],
    time_control=TimeControl(decision_ms=1000, startup_ms=10000),
    sandbox=SandboxLimits(memory_mb=128, processes=16, cpu_s=30, file_size_mb=1, open_files=64, scratch_mb=8))
trio.run(run_match, config)
"""


@needs_sandbox
async def test_nothing_survives_a_referee_killed_mid_match(tmp_path: Path) -> None:
    marker = f"refmark-{uuid.uuid4().hex}"
    script = tmp_path / "referee_match.py"
    script.write_text(REFEREE_MATCH)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(TEST_BOTS / "hostile_escapes.py"), str(RANDOM_BOT), marker],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=str(ROOT),
    )
    seen: set[str] = set()

    def sandboxes_up() -> bool:
        for pid in procs_with(marker):
            ns = pid_namespace(pid)
            if ns is not None and ns != pid_namespace(os.getpid()):
                seen.add(ns)
        return len(seen) == 2

    def daemon_out() -> bool:
        # Sessions of the marked processes: the referee's (the test's), each
        # sandbox's own, and the daemon's, which it made for itself.
        return len({session_of(pid) for pid in procs_with(marker)} - {None}) >= 4

    try:
        assert await await_until(sandboxes_up, 30), "the sandboxed bots never started"
        assert await await_until(daemon_out, 30), "the hostile bot's daemon never left its session"
    finally:
        proc.kill()  # SIGKILL: the referee cannot clean up; its guardian must
        proc.wait()
    assert await wait_empty(lambda: procs_in(seen), within=10) == []
    assert await wait_empty(lambda: procs_with(marker), within=5) == []
