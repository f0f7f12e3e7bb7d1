"""`tournament --workers N`: the local pool of worker processes (no Dask).

Real worker processes and real bots throughout: the same standings as one
process, a SIGKILLed worker whose games are played again (nothing lost or
doubled), a bot that kills every worker it meets (given up after three), a
worker that cannot sandbox (refuses), workers that write garbage or never
start (a clear error, no hang), and Ctrl-C, abort and a cancelled game
leaving no process behind. The bots are deterministic (`det_bot.py`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio
from needs import needs_sandbox
from paths import ROOT, TEST_BOTS
from proctools import alive, proc_state, procs_with, wait_no_procs
from timing import scaled, wait_until
from tournament_runs import check_games, header_worker, play, standings, write_config
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ClusterError
from referee.seats.sandbox import probe_host
from referee.seats.sandbox.files import remove_stale_stages
from referee.tournament import pool as pool_module
from referee.tournament.config import load_config
from referee.tournament.executors import Placement
from referee.tournament.game_job import STARTS_AT_ONCE
from referee.tournament.pool import LocalPool, open_pool
from referee.tournament.run import TournamentRunner, prepare_store
from referee.tournament.schedule import schedule_for
from referee.tournament.store import Store

FAKE_WORKER = Path(__file__).with_name("fake_pool_worker.py")
cli = CliRunner()


def cluster_errors(exc: BaseException) -> list[str]:
    """The ClusterError messages in what a run raised (nurseries group them)."""
    if isinstance(exc, ClusterError):
        return [str(exc)]
    if isinstance(exc, BaseExceptionGroup):
        return [m for inner in exc.exceptions for m in cluster_errors(inner)]
    return []


def pool_workers_left(marker: str) -> list[int]:
    """Live pool worker processes started with `marker` in their environment.

    A worker starting a bot forks first: until the child execs, it shows the
    worker's command line. Such a child (its parent a worker found here) is
    not a worker; a process whose worker parent is gone is still counted."""
    found = []
    for pid in procs_with("referee.tournament.pool_worker"):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if marker.encode() in environ and alive(pid):
            found.append(pid)
    parents = {pid: (proc_state(pid) or ("X", 0))[1] for pid in found}
    return [pid for pid in found if parents[pid] not in parents]


def test_workers_give_the_standings_of_one_process(tmp_path: Path) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    config = write_config(tmp_path, marker, ["a", "b", "c"], deal_sets=2)
    results = {}
    for label, extra in (("here", []), ("pool", ["--workers", "2"])):
        db = tmp_path / f"{label}.db"
        res = cli.invoke(app, ["tournament", str(config), "--db", str(db), "-j", "4", *extra])
        assert res.exit_code == 0, res.output
        shown = cli.invoke(app, ["standings", str(db), "--json"])
        assert shown.exit_code == 0, shown.output
        results[label] = json.loads(shown.stdout)
        results[label].pop("seed")  # a fresh salt each run
    assert results["pool"] == results["here"]
    scheduled = len(schedule_for(load_config(config)))
    check_games(tmp_path / "pool.db", scheduled)
    assert header_worker(tmp_path / "pool.db") == {"local-1", "local-2"}  # games went to both
    first = sorted((tmp_path / "pool-logs").glob("*.jsonl"))[0]
    worker = json.loads(first.read_text().splitlines()[0])["worker"]
    assert set(worker) == {"name", "cpus", "load_1m", "load_5m"} and worker["cpus"] == os.cpu_count()
    assert header_worker(tmp_path / "here.db") == {"local"}
    assert wait_no_procs(marker) == []


async def test_a_pool_worker_killed_mid_run_loses_and_doubles_nothing(tmp_path: Path) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    t = load_config(write_config(tmp_path, marker, ["a", "b", "c", "d"], deal_sets=2, think=0.01))
    scheduled = len(schedule_for(t))
    killed: list[tuple[str, int, int]] = []  # (worker, its games in flight, games finished then)
    shown: set[str] = set()  # the workers the progress line named

    def on_game(store: Store, runner: TournamentRunner) -> Any:
        def seen(row: Any) -> None:
            shown.update(runner.in_flight())
            if killed:
                return
            pool = runner.executor
            assert isinstance(pool, LocalPool)  # --workers is the pool, never Dask
            busy = [w for w in pool.workers if w.alive and len(w.pending) >= 2]
            if busy:
                os.kill(busy[0].process.pid, signal.SIGKILL)
                killed.append((busy[0].name, len(busy[0].pending), store.finished_count()))

        return seen

    outcome, runner = await play(t, tmp_path / "pool.db", Placement(workers=2), 6, on_game)
    assert killed and killed[0][2] < scheduled, "no worker was killed mid-run"
    assert outcome.status == "completed" and outcome.recorded == scheduled
    check_games(tmp_path / "pool.db", scheduled)
    names = header_worker(tmp_path / "pool.db")
    assert "local-3" in names  # the replacement played games too
    assert {"local-1", "local-2"} <= shown <= {"local-1", "local-2", "local-3"}
    _here, _ = await play(t, tmp_path / "here.db", Placement(), 6)
    assert standings(tmp_path / "pool.db") == standings(tmp_path / "here.db")
    assert wait_no_procs(marker, within=10.0) == [], "bots of the killed worker outlived it"
    assert all(w.gone.is_set() for w in runner.executor.workers)


async def _given_up(t: object, db: Path, workers: int) -> str:
    """The run's error when its game is given up after taking down 3 workers."""
    with pytest.raises(BaseException) as caught:
        await play(t, db, Placement(workers=workers), 1)
    messages = cluster_errors(caught.value)
    assert messages, caught.value
    assert "was running on 3 worker processes that died; it was given up" in messages[0]
    return messages[0]


