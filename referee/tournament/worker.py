"""What a worker does with one game: check, play in its own Trio loop, ship back.

`run_job` is the function the coordinator submits to a Dask worker of a
`--cluster` (the local pool behind `--workers N` has its own worker,
`pool_worker.py`, which shares the coordinator's files). Each call runs in
one of the worker's threads with its own `trio.run`, so a worker plays as
many games at once as it has threads. Before playing it refuses, with a
`ClusterError` naming the worker, a game whose bots differ from the
coordinator's copy or whose sandbox this machine cannot provide: a game
must never run with less isolation than the tournament asked for.
The clocks are judged here, and the log header names this worker and its load.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import trio

from referee.errors import ClusterError, SandboxUnavailable
from referee.seats.bot_command import BotSpec
from referee.seats.isolation import require_isolation
from referee.tournament.bot_files import check_same_files
from referee.tournament.game_job import GameJob, PlayedGame, play_job_shipped, worker_info, worker_label


def _worker_name() -> str | None:
    try:
        from distributed import get_worker
    except ImportError:  # pragma: no cover - run_job is only ever called by Dask
        return None
    try:
        worker = get_worker()
    except ValueError:  # not inside a Dask worker (a direct call)
        return None
    return worker_label(worker.name if worker.name is not None else worker.address)


def _local_python(spec: BotSpec, coordinator_python: str) -> BotSpec:
    """A `.py` bot started with the coordinator's interpreter starts with this worker's."""
    if spec.argv and spec.argv[0] == coordinator_python and coordinator_python != sys.executable:
        return replace(spec, argv=(sys.executable, *spec.argv[1:]))
    return spec


def run_job(job: GameJob, coordinator_python: str) -> PlayedGame:
    """Play one game on this worker and return its record with the log compressed."""
    info = worker_info(_worker_name())
    name = info["name"]
    for (bot, digest, folder), spec in zip(job.bot_digests, job.bots):
        check_same_files(bot, spec.argv, spec.cwd, folder, digest, name)
    try:
        require_isolation(job.sandbox)
    except SandboxUnavailable as exc:
        raise ClusterError(f"worker {name} cannot isolate bots, and the tournament is sandboxed: {exc}") from None
    job = replace(job, bots=tuple(_local_python(b, coordinator_python) for b in job.bots))
    return trio.run(play_job_shipped, job, info)
