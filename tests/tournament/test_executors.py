"""Tournaments played on a Dask `--cluster` (a real `dask scheduler` with two
real `dask worker` processes on 127.0.0.1, one of them SIGKILLed mid-run);
the local pool behind `--workers N` has its own tests (`test_pool.py`).

Each checks what a host relies on: every scheduled game recorded once,
standings equal to a one-machine run, logs that verify, no bot left behind.
The bots are deterministic (`tests/bots/det_bot.py`), so a game's result
depends only on its spec, wherever it is played.
"""

from __future__ import annotations

import os
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from proctools import wait_no_procs
from timing import scaled
from tournament_runs import check_games, coordinator_jobs, det_bot_folder, header_worker, play, standings, write_config
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ClusterError, ConfigError
from referee.tournament.config import load_config
from referee.tournament.executors import Placement, import_distributed
from referee.tournament.run import TournamentRunner
from referee.tournament.schedule import schedule_for
from referee.tournament.store import Store
from referee.tournament.worker import run_job

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

    outcome, _ = await play(t, tmp_path / "cluster.db", Placement(cluster=address), 6, on_game)
    assert killed_after and killed_after[0] < scheduled, "the worker was not killed mid-run"
    assert workers["wA"].wait(timeout=scaled(30)) == -signal.SIGKILL
    assert outcome.status == "completed" and outcome.recorded == scheduled
    check_games(tmp_path / "cluster.db", scheduled)
    assert "wB" in header_worker(tmp_path / "cluster.db")
    _here, _ = await play(t, tmp_path / "here.db", Placement(), 6)
    assert standings(tmp_path / "cluster.db") == standings(tmp_path / "here.db")
    assert wait_no_procs(marker, within=10.0) == [], "bots of the killed worker outlived it"


def test_a_worker_whose_bot_differs_refuses_the_game(tmp_path: Path) -> None:
    marker = f"execmark-{uuid.uuid4().hex}"
    bot_dir = det_bot_folder(tmp_path)
    job = coordinator_jobs(tmp_path, marker)[0]
    (bot_dir / "_botlib.py").write_text((bot_dir / "_botlib.py").read_text() + "\n# edited on one worker\n")
    with pytest.raises(ClusterError, match=r"bot 'a' at .*bot differs from the coordinator's copy"):
        run_job(job, sys.executable)
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
