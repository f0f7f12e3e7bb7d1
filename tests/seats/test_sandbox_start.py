"""A sandbox's processes are in their cgroups before the bot's first instruction.

The new process enters its cgroup v1 groups itself before it execs
bubblewrap; where a bot has cgroup v2 groups (here: the v2 freezer that
freeze_idle uses on a hybrid host) the referee moves bubblewrap's processes
while bubblewrap waits at its gate. The bot of these tests
(tests/bots/first_instruction.py) forks as many children as it can at its
very first instructions and reports what it got and which cgroups it is in:
inside its process limit, it gets exactly what the limit leaves; outside,
the much higher rlimit backstop would let it have three times as many.
A move that fails ends the start, with one line, before anything of the bot
ran, and a gate its referee never opens makes bubblewrap exit rather than
wait. Real subprocesses throughout, bounded by small limits.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import uuid

import pytest
import trio
from needs import SANDBOX_PROBLEMS, needs_sandbox
from paths import FIRST_LEGAL_BOT, TEST_BOTS
from proctools import procs_with, wait_no_procs
from timing import scaled

from referee.errors import SandboxUnavailable
from referee.seats import bot_process
from referee.seats import sandbox as sandbox_module
from referee.seats.bot_command import resolve_command
from referee.seats.bot_process import start_bot
from referee.seats.cgroups import BotCgroup
from referee.seats.sandbox import SandboxLimits, forbidden_paths, plan, probe_host

BOT = TEST_BOTS / "first_instruction.py"
USABLE = probe_host().cgroups.usable if not SANDBOX_PROBLEMS else ()
needs_pids_group = pytest.mark.skipif(
    "pids" not in USABLE,
    reason="needs a sandbox with a pids cgroup (root, cgroups): "
    + ("; ".join(SANDBOX_PROBLEMS) or "no pids controller the referee may use"),
)
needs_v2_freezer = pytest.mark.skipif(
    "pids" not in USABLE or not probe_host().cgroups.freezer_v2,
    reason="needs the cgroup v2 freezer next to a pids cgroup (freeze_idle entered behind the gate)",
)
PROCESSES = 8
LIMITS = SandboxLimits(memory_mb=128, processes=PROCESSES, cpu_s=5, file_size_mb=1, open_files=32, scratch_mb=4)
FREEZING = dataclasses.replace(LIMITS, freeze_idle=True)
BOUND_S = scaled(60.0)  # any one start, or any one wait for a process to end


def first_report(limits: SandboxLimits) -> tuple[dict, list[int], int]:
    """Start the bot, read its report; (report, its processes by the cgroups,
    forks its group refused). Everything is gone afterwards."""
    marker = f"first-{uuid.uuid4().hex}"
    spec = resolve_command([str(BOT), marker], sandbox=limits)

    async def run() -> tuple[dict, list[int], int]:
        async with trio.open_nursery() as nursery:
            with trio.fail_after(BOUND_S):
                bot = await start_bot(nursery, spec)
                try:
                    report = json.loads(await bot.receive_line())
                    assert bot.sandbox is not None and bot.sandbox.cgroup is not None
                    inside = bot.sandbox.cgroup.pids()
                    refused = bot.sandbox.cgroup.forks_refused()
                finally:
                    await bot.close()
        return report, inside, refused

    result = trio.run(run)
    assert wait_no_procs(marker, within=10) == []
    return result


@needs_pids_group
def test_a_bot_is_inside_its_process_limit_at_its_first_instruction() -> None:
    report, inside, refused = first_report(LIMITS)
    # pids.max is the limit + 2 (the outer bwrap and the sandbox's init are in
    # the group too): the bot itself and 7 children. Its rlimit backstop
    # (the limit + 16) would have let it have 21.
    assert report["refused"] == "BlockingIOError", report
    assert report["children"] == PROCESSES - 1, report
    assert refused >= 1  # the group, not the rlimit, said no
    assert len(inside) == 2 + 1 + report["children"]  # every process of the sandbox is in its groups


@needs_pids_group
def test_without_its_groups_the_same_bot_forks_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the report above tells a bot in its groups from one that
    is not. With the move into the groups skipped, the bot gets the rlimit
    backstop's share instead (and the groups never see it)."""
    monkeypatch.setattr(BotCgroup, "join_self", lambda self: None)
    monkeypatch.setattr(BotCgroup, "admit", lambda self, pid: None)
    report, inside, refused = first_report(LIMITS)
    assert report["children"] > PROCESSES + 8, report
    assert inside == [] and refused == 0


@needs_v2_freezer
def test_a_bot_with_v2_groups_is_in_them_at_its_first_instruction() -> None:
    """freeze_idle's v2 freezer group is entered behind bubblewrap's gate. The
    sandbox's cgroup namespace was made before the move, so the bot sees the
    group's name on its v2 line; one that had not been moved would see `/`."""
    report, inside, refused = first_report(FREEZING)
    v2_line = next(line for line in report["cgroup"] if line.startswith("0::"))
    assert v2_line.startswith("0::/chicago-referee-"), report["cgroup"]
    assert report["children"] == PROCESSES - 1 and refused >= 1
    assert len(inside) == 3 + report["children"]


def _planned_with_a_lost_group(monkeypatch: pytest.MonkeyPatch, controller: str) -> list[sandbox_module.SandboxedBot]:
    """Make each planned sandbox lose one of its groups before it starts (its
    descriptors stay open: the move into it fails, as on a host whose cgroup
    tree changed under the referee)."""
    made: list[sandbox_module.SandboxedBot] = []

    def losing_plan(*args: object, **kwargs: object) -> sandbox_module.SandboxedBot:
        box = plan(*args, **kwargs)  # type: ignore[arg-type]
        assert box.cgroup is not None
        box.cgroup.dirs[controller].rmdir()
        made.append(box)
        return box

    monkeypatch.setattr(bot_process, "plan", losing_plan)
    return made


