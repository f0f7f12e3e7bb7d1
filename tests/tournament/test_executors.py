"""Tournaments played on a Dask `--cluster` (a real `dask scheduler` with two
real `dask worker` processes on 127.0.0.1, one of them SIGKILLed mid-run);
the local pool behind `--workers N` has its own tests (`test_pool.py`).

Each checks what a host relies on: every scheduled game recorded once,
standings equal to a one-machine run, logs that verify, no bot left behind,
games sent a few per Dask task and each of them answered on its own.
The bots are deterministic (`tests/bots/det_bot.py`), so a game's result
depends only on its spec, wherever it is played.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import uuid
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trio
from proctools import wait_no_procs
from timing import scaled
from tournament_runs import check_games, coordinator_jobs, det_bot_folder, header_worker, play, standings, write_config
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ClusterError, ConfigError
from referee.tournament.config import load_config
from referee.tournament.executors import (
    MAX_BATCH,
    DaskExecutor,
    Placement,
    batch_size,
    import_distributed,
    open_executor,
)
from referee.tournament.game_job import PlayedGame
from referee.tournament.run import TournamentRunner
from referee.tournament.schedule import schedule_for
from referee.tournament.store import Store
from referee.tournament.worker import run_jobs

pytest.importorskip("distributed")  # the `cluster` extra, part of the test extras

cli = CliRunner()


@pytest.mark.slow
async def test_a_cluster_that_loses_a_worker_mid_run_loses_and_doubles_nothing(
    tmp_path: Path, dask_cluster: Any
) -> None:
    address, workers = dask_cluster
    marker = f"execmark-{uuid.uuid4().hex}"
    t = load_config(write_config(tmp_path, marker, ["a", "b", "c", "d"], deal_sets=2, think=0.01))
    scheduled = len(schedule_for(t))
    killed_after: list[int] = []

    def on_game(store: Store, runner: TournamentRunner) -> Any:
        def seen(row: Any) -> None:
            # SIGKILL wA as soon as it is seen playing: its games in flight must run again on wB
            if not killed_after and runner.in_flight().get("wA", 0) > 0:
                os.kill(workers["wA"].pid, signal.SIGKILL)
                killed_after.append(store.finished_count())

        return seen

    # Concurrency 12 on 2 workers: batches of 3 games, so wA dies with whole batches in flight.
    outcome, runner = await play(t, tmp_path / "cluster.db", Placement(cluster=address), 12, on_game)
    assert killed_after and killed_after[0] < scheduled, "the worker was not killed mid-run"
    assert getattr(runner.executor, "tasks_sent", scheduled) < scheduled, "every game was a task of its own"
    assert workers["wA"].wait(timeout=scaled(30)) == -signal.SIGKILL
    assert outcome.status == "completed" and outcome.recorded == scheduled
    check_games(tmp_path / "cluster.db", scheduled)
    assert "wB" in header_worker(tmp_path / "cluster.db")
    _here, _ = await play(t, tmp_path / "here.db", Placement(), 6)
    assert standings(tmp_path / "cluster.db") == standings(tmp_path / "here.db")
    assert wait_no_procs(marker, within=10.0) == [], "bots of the killed worker outlived it"


@pytest.mark.slow
async def test_a_cluster_plays_games_in_batches_with_the_standings_of_one_machine(
    tmp_path: Path, dask_cluster: Any
) -> None:
    address, _workers = dask_cluster
    marker = f"execmark-{uuid.uuid4().hex}"
    t = load_config(write_config(tmp_path, marker, ["a", "b", "c", "d"], deal_sets=1))
    scheduled = len(schedule_for(t))
    outcome, runner = await play(t, tmp_path / "cluster.db", Placement(cluster=address), 8)
    assert outcome.status == "completed" and outcome.recorded == scheduled
    check_games(tmp_path / "cluster.db", scheduled)
    tasks = getattr(runner.executor, "tasks_sent", 0)
    assert 0 < tasks <= scheduled // 2, f"{tasks} Dask tasks for {scheduled} games: not batched"
    assert header_worker(tmp_path / "cluster.db") == {"wA", "wB"}, "a worker got no batch"
    _here, _ = await play(t, tmp_path / "here.db", Placement(), 8)
    assert standings(tmp_path / "cluster.db") == standings(tmp_path / "here.db")
    assert wait_no_procs(marker, within=10.0) == []


@pytest.mark.slow
async def test_a_game_refused_in_a_batch_fails_alone_with_its_message(tmp_path: Path, dask_cluster: Any) -> None:
    address, _workers = dask_cluster
    marker = f"execmark-{uuid.uuid4().hex}"
    det_bot_folder(tmp_path)
    jobs = coordinator_jobs(tmp_path, marker)[:4]
    (bot, _digest, folder), other = jobs[1].bot_digests[0], jobs[1].bot_digests[1:]
    jobs[1] = replace(jobs[1], bot_digests=((bot, "0" * 64, folder), *other))  # the coordinator's copy differs
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    results: dict[int, PlayedGame | BaseException] = {}
    with trio.fail_after(scaled(120)):
        # Concurrency 16 on 2 workers: batches of 4, so the four games go in one task.
        async with open_executor(Placement(cluster=address), 16, "refusal") as executor:

            async def one(i: int) -> None:
                try:
                    results[i] = await executor.play(jobs[i], logs / f"{jobs[i].log_name}.part")
                except ClusterError as exc:
                    results[i] = exc

            async with trio.open_nursery() as games:
                for i in range(len(jobs)):
                    games.start_soon(one, i)
            assert getattr(executor, "tasks_sent", 0) == 1
    refused = results.pop(1)
    assert isinstance(refused, ClusterError), refused
    assert f"bot '{bot}' at" in str(refused) and "bot differs from the coordinator's copy" in str(refused)
    assert sorted(results) == [0, 2, 3]
    for i, played in results.items():
        assert isinstance(played, PlayedGame) and played.record.game_id == jobs[i].game.game_id, played
        assert (logs / f"{jobs[i].log_name}.part").stat().st_size > 0
    assert not (logs / f"{jobs[1].log_name}.part").exists()
    assert wait_no_procs(marker, within=10.0) == []


@pytest.mark.slow
async def test_a_batch_whose_games_are_all_cancelled_is_dropped_before_it_starts(
    tmp_path: Path, dask_cluster: Any
) -> None:
    address, _workers = dask_cluster
    distributed = import_distributed()
    marker = f"execmark-{uuid.uuid4().hex}"
    det_bot_folder(tmp_path)
    jobs = coordinator_jobs(tmp_path, marker)[:2]
    event = f"hold-{uuid.uuid4().hex}"
    batch_key = "chicago-referee-cancel-batch1"

    # Defined here, so that Dask ships them by value (the scheduler and workers cannot import this module).
    def hold() -> None:  # keeps one of its worker's threads until the event is set
        import distributed

        distributed.Event(event).wait()

    def on_scheduler(dask_scheduler: Any) -> str | None:  # the batch's state there (None: forgotten)
        task = dask_scheduler.tasks.get(batch_key)
        return task.state if task is not None else None

    def on_worker(dask_worker: Any) -> list[str]:  # every state the batch's task had on that worker
        return [str(t[2]) for t in dask_worker.state.story(batch_key) if len(t) > 2]

    with trio.fail_after(scaled(60)):
        # Concurrency 8 on 2 workers of 2 threads: batches of 2, so both games go in one task.
        async with open_executor(Placement(cluster=address), 8, "cancel") as executor:
            client = executor.client
            holders = [client.submit(hold, pure=False) for _ in range(8)]
            while True:  # every thread of the cluster busy: the batch will wait on its worker
                held = await trio.to_thread.run_sync(client.processing)
                if len(held) == 2 and all(len(keys) >= 2 for keys in held.values()):
                    break
                await trio.sleep(0.05)
            with trio.CancelScope() as playing:
                async with trio.open_nursery() as games:
                    for job in jobs:
                        games.start_soon(executor.play, job, None)
                    while await trio.to_thread.run_sync(client.run_on_scheduler, on_scheduler) != "processing":
                        await trio.sleep(0.05)
                    playing.cancel()
            while await trio.to_thread.run_sync(client.run_on_scheduler, on_scheduler) is not None:
                await trio.sleep(0.05)  # released: the scheduler forgets the task
            await trio.to_thread.run_sync(lambda: distributed.Event(event, client=client).set())
            await trio.to_thread.run_sync(client.gather, holders)
            stories = await trio.to_thread.run_sync(client.run, on_worker)
    went = [state for story in stories.values() for state in story]
    assert went and "executing" not in went, stories  # sent to a worker, dropped there before it started
    assert wait_no_procs(marker, within=5.0) == []


def test_a_batch_holds_the_games_in_flight_spread_over_two_tasks_per_worker() -> None:
    assert batch_size(16, [8, 8]) == 4  # the benchmark's cluster: two tasks of 4 on each worker
    assert batch_size(64, [4] * 10) == 3  # ten workers: 20 tasks
    assert batch_size(8, [1, 1]) == 4  # a worker of one thread takes one task at a time
    assert batch_size(1000, [8, 8]) == MAX_BATCH
    assert batch_size(3, [8, 8, 8]) == 1  # fewer games than tasks: one game a task
    assert batch_size(16, []) == MAX_BATCH  # no worker known yet: the scheduler holds the tasks


class _MeetingFuture:
    """A Dask future whose result comes only once every batch's thread waits
    for its own (a barrier): batches waited for one at a time never finish."""

    def __init__(self, meeting: threading.Barrier, key: str) -> None:
        self.meeting, self.key = meeting, key

    def result(self) -> list[str]:
        self.meeting.wait(timeout=scaled(5))
        return [f"played {self.key}"]

    def release(self) -> None:
        pass


class _MeetingClient:
    def __init__(self, batches: int) -> None:
        self.meeting = threading.Barrier(batches)

    def submit(self, fn: Any, jobs: list[Any], python: str, key: str, pure: bool) -> _MeetingFuture:
        return _MeetingFuture(self.meeting, jobs[0].key)


async def test_batches_in_flight_are_waited_for_at_once_whatever_trio_s_thread_limit() -> None:
    """Each batch in flight has a thread of its own waiting for it, even where
    trio's default thread limit (40) is lower than the batches (a big cluster)."""
    default = trio.to_thread.current_default_thread_limiter()
    tokens = default.total_tokens
    default.total_tokens = 1
    try:
        executor = DaskExecutor(_MeetingClient(4), 4, "t")
        executor.worker_threads = [1, 1, 1, 1]  # four tasks of one game
        got: dict[str, Any] = {}

        async def one(key: str) -> None:
            got[key] = await executor.play(SimpleNamespace(key=key), None)  # type: ignore[arg-type]

        async with trio.open_nursery() as games:
            games.start_soon(executor.send_batches)
            async with trio.open_nursery() as waiting:
                for key in ("g1", "g2", "g3", "g4"):
                    waiting.start_soon(one, key)
            games.cancel_scope.cancel()
    finally:
        default.total_tokens = tokens
    assert got == {k: f"played {k}" for k in ("g1", "g2", "g3", "g4")}
    assert executor.tasks_sent == 4