async def test_a_game_that_kills_three_workers_is_given_up(tmp_path: Path) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    config = tmp_path / "killer.toml"
    config.write_text(
        "\n".join(
            [
                'name = "killer"',
                "seed = 5",
                "deal_sets = 1",
                "table_size = 2",
                "sandbox = false",
                'time_control = "decision=5s,startup=20s"',
                "[rules]",
                "options = { target_score = 20 }",
                "[[bots]]",
                'name = "killer"',
                f'command = "{TEST_BOTS / "worker_killer.py"} {marker}"',
                "[[bots]]",
                'name = "det"',
                f'command = "{TEST_BOTS / "det_bot.py"} {marker} salt=d"',
            ]
        )
        + "\n"
    )
    t = load_config(config)
    message = await _given_up(t, tmp_path / "k.db", 2)
    assert message.count("killed by signal 9") == 3
    store = Store.open(tmp_path / "k.db")
    try:
        assert store.games() == []  # nothing of the lost attempts was recorded
    finally:
        store.close()
    assert wait_no_procs(marker, within=10.0) == []


@needs_sandbox
def test_a_worker_that_cannot_sandbox_refuses_a_sandboxed_tournament(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    config = write_config(tmp_path, marker, ["a", "b"], deal_sets=1)
    config.write_text(config.read_text().replace("sandbox = false", "sandbox = true"))
    monkeypatch.setattr(pool_module, "WORKER_COMMAND", (sys.executable, str(FAKE_WORKER), "unsandboxable"))
    res = cli.invoke(app, ["tournament", str(config), "--db", str(tmp_path / "s.db"), "--workers", "1"])
    assert res.exit_code == 2, res.output
    assert "worker local-1 cannot isolate bots, and the tournament is sandboxed" in res.output
    assert "bubblewrap" in res.output and "Traceback" not in res.output
    assert res.output.count("cannot isolate bots") == 1  # said once, not once per game
    assert wait_no_procs(marker) == []  # refused before any bot started
    store = Store.open(tmp_path / "s.db")
    try:
        assert store.games() == []
    finally:
        store.close()


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("garbage", r"worker local-1 wrote a frame that is not a valid message"),
        (
            "exit",
            r"worker local-1 did not start: worker local-1 died \(exit code 3\); its last words: this worker "
            r"cannot start: a broken installation",
        ),
        ("silent", r"worker local-1 did not start: did not say it was ready within 2 s"),
    ],
)
async def test_a_broken_worker_is_a_clear_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, expected: str
) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    t = load_config(write_config(tmp_path, marker, ["a", "b"], deal_sets=1))
    monkeypatch.setattr(pool_module, "WORKER_COMMAND", (sys.executable, str(FAKE_WORKER), mode))
    monkeypatch.setattr(pool_module, "START_LIMIT", 2.0)
    with trio.fail_after(scaled(60)):
        with pytest.raises(BaseException) as caught:
            await play(t, tmp_path / "b.db", Placement(workers=1), 2)
    messages = cluster_errors(caught.value)
    assert messages, caught.value
    assert any(re.search(expected, m) for m in messages), messages
    assert wait_no_procs(str(FAKE_WORKER)) == []  # the broken worker was not left running


