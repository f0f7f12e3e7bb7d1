"""The guardian obeys only the referee that started it, and kills only what
that referee registered: real processes, a real hostile bot, a real SIGKILL."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from needs import needs_proc
from paths import ROOT, TEST_BOTS
from proctools import alive, proc_state, procs_with
from timing import scaled, wait_until

from referee.seats.guardian import Guardian

pytestmark = needs_proc

SLEEPER = "import time\nwhile True: time.sleep(60)"


def guardian_of(referee: int) -> int | None:
    """The guardian a referee process started: its child, whose last argument is the referee's pid."""
    for pid in procs_with(str(referee)):
        state = proc_state(pid)
        try:
            last = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").rsplit(b"\0", 1)[-1]
        except OSError:
            continue
        if state is not None and state[1] == referee and last == str(referee).encode() and pid != referee:
            return pid
    return None


def unrelated_group(marker: str) -> subprocess.Popen[bytes]:
    """A process group of the test's own: its leader is no child of any referee."""
    return subprocess.Popen(
        [sys.executable, "-c", SLEEPER, marker, "unrelated"],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(scaled(5))


def test_only_groups_of_its_own_referee_are_killed() -> None:
    # This test process is the referee: its own child is killed at end of
    # input, a group led by a grandchild (not our child) is not, nor is a
    # released one.
    marker = f"guardtest-{uuid.uuid4().hex}"
    helper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-c', {SLEEPER!r}, {marker!r}], start_new_session=True)\n"
            "print(p.pid, flush=True)\ntime.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    ours = subprocess.Popen([sys.executable, "-c", SLEEPER], process_group=0, stdin=subprocess.DEVNULL)
    released = subprocess.Popen([sys.executable, "-c", SLEEPER], process_group=0, stdin=subprocess.DEVNULL)
    guardian = Guardian()
    try:
        assert helper.stdout is not None
        grandchild = int(helper.stdout.readline())
        guardian.watch(grandchild)
        guardian.watch(ours.pid)
        guardian.watch(released.pid)
        guardian.release(released.pid)
        watcher = guardian.pid
        assert watcher is not None
        guardian.close()  # end of input, as when the referee dies
        assert wait_until(lambda: ours.poll() is not None, 10), "the registered group must be killed"
        assert ours.returncode == -signal.SIGKILL
        assert wait_until(lambda: not alive(watcher), 10)  # the guardian is done: it killed all it will
        assert alive(grandchild), "a group whose leader is not the referee's child must survive"
        assert released.poll() is None, "a released group must survive"
    finally:
        for pid in procs_with(marker):
            os.kill(pid, signal.SIGKILL)
        for p in (helper, ours, released):
            stop(p)
        guardian.close()


def test_a_new_guardian_learns_the_groups_of_one_that_was_killed() -> None:
    first = subprocess.Popen([sys.executable, "-c", SLEEPER], process_group=0, stdin=subprocess.DEVNULL)
    second = subprocess.Popen([sys.executable, "-c", SLEEPER], process_group=0, stdin=subprocess.DEVNULL)
    guardian = Guardian()
    try:
        guardian.watch(first.pid)
        old = guardian.pid
        assert old is not None
        os.kill(old, signal.SIGKILL)  # what a bot of the same user could do without a sandbox
        assert wait_until(lambda: not alive(old), 10)
        guardian.watch(second.pid)  # starts a new guardian, which hears of the first group too
        assert guardian.pid not in (None, old)
        guardian.close()
        assert wait_until(lambda: first.poll() is not None and second.poll() is not None, 10)
    finally:
        for p in (first, second):
            stop(p)
        guardian.close()


def test_the_guardian_stdin_cannot_be_opened_through_proc() -> None:
    guardian = Guardian()
    try:
        guardian.start()
        assert guardian.pid is not None
        with pytest.raises(OSError), open(f"/proc/{guardian.pid}/fd/0", "wb") as fh:
            fh.write(b"+1\n")
    finally:
        guardian.close()


def test_a_bot_cannot_make_the_guardian_kill_an_unrelated_group(tmp_path: Path) -> None:
    marker = f"guardtest-{uuid.uuid4().hex}"
    victim = unrelated_group(marker)
    report = tmp_path / "report.txt"
    steerer = f"{TEST_BOTS / 'guardian_steerer.py'} {marker} target={victim.pid} report={report}"
    honest = f"{TEST_BOTS / 'immortal.py'} {marker}"
    err = tmp_path.joinpath("err").open("wb")
    referee = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "match",
            steerer,
            honest,
            "--games",
            "500",
            "--rule",
            "target_score=52",
            "-t",
            "decision=2s,startup=10s",
            "--seed",
            "1",
        ],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=err,
    )
    try:
        assert wait_until(lambda: "done" in (report.read_text() if report.exists() else ""), 20), tmp_path.joinpath(
            "err"
        ).read_text()
        attempts = report.read_text()
        assert "guardian: None" not in attempts, attempts
        # A socket cannot be reopened through /proc (ENXIO); for an unprivileged
        # bot the non-dumpable guardian's fd folder is closed anyway (EACCES).
        assert "guardian stdin via /proc: ENXIO" in attempts or "guardian stdin via /proc: EACCES" in attempts, attempts
        assert "via /proc: ok" not in attempts, attempts

        def bots_now() -> list[int]:
            return [p for p in procs_with(marker) if p not in (referee.pid, victim.pid)]

        assert wait_until(lambda: len(bots_now()) == 2, 20), attempts  # both bots are running
        bots = bots_now()
        watcher = guardian_of(referee.pid)
        assert watcher is not None
        time.sleep(0.3)  # mid-match; the guardian has read whatever got through
        referee.send_signal(signal.SIGKILL)
        referee.wait(scaled(5))
        assert wait_until(lambda: not [p for p in bots if alive(p)], 10), "the bots must die with the referee"
        assert wait_until(lambda: not alive(watcher), 10)  # the guardian is done: it killed all it will
        assert victim.poll() is None, f"the unrelated group was killed; the bot tried:\n{attempts}"
    finally:
        stop(referee)
        stop(victim)
        for pid in procs_with(marker):
            os.kill(pid, signal.SIGKILL)
        err.close()