def test_a_worker_whose_bot_differs_refuses_the_game(tmp_path: Path) -> None:
    marker = f"execmark-{uuid.uuid4().hex}"
    bot_dir = det_bot_folder(tmp_path)
    job = coordinator_jobs(tmp_path, marker)[0]
    (bot_dir / "_botlib.py").write_text((bot_dir / "_botlib.py").read_text() + "\n# edited on one worker\n")
    [refused] = run_jobs([job], sys.executable)
    assert isinstance(refused, ClusterError), refused
    assert "bot 'a' at" in str(refused) and "bot differs from the coordinator's copy" in str(refused)
    assert wait_no_procs(marker) == []  # refused before any bot started


def test_without_dask_the_cluster_options_are_a_one_line_error(tmp_path: Path, monkeypatch: Any) -> None:
    marker = f"execmark-{uuid.uuid4().hex}"
    config = write_config(tmp_path, marker, ["a", "b"], deal_sets=1)
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails
    with pytest.raises(ConfigError, match=r"pip install 'chicago-referee\[cluster\]'"):
        import_distributed()
    res = cli.invoke(
        app, ["tournament", str(config), "--db", str(tmp_path / "x.db"), "--cluster", "tcp://127.0.0.1:8786"]
    )
    assert res.exit_code != 0
    assert "pip install 'chicago-referee[cluster]'" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "x.db").exists()  # refused before anything was written
    with pytest.raises(ConfigError, match="exclude each other"):
        Placement(workers=2, cluster="tcp://127.0.0.1:8786")
