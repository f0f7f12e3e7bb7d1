"""Fairness on a loaded machine: CPU time beside wall time, and freeze_idle.

Real bot processes (tests/bots/cpu_user.py, idle_worker.py) in short
matches: a bot that computes is charged CPU close to its wall time, one that
sleeps is charged almost none, the CPU of a child process counts; and with
freeze_idle a bot that works in a background thread gets (next to) nothing
done while it is not its turn, where without it it works all the time. The
margins are wide: the machine may be busy. Tests that need cgroups or the
sandbox skip with the reason where the machine lacks them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio
from needs import needs_sandbox
from paths import TEST_BOTS
from timing import scaled, wait_until

from protocol.messages import TimeControl
from referee.errors import SandboxUnavailable
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, MatchResult, run_match
from referee.play.session import stderr_path
from referee.seats import sandbox as sandbox_module
from referee.seats.bot_command import resolve_command
from referee.seats.cgroups import BotCgroup, CgroupHost
from referee.seats.cputime import ProcessTreeCpu
from referee.seats.sandbox import SandboxLimits, limits_from_table, probe_host
from referee.seats.sandbox import host as sandbox_host
from referee.tournament.config import TOURNAMENT_SANDBOX

GAME = get_game("chicago")
RULES = build_rules(GAME, None, {"target_score": 10})
TC = TimeControl(decision_ms=3000, startup_ms=10000)
LIMITS = SandboxLimits(memory_mb=256, processes=32, cpu_s=60, file_size_mb=1, open_files=64, scratch_mb=8)
needs_freezer = pytest.mark.skipif(
    "freezer" not in probe_host().cgroups.usable,
    reason="no cgroup freezer the referee can use (needs root and cgroups)",
)


def bot(name: str, *options: str, label: str | None = None) -> Any:
    return resolve_command([str(TEST_BOTS / f"{name}.py"), f"refmark-{uuid.uuid4().hex}", *options], name=label or name)


async def play(tmp_path: Path, bots: list[Any], sandbox: SandboxLimits | None = None, games: int = 1) -> MatchResult:
    config = MatchConfig(
        game=GAME,
        rules=RULES,
        bots=bots,
        games=games,
        seed=5,
        time_control=TC,
        log_dir=tmp_path / "logs",
        sandbox=sandbox,
    )
    with trio.fail_after(scaled(240)):
        return await run_match(config)


def actions_of(result: MatchResult, name: str) -> list[dict[str, Any]]:
    found = []
    for rec in result.records:
        seat = rec.seat_names.index(name)
        lines = Path(rec.log_path or "").read_text().splitlines()
        found += [r for r in map(json.loads, lines) if r["type"] == "action" and r["seat"] == seat]
    return found


def summary(result: MatchResult, name: str) -> dict[str, Any]:
    return next(b.as_dict() for b in result.bots if b.name == name)


# ------------------------------------------------------------------ CPU time


async def _cpu_beside_wall(tmp_path: Path, sandbox: SandboxLimits | None) -> None:
    burner = bot("cpu_user", "how=burn", "ms=40", label="burner")
    sleeper = bot("cpu_user", "how=sleep", "ms=40", label="sleeper")
    result = await play(tmp_path, [burner, sleeper], sandbox)
    burn, sleep = actions_of(result, "burner"), actions_of(result, "sleeper")
    assert len(burn) >= 5 and len(sleep) >= 5
    assert all(a["source"] == "bot" and a["cpu_ms"] is not None for a in burn + sleep)
    assert all(a["cpu_ms"] <= a["ms"] + 5 for a in burn)  # one thread cannot use more CPU than wall time
    assert statistics.median(a["cpu_ms"] for a in burn) >= 35  # computed for 40 ms of CPU
    assert statistics.median(a["cpu_ms"] for a in sleep) < 10  # waited for 40 ms
    assert statistics.median(a["ms"] for a in sleep) >= 40
    # The summaries carry the same figures: the result record of the log, and the match's.
    for rec in result.records:
        records = [json.loads(line) for line in Path(rec.log_path or "").read_text().splitlines()]
        logged = records[-1]
        assert logged["type"] == "result"
        seat = rec.seat_names.index("burner")
        mine = [r for r in records if r["type"] == "action" and r["seat"] == seat]
        assert logged["cpu_ms"][seat] == pytest.approx(sum(a["cpu_ms"] for a in mine), abs=1)
        assert logged["think_ms"][seat] == pytest.approx(sum(a["ms"] for a in mine), abs=1)
        assert rec.cpu_ms[seat] == pytest.approx(logged["cpu_ms"][seat], abs=0.01)
    b, s = summary(result, "burner"), summary(result, "sleeper")
    assert b["decisions"] == len(burn) and s["decisions"] == len(sleep)
    assert b["cpu_ms_per_decision"] >= 35 > 10 > s["cpu_ms_per_decision"]
    assert s["ms_per_decision"] >= 40


async def test_cpu_time_is_recorded_beside_wall_time(tmp_path: Path) -> None:
    await _cpu_beside_wall(tmp_path, None)


@needs_sandbox
async def test_cpu_time_of_a_sandboxed_bot_is_recorded_beside_wall_time(tmp_path: Path) -> None:
    await _cpu_beside_wall(tmp_path, LIMITS)


async def _child_cpu(tmp_path: Path, sandbox: SandboxLimits | None) -> list[dict[str, Any]]:
    parent = bot("cpu_user", "how=child", "ms=60", label="parent")
    sleeper = bot("cpu_user", "how=sleep", "ms=1", label="sleeper")
    result = await play(tmp_path, [parent, sleeper], sandbox)
    acts = actions_of(result, "parent")
    assert len(acts) >= 5
    return acts


async def test_cpu_time_counts_the_children_a_bot_waits_for(tmp_path: Path) -> None:
    # The bot's own process only waits; its children compute 60 ms each. Without
    # a cgroup a waited-for child's time is read within a second (the parent's
    # cutime), so it is checked in total: at most the last second is unread.
    acts = await _child_cpu(tmp_path, None)
    total_ms = sum(a["cpu_ms"] for a in acts)
    children_ms = 60 * len(acts)
    assert children_ms >= 1800  # enough work that a meter missing the children fails below
    # Unread: the children of about the last second (1.3 s, for a loaded machine).
    assert total_ms >= children_ms - 1300, (total_ms, len(acts))


@needs_sandbox
async def test_cpu_time_of_a_sandbox_counts_every_process_in_it(tmp_path: Path) -> None:
    acts = await _child_cpu(tmp_path, LIMITS)
    assert statistics.median(a["cpu_ms"] for a in acts) >= 40  # the cgroup counts each child at once


def test_a_process_tree_meter_counts_threads_and_live_children() -> None:
    """A process whose thread and whose child both compute: the meter sees both."""
    code = (
        "import os, threading, time\n"
        "def burn(s):\n    end = time.thread_time() + s\n    while time.thread_time() < end: pass\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    burn(0.5); os._exit(0)\n"
        "t = threading.Thread(target=burn, args=(0.3,)); t.start(); t.join()\n"
        "os.waitpid(pid, 0); time.sleep(30)\n"
    )
    proc = subprocess.Popen([sys.executable, "-S", "-c", code])
    try:
        meter = ProcessTreeCpu(proc.pid)
        seen: list[float] = []

        def reading() -> bool:
            seen.append(meter.seconds())
            return seen[-1] >= 0.7

        wait_until(reading, 20, every=0.1)
        assert seen == sorted(seen)  # never goes back
        assert seen[-1] >= 0.7  # 0.3 s of CPU in the thread and 0.5 s in the child
    finally:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------ freeze_idle


async def _off_turn_work(tmp_path: Path, freeze: bool) -> tuple[float, dict[str, Any]]:
    worker = bot("idle_worker", label="worker")
    opponent = bot("cpu_user", "how=sleep", "ms=50", label="opponent")
    result = await play(tmp_path / str(freeze), [worker, opponent], dataclasses.replace(LIMITS, freeze_idle=freeze))
    assert not [f for rec in result.records for f in rec.failures]
    reports = []
    for rec in result.records:  # a game's report may land in the next game's file
        path = stderr_path(Path(rec.log_path or ""), rec.seat_names.index("worker"))
        text = path.read_text() if path.exists() else ""
        reports += [json.loads(line[7:]) for line in text.splitlines() if line.startswith("REPORT {")]
    assert reports, "the worker reported nothing"
    report = {key: sum(r[key] for r in reports) for key in reports[0]}
    assert report["requests"] >= 5 and report["off_turn_s"] >= 0.05
    return report["off_turn_work"] / report["off_turn_s"], report


@needs_sandbox
@needs_freezer
async def test_freeze_idle_stops_a_bot_computing_on_the_opponents_time(tmp_path: Path) -> None:
    free_rate, free = await _off_turn_work(tmp_path, freeze=False)
    frozen_rate, frozen = await _off_turn_work(tmp_path, freeze=True)
    assert free_rate > 0 and free["off_turn_work"] > 50, free  # unfrozen, it works while the opponent thinks
    # Frozen, what is left is the moment between its reply and the freeze (the
    # referee reading the reply), and after the thaw before the bot reads its request.
    assert frozen_rate < 0.15 * free_rate, (frozen, free)
    assert frozen["on_turn_work"] >= 0  # and it still plays its own turns


@needs_freezer
@pytest.mark.parametrize("kind", ["v2", "v1"])
def test_a_frozen_group_uses_no_cpu_and_dies_when_killed(kind: str) -> None:
    """Both freezers, directly: no CPU while frozen, CPU again once thawed,
    and `kill_all` ends a frozen group (v1 needs the thaw it does first)."""
    host = probe_host().cgroups
    if kind == "v2":
        if not host.freezer_v2:
            pytest.skip("no cgroup v2 freezer here")
        fhost = host
    else:
        v1 = Path("/sys/fs/cgroup/freezer")
        if not (v1 / "tasks").exists() or not os.access(v1, os.W_OK):
            pytest.skip("no writable cgroup v1 freezer here")
        fhost = CgroupHost(version="v1", parents={"freezer": v1})
    group = BotCgroup(fhost, f"{os.getpid()}-test-{kind}", 256 << 20, 8, freeze=True)
    proc = subprocess.Popen([sys.executable, "-S", "-c", "while True: pass"], preexec_fn=group.join_self)  # noqa: PLW1509 (joins its group before exec; no threads here)
    try:
        group.admit(proc.pid)  # its v2 groups (v1: it joined them itself)
        group.close_fds()
        meter = ProcessTreeCpu(proc.pid)
        time.sleep(0.2)
        group.freeze()
        assert wait_until(lambda: group.freezer_state() == "frozen", 10)  # the kernel finishes freezing
        before = meter.seconds()
        time.sleep(0.5)
        assert meter.seconds() - before < 0.01
        group.thaw()
        assert wait_until(lambda: meter.seconds() - before >= 0.05, 20)  # running again, however busy the machine
        group.freeze()
        group.kill_all()
        proc.wait(timeout=scaled(10))
        assert proc.returncode == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            group.thaw()
            proc.kill()
            proc.wait()
        group.remove()


def test_freeze_idle_refuses_without_a_freezer(monkeypatch: pytest.MonkeyPatch) -> None:
    host = probe_host()
    without = CgroupHost(
        version=host.cgroups.version, parents={c: p for c, p in host.cgroups.parents.items() if c != "freezer"}
    )
    fake = sandbox_module.HostReport(
        **{
            **host.__dict__,
            "cgroups": without,
            "works": True,
            "bwrap": "/bin/true",
            "prlimit": "/bin/true",
            "trial_error": "",
        }
    )
    monkeypatch.setattr(sandbox_host, "probe_host", lambda: fake)
    with pytest.raises(SandboxUnavailable, match="freeze_idle needs the cgroup freezer") as caught:
        sandbox_module.require_freezer(SandboxLimits(freeze_idle=True))
    assert "freeze_idle = false" in str(caught.value) and "\n" not in str(caught.value)
    sandbox_module.require_freezer(SandboxLimits(freeze_idle=False))  # without it, the same host will do
    with pytest.raises(SandboxUnavailable, match="freezer"):
        MatchConfig(
            game=GAME,
            rules=RULES,
            bots=[bot("cpu_user"), bot("cpu_user", label="other")],
            games=1,
            seed=1,
            time_control=TC,
            sandbox=SandboxLimits(freeze_idle=True),
        )


def test_freeze_idle_is_on_in_tournaments_and_can_be_switched_off() -> None:
    assert TOURNAMENT_SANDBOX.freeze_idle
    assert limits_from_table({"memory": "512M"}, TOURNAMENT_SANDBOX).freeze_idle
    assert not limits_from_table({"freeze_idle": False}, TOURNAMENT_SANDBOX).freeze_idle
    assert limits_from_table({"freeze_idle": "yes"}).freeze_idle
    assert not SandboxLimits().freeze_idle  # match --sandbox: asked for by name
    with pytest.raises(Exception, match="freeze_idle: 'maybe' is not true or false"):
        limits_from_table({"freeze_idle": "maybe"})


# ------------------------------------------------------------------ tournaments


async def test_a_tournament_stores_cpu_time_beside_think_time(tmp_path: Path) -> None:
    """Each game_seats row keeps the CPU time and the decisions next to the
    think time; a database made before those columns gets them on its next game."""
    import sqlite3

    from referee.tournament.config import parse_config
    from referee.tournament.run import TournamentRunner, prepare_store
    from referee.tournament.schedule import schedule_for
    from referee.tournament.store import Store

    burner, sleeper = TEST_BOTS / "cpu_user.py", TEST_BOTS / "cpu_user.py"
    config = (
        f'seed = 3\nsandbox = false\ndeal_sets = 1\ntime_control = "decision=3s,startup=10s"\n'
        f"[rules]\noptions = {{ target_score = 10 }}\n"
        f'[[bots]]\nname = "burner"\ncommand = "{burner} m how=burn ms=30"\n'
        f'[[bots]]\nname = "sleeper"\ncommand = "{sleeper} m how=sleep ms=30"\n'
    )
    t = parse_config(config, tmp_path)
    db = tmp_path / "r.db"
    store = Store.open(db, create=True, lock=True)
    try:
        schedule = schedule_for(t)
        prepare_store(t, store, schedule)
        store.conn.execute("ALTER TABLE game_seats DROP COLUMN cpu_ms")  # as a database made before them
        store.conn.execute("ALTER TABLE game_seats DROP COLUMN asked")
        with trio.fail_after(scaled(240)):
            outcome = await TournamentRunner(t, store, schedule, log_dir=tmp_path / "logs", concurrency=1).run()
        assert outcome.status == "completed"
    finally:
        store.close()
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT bot, think_ms, cpu_ms, asked FROM game_seats").fetchall()
    conn.close()
    assert rows and {r[0] for r in rows} == {"burner", "sleeper"}
    for bot_name, think, cpu, asked in rows:
        assert asked >= 5 and cpu is not None and think >= 30 * asked
        if bot_name == "burner":
            assert cpu >= 25 * asked  # 30 ms of CPU a decision
        else:
            assert cpu < 10 * asked  # it slept