DIES_WHILE_STARTING = """
import os, signal, sys, trio
from referee.seats import bot_process
from referee.seats.bot_command import resolve_command
from referee.seats.guardian import GUARDIAN
bot, when = sys.argv[1], sys.argv[2]
watch = GUARDIAN.watch

def die(pid, tag=""):  # the worst moments: the bot exists, the guardian has not heard of it, or has
    if when == "registered":
        watch(pid, tag)
    os.kill(os.getpid(), signal.SIGKILL)

GUARDIAN.watch = die

async def main():
    async with trio.open_nursery() as nursery:
        await bot_process.start_bot(nursery, resolve_command(bot))

trio.run(main)
"""


@pytest.mark.parametrize("when", ["unregistered", "registered"])
def test_a_referee_killed_as_it_starts_a_bot_leaves_no_bot_behind(tmp_path: Path, when: str) -> None:
    """A bot's pid is known only after it started, so a referee may die before
    it tells the guardian: the bot's program must not have run by then."""
    marker = f"guardtest-{uuid.uuid4().hex}"
    ran = tmp_path / "ran.txt"  # the bot writes its pid here as soon as it runs
    command = f"{TEST_BOTS / 'immortal.py'} {marker} pidfile={ran}"
    referee = subprocess.Popen(
        [sys.executable, "-c", DIES_WHILE_STARTING, command, when], cwd=ROOT, stdin=subprocess.DEVNULL
    )
    try:
        assert referee.wait(scaled(20)) == -signal.SIGKILL
        assert wait_until(lambda: not procs_with(marker), 10), f"left running: {procs_with(marker)}"
        assert not ran.exists(), f"the bot ran (pid {ran.read_text().strip()}) though its referee died before it let it"
    finally:
        stop(referee)
        for pid in procs_with(marker):
            os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------ what sandboxes leave


REFEREE = """
import os, subprocess, sys, time
from pathlib import Path
from referee.seats.guardian import Guardian
parent, base, marker, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
group = parent / f"chicago-referee-{os.getpid()}-test"
group.mkdir()
inside = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker], start_new_session=True,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
(group / "cgroup.procs").write_text(str(inside.pid))
folder = base / f"chicago-referee-files-{os.getpid()}-test"
folder.mkdir()
(folder / "copy.txt").write_text("a bot's copy")
guardian = Guardian()
guardian.clean_after([str(parent)], [str(folder)])
if mode == "done":
    guardian.close()
print(group, folder, inside.pid, flush=True)
time.sleep(600)
"""


def cgroup_parent() -> Path:
    from referee.seats.sandbox import probe_host

    parents = probe_host().cgroups.parents
    if "pids" not in parents:
        pytest.skip("needs a pids cgroup the referee may make groups in (root)")
    return parents["pids"]


@pytest.mark.parametrize("mode", ["dead", "done"])
def test_a_dead_referees_cgroups_and_folders_go_with_it_a_done_ones_stay(tmp_path: Path, mode: str) -> None:
    """A referee killed with SIGKILL: its guardian kills what is left in its
    cgroups, removes them and its staging folder. A referee that closed its
    guardian and lives on keeps them: they are its own to remove."""
    parent = cgroup_parent()
    marker = f"guardtest-{uuid.uuid4().hex}"
    referee = subprocess.Popen(
        [sys.executable, "-c", REFEREE, str(parent), str(tmp_path), marker, mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    group = folder = None
    inside = 0
    try:
        assert referee.stdout is not None
        assert select.select([referee.stdout], [], [], 60)[0], "the referee never said what it made"
        group_text, folder_text, inside_text = referee.stdout.readline().split()
        group, folder, inside = Path(group_text), Path(folder_text), int(inside_text)
        assert group.is_dir() and folder.is_dir() and alive(inside)
        if mode == "dead":
            referee.send_signal(signal.SIGKILL)
            referee.wait(scaled(5))
            assert wait_until(lambda: not group.exists() and not folder.exists() and not alive(inside), 20)
        else:
            assert group.is_dir() and folder.is_dir() and alive(inside)
    finally:
        stop(referee)
        for pid in procs_with(marker):
            os.kill(pid, signal.SIGKILL)
        if group is not None:
            assert wait_until(lambda: not alive(inside), 10)
            assert wait_until(lambda: not group.exists() or _removed(group), 10)


def _removed(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except OSError:
        return False


def test_a_later_referee_empties_and_removes_a_dead_referees_cgroups() -> None:
    """The guardian died with its referee: the next referee's `remove_stale`
    kills what is still inside the dead referee's groups and removes them."""
    from referee.seats.cgroups import remove_stale
    from referee.seats.sandbox import probe_host

    parent = cgroup_parent()
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no longer runs: the dead referee's
    group = parent / f"chicago-referee-{gone.pid}-left"
    group.mkdir()
    left = subprocess.Popen([sys.executable, "-c", SLEEPER], start_new_session=True, stdin=subprocess.DEVNULL)
    try:
        (group / "cgroup.procs").write_text(str(left.pid))
        assert remove_stale(probe_host().cgroups) >= 1
        assert not group.exists()
        assert left.wait(scaled(10)) == -signal.SIGKILL
    finally:
        stop(left)
        if group.exists():
            assert wait_until(lambda: _removed(group), 10)