async def test_a_hung_worker_counts_as_lost_not_as_a_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    t = load_config(write_config(tmp_path, marker, ["a", "b"], deal_sets=1))
    monkeypatch.setattr(pool_module, "WORKER_COMMAND", (sys.executable, str(FAKE_WORKER), "stall"))
    monkeypatch.setattr(pool_module, "SILENCE_LIMIT", 2.0)
    with trio.fail_after(scaled(90)):
        message = await _given_up(t, tmp_path / "h.db", 1)
    assert message.count("sent nothing for 2 s (hung?) and was killed") == 3
    assert wait_no_procs(str(FAKE_WORKER)) == []


def _sandbox_leftovers(referee: int, since: int) -> list[str]:
    """What of the sandboxes of process `referee` is still there: bubblewrap
    processes started after `since` (clock ticks after boot) whose parent is
    init, its cgroups (every controller) and its staging folder."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            comm = (entry / "comm").read_text().strip() if entry.name.isdigit() else ""
            started = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[19]) if comm == "bwrap" else 0
        except (OSError, IndexError, ValueError):
            continue
        if comm == "bwrap" and started >= since and (proc_state(int(entry.name)) or ("X", 0))[1] == 1:
            found.append(f"bwrap {entry.name}, an orphan")
    found += [str(p) for p in _cgroups_of(referee)]
    found += [str(p) for p in Path(tempfile.gettempdir()).glob(f"chicago-referee-files-{referee}-*")]
    return found


def _cgroups_of(referee: int) -> list[Path]:
    """The cgroups process `referee` made (in the folders this process would use: the worker's own)."""
    return [
        p for parent in set(probe_host().cgroups.parents.values()) for p in parent.glob(f"chicago-referee-{referee}-*")
    ]


@pytest.mark.skipif(
    bool(probe_host().problems()) or not probe_host().cgroups.usable,
    reason="needs a sandbox with cgroups (the test watches the worker's cgroups appear)",
)
def test_a_worker_killed_with_its_process_group_leaves_no_sandbox_behind(tmp_path: Path) -> None:
    """`kill -9 -- -PGID` of a worker while it starts sandboxed bots: its
    guardian (a session of its own) kills what was registered, even what it
    hears of after the worker died, empties and removes the worker's cgroups
    and staging folder; a bubblewrap still at its gate exits by itself. The
    coordinator is stopped first, so no later referee tidies up instead."""
    marker = f"poolmark-{uuid.uuid4().hex}"
    config = write_config(tmp_path, marker, ["a", "b", "c", "d"], deal_sets=3, think=0.05)
    config.write_text(config.read_text().replace("sandbox = false", "sandbox = true"))  # freeze_idle: v2 groups too
    cmd = [
        sys.executable,
        "-m",
        "referee.cli",
        "tournament",
        str(config),
        "--db",
        str(tmp_path / "s.db"),
        "--workers",
        "1",
        "-j",
        "3",
    ]
    env = {**os.environ, "CHICAGO_TEST_MARK": marker}
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
        cwd=ROOT,
    )
    since = int(Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    worker = 0
    try:
        deadline = time.monotonic() + scaled(120)
        while time.monotonic() < deadline and proc.poll() is None:
            workers = pool_workers_left(marker)
            worker = workers[0] if workers else 0
            if worker and _cgroups_of(worker):
                break  # it is starting a sandboxed bot
            time.sleep(0.002)
        assert worker and _sandbox_leftovers(worker, since), "the worker never started a sandboxed bot"
        os.kill(proc.pid, signal.SIGSTOP)  # the coordinator: no replacement worker, no later referee
        os.killpg(worker, signal.SIGKILL)  # the worker's whole process group
        deadline = time.monotonic() + scaled(30)
        while (_sandbox_leftovers(worker, since) or procs_with(marker)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _sandbox_leftovers(worker, since) == []
        assert procs_with(marker) == []
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        remove_stale_stages()  # the coordinator's own (it probed the machine; it started no sandbox)


def test_a_killed_coordinator_leaves_no_worker_and_no_bot(tmp_path: Path) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    config = write_config(tmp_path, marker, ["a", "b", "c"], deal_sets=3, think=0.3)
    cmd = [
        sys.executable,
        "-m",
        "referee.cli",
        "tournament",
        str(config),
        "--db",
        str(tmp_path / "k.db"),
        "--workers",
        "2",
        "-j",
        "4",
    ]
    env = {**os.environ, "CHICAGO_TEST_MARK": marker}
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + scaled(60)
        while len(procs_with(marker)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(pool_workers_left(marker)) == 2, "the pool did not start"
        os.kill(proc.pid, signal.SIGKILL)  # the coordinator alone: its workers see their stdin close
        proc.wait(timeout=scaled(30))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert wait_no_procs(marker, within=15.0) == []
    deadline = time.monotonic() + scaled(15)
    while pool_workers_left(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool_workers_left(marker) == []
    assert not list((tmp_path / "k-logs").glob("*.part"))  # the workers removed the logs of the games they stopped


async def test_a_game_cancelled_at_the_coordinator_stops_on_its_worker(tmp_path: Path) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    t = load_config(write_config(tmp_path, marker, ["a", "b"], deal_sets=1, think=2.0))
    store = Store.open(tmp_path / "c.db", create=True, lock=True)
    try:
        schedule = schedule_for(t)
        prepare_store(t, store, schedule)
        runner = TournamentRunner(t, store, schedule, log_dir=None, concurrency=1, placement=Placement(workers=1))
        job = runner.job_for(schedule[0])
    finally:
        store.close()
    async with open_pool(1) as pool:
        with trio.move_on_after(scaled(30)):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pool.play, job, None)
                while len(procs_with(marker)) < 2:  # both bots are playing on the worker
                    await trio.sleep(0.05)
                nursery.cancel_scope.cancel()
        deadline = trio.current_time() + scaled(10)
        while procs_with(marker) and trio.current_time() < deadline:
            await trio.sleep(0.05)
        assert procs_with(marker) == []  # the worker stopped the game, while it still runs
        assert all(w.alive for w in pool.workers) and pool.in_flight["local-1"] == 0
    assert all(w.gone.is_set() and w.bye is not None for w in pool.workers)  # closed, and said goodbye


async def test_abort_leaves_no_worker_and_no_bot(tmp_path: Path) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    t = load_config(write_config(tmp_path, marker, ["a", "b", "c"], deal_sets=2, think=0.5))
    store = Store.open(tmp_path / "a.db", create=True, lock=True)
    try:
        schedule = schedule_for(t)
        prepare_store(t, store, schedule)
        runner = TournamentRunner(
            t, store, schedule, log_dir=tmp_path / "a-logs", concurrency=4, placement=Placement(workers=2)
        )
        async with trio.open_nursery() as nursery:

            async def abort_when_playing() -> None:
                while len(procs_with(marker)) < 4:
                    await trio.sleep(0.05)
                runner.abort()

            nursery.start_soon(abort_when_playing)
            with trio.fail_after(scaled(120)):
                outcome = await runner.run()
        assert outcome.status == "aborted"
        assert store.games() == [] and not list((tmp_path / "a-logs").glob("*.part"))
    finally:
        store.close()
    assert wait_no_procs(marker, within=10.0) == []
    assert all(not alive(w.process.pid) for w in runner.executor.workers)


def test_ctrl_c_twice_stops_the_cli_and_leaves_no_process(tmp_path: Path) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    config = write_config(tmp_path, marker, ["a", "b", "c"], deal_sets=3, think=0.3)
    cmd = [
        sys.executable,
        "-m",
        "referee.cli",
        "tournament",
        str(config),
        "--db",
        str(tmp_path / "i.db"),
        "--workers",
        "2",
        "-j",
        "4",
    ]
    env = {**os.environ, "CHICAGO_TEST_MARK": marker}  # the pool workers inherit it: found by environ below
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
        cwd=ROOT,
        text=True,
    )
    said: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: said.extend(proc.stderr or ()), daemon=True)
    reader.start()
    try:
        wait_until(lambda: len(procs_with(marker)) >= 4, 60)  # 4 games' bots are playing
        assert len(pool_workers_left(marker)) == 2, "the pool did not start"
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the foreground process group
        # Trio merges a signal that comes again before the first was read: the
        # second Ctrl-C goes once the first has been heard.
        assert wait_until(lambda: any("stopping:" in line for line in said), 60), "".join(said)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=scaled(60))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(timeout=scaled(10))
    text = "".join(said)
    assert "aborting" in text and "Traceback" not in text, text
    assert wait_no_procs(marker, within=10.0) == []
    assert pool_workers_left(marker) == []