def _start_and_fail(spec: object) -> SandboxUnavailable:
    caught: list[SandboxUnavailable] = []

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            with trio.fail_after(BOUND_S):
                try:
                    await start_bot(nursery, spec)  # type: ignore[arg-type]
                except SandboxUnavailable as exc:
                    caught.append(exc)

    trio.run(run)
    assert len(caught) == 1
    return caught[0]


@needs_pids_group
def test_a_failed_move_into_a_v1_group_stops_the_start_before_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _planned_with_a_lost_group(monkeypatch, "pids")
    marker = f"first-{uuid.uuid4().hex}"
    error = _start_and_fail(resolve_command([str(BOT), marker], name="lost", sandbox=LIMITS))
    assert str(error).startswith("cannot put bot 'lost' into its cgroups") and "\n" not in str(error)
    assert procs_with(marker) == []
    box = made[0]
    assert box.cgroup is not None and box.cgroup.dirs == {}  # its other groups were removed
    assert box.uid is None  # and its uid given back


@needs_v2_freezer
def test_a_failed_move_behind_the_gate_stops_the_start_before_the_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _planned_with_a_lost_group(monkeypatch, "freezer")
    opened: list[int] = []
    original_open = sandbox_module.SandboxGate.open
    monkeypatch.setattr(sandbox_module.SandboxGate, "open", lambda self: opened.append(1) or original_open(self))
    marker = f"first-{uuid.uuid4().hex}"
    error = _start_and_fail(resolve_command([str(BOT), marker], name="lost", sandbox=FREEZING))
    assert str(error).startswith("cannot put bot 'lost' into its cgroups") and "\n" not in str(error)
    assert "stopped before it ran" in str(error)
    assert opened == []  # the gate never opened: the bot's program never ran
    assert procs_with(marker) == [] and made[0].uid is None


@needs_sandbox
@pytest.mark.parametrize("limits", [LIMITS, FREEZING], ids=["gate", "gate-after-v2-groups"])
def test_a_gate_left_shut_makes_bubblewrap_exit_before_the_bot_runs(limits: SandboxLimits) -> None:
    """A referee that dies before it opens the gate closes its descriptors.
    bubblewrap must then neither run the bot (outside its groups, or unknown
    to the guardian) nor wait forever for a referee that is gone: it reads an
    empty seccomp program, which the kernel refuses, and exits."""
    if limits.freeze_idle and not probe_host().cgroups.freezer_v2:
        pytest.skip("needs the cgroup v2 freezer (bubblewrap then reports its namespace child)")
    marker = f"first-{uuid.uuid4().hex}"
    box = plan(
        tuple(resolve_command([str(BOT), marker]).argv), None, "shut", limits, forbidden_paths(), uuid.uuid4().hex
    )
    assert box.gate is not None
    proc = subprocess.Popen(
        box.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **box.spawn_options()
    )
    try:
        box.spawned()
        box.gate.spawned()
        if box.gate.info_read >= 0:
            assert box.gate.namespace_child(proc.pid, BOUND_S) is not None  # it is waiting at the gate
        box.gate.close()  # as a dying referee's would be closed: nothing written
        out, _err = proc.communicate(timeout=BOUND_S)  # it exits: nobody is left to open the gate
        assert proc.returncode != 0
        assert out == b"", out  # the bot's first instructions write a report: it never ran
        assert procs_with(marker) == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=BOUND_S)
        box.sweep()


@needs_sandbox
def test_bench_sandbox_pairs_each_sandboxed_start_with_an_unsandboxed_one() -> None:
    """`bench --sandbox`'s added start-up is the median of paired differences
    (a sandboxed start minus the unsandboxed one next to it), not a
    difference of two medians taken at different moments."""
    from referee.play.bench import run_sandbox_bench

    spec = resolve_command(str(FIRST_LEGAL_BOT))
    res = trio.run(lambda: run_sandbox_bench(spec, rounds=1, games_per_round=1, starts=5))
    assert len(res.plain_start_ms) == len(res.sandboxed_start_ms) == 5
    diffs = sorted(s - p for s, p in zip(res.sandboxed_start_ms, res.plain_start_ms))
    assert res.added_start_ms == diffs[2]
    low, high = res.added_start_quartiles
    assert diffs[0] <= low <= res.added_start_ms <= high <= diffs[-1]
    assert min(res.plain_start_ms + res.sandboxed_start_ms) > 0 and res.ratio > 0
    assert all(load >= 0 for load in res.load) and res.decisions > 0


@needs_sandbox
@pytest.mark.parametrize("word", ["python", "python3"])
def test_a_bot_named_as_python_and_its_script_runs_sandboxed(word: str) -> None:
    """`python bot.py` as a bot's command: the sandbox's PATH has no `python`
    (Debian has only python3), so the bare name runs as the system Python of
    the referee's version, as a `.py` command does, and the bot is named after
    its script."""
    marker = f"word-{uuid.uuid4().hex}"
    spec = resolve_command([word, str(BOT), marker], sandbox=LIMITS)
    assert spec.name == "first_instruction"

    async def run() -> dict:
        async with trio.open_nursery() as nursery:
            with trio.fail_after(BOUND_S):
                bot = await start_bot(nursery, spec)
                try:
                    return json.loads(await bot.receive_line())
                finally:
                    await bot.close()

    report = trio.run(run)
    assert report["children"] >= 1, report  # it ran: its report came back
