"""A real Dask cluster on 127.0.0.1 for the tests that play on `--cluster`:
a `dask scheduler` and two `dask worker` processes, bounded in threads and
memory, killed (whole process groups) when the test ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from timing import scaled

from referee.tournament.executors import import_distributed

DASK = Path(sys.executable).with_name("dask")


def _start(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as fh:
        return subprocess.Popen(
            argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, cwd=log.parent
        )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=scaled(30))


@pytest.fixture
def dask_cluster(tmp_path: Path) -> Any:
    """A `dask scheduler` and two `dask worker` processes (wA, wB; no nanny, so a
    SIGKILLed worker stays dead) on 127.0.0.1, bounded in threads and memory."""
    distributed = import_distributed()
    folder = tmp_path / "cluster"
    folder.mkdir()
    sched_file = folder / "scheduler.json"
    procs = [
        _start(
            [
                str(DASK),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(sched_file),
            ],
            folder / "scheduler.log",
        )
    ]
    try:
        deadline = time.monotonic() + scaled(60)
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sched_file.exists(), (folder / "scheduler.log").read_text()
        workers = {}
        for name in ("wA", "wB"):
            workers[name] = _start(
                [
                    str(DASK),
                    "worker",
                    "--scheduler-file",
                    str(sched_file),
                    "--name",
                    name,
                    "--nthreads",
                    "2",
                    "--no-nanny",
                    "--memory-limit",
                    "2GB",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                ],
                folder / f"{name}.log",
            )
            procs.append(workers[name])
        client = distributed.Client(scheduler_file=str(sched_file), timeout="30s")
        try:
            client.wait_for_workers(2, timeout=scaled(60))
            address = client.scheduler.address
        finally:
            client.close()
        yield address, workers
    finally:
        for proc in reversed(procs):
            _stop(proc)