def test_workers_need_no_dask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"poolmark-{uuid.uuid4().hex}"
    config = write_config(tmp_path, marker, ["a", "b"], deal_sets=1)
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails in this process
    monkeypatch.setitem(sys.modules, "dask", None)
    res = cli.invoke(app, ["tournament", str(config), "--db", str(tmp_path / "n.db"), "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert "on 2 worker processes" in res.output and "completed: 2 games" in res.output
    check_games(tmp_path / "n.db", 2)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x7f\xff\xff\xff" + b"x" * 10, r"wrote a frame of 2147483647 bytes \(at most 67108864\); it began b'\\x7f"),
        (b"\x00\x00\x00\x10abc", r"stopped after 3 of a frame's 16 bytes"),
        (b"\x00\x00", r"stopped in the middle of a frame header"),
        (b"\x00\x00\x00\x01\x01", r"wrote a frame that is not a valid message"),  # msgpack 1: not a tagged message
    ],
)
async def test_the_frame_reader_names_what_came_instead_of_a_frame(data: bytes, expected: str) -> None:
    from trio.testing import memory_stream_one_way_pair

    from referee.tournament.pool_wire import FrameError, FrameReader, FromWorker, Ready, frame

    send, receive = memory_stream_one_way_pair()
    await send.send_all(frame(Ready(pid=7)) + data)
    await send.aclose()
    reader = FrameReader(receive, FromWorker, "worker w")
    assert await reader.receive() == Ready(pid=7)  # a whole frame before the damage is read as such
    with pytest.raises(FrameError, match=r"^worker w " + expected):
        await reader.receive()


async def test_the_workers_share_the_machines_bot_start_ups() -> None:
    """N workers each starting STARTS_AT_ONCE bots at once would start N times
    as many as one process: each worker is told its share, and the shares add
    up to no more than one process starts (at least one each)."""
    async with open_pool(2) as pool:
        shares = []
        for worker in pool.workers:
            argv = Path(f"/proc/{worker.process.pid}/cmdline").read_bytes().split(b"\0")
            shares.append(int(argv[-2]))
    assert shares == [max(1, STARTS_AT_ONCE // 2)] * 2
    assert sum(shares) <= max(2, STARTS_AT_ONCE)
