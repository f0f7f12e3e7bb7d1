"""Benchmark (not a test): how far tournaments scale on one machine.

`throughput` plays the same round robin of trivial bots (`first_legal_bot.py`,
stdlib only, 1 s per decision) through the real tournament runner:

* in process at concurrency C, which also measures the CPU a game costs
  (bots + referee: every bot is a child of the referee, so its CPU is in
  RUSAGE_CHILDREN once it has exited);
* `--workers 1` and `--workers 2` (the local pool of worker processes) at
  concurrency C, with where the CPU went: the coordinator, the workers'
  own loops, the bots (each worker reports its own and its children's CPU
  when it closes);
* the Dask path: a `LocalCluster` of 2 worker processes (threads = C / 2)
  started here beforehand and reached as `--cluster` would be, at
  concurrency C;
* one game at a time in process, on `--workers 1` and on a 1-worker,
  1-thread `LocalCluster`, whose differences in wall time per game are what
  each path adds to a game.

It prints games/s, the CPU-bound limit (cores / CPU seconds per game, from
the in-process run of the same invocation) and each run's share of it.

`load` plays GAMES games at CONCURRENCY at once in one process (default 256
games of 2 bots, so 512 bot processes) and reports timeouts and the
referee's resident memory (peak, and sampled while all games run).

Run: python tests/benchmarks/bench_scale.py throughput [GAMES] [CONCURRENCY]
     python tests/benchmarks/bench_scale.py load [GAMES] [CONCURRENCY]
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from collections import Counter
from math import comb
from pathlib import Path
from typing import Any

import trio

from referee.tournament.config import load_config
from referee.tournament.executors import Placement
from referee.tournament.run import TournamentRunner, prepare_store
from referee.tournament.schedule import schedule_for
from referee.tournament.store import Store

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "sample_bots" / "python" / "first_legal_bot.py"


def write_config(folder: Path, games: int, n_bots: int, target: int = 30) -> Path:
    per_set = comb(n_bots, 2) * 2
    lines = ['name = "bench"', "seed = 1", "table_size = 2", f"deal_sets = {max(1, -(-games // per_set))}",
             'time_control = "decision=1s,startup=10s"', "sandbox = false",
             "[rules]", f"options = {{ target_score = {target} }}"]
    for i in range(n_bots):
        lines += ["[[bots]]", f'name = "trivial{i}"', f'command = "{BOT}"']
    path = folder / f"bench-{games}-{n_bots}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_once(config: Path, folder: Path, label: str, concurrency: int, placement: Placement,
             sample_rss_at: int = 0) -> dict[str, Any]:
    t = load_config(config)
    schedule = schedule_for(t)
    db = folder / f"{label}.db"
    store = Store.open(db, create=True, lock=True)
    rss: list[float] = []
    try:
        prepare_store(t, store, schedule)
        runner = TournamentRunner(t, store, schedule, log_dir=folder / f"{label}-logs", concurrency=concurrency,
                                  placement=placement)

        async def main() -> Any:
            async with trio.open_nursery() as nursery:
                async def sample() -> None:
                    while True:
                        if sample_rss_at and runner.running >= sample_rss_at:
                            rss.append(_rss_mb())
                        await trio.sleep(0.5)
                nursery.start_soon(sample)
                outcome = await runner.run()
                nursery.cancel_scope.cancel()
            return outcome

        me0, kids0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        outcome = trio.run(main)
        dt = time.perf_counter() - t0
        me, kids = _cpu(resource.RUSAGE_SELF) - me0, _cpu(resource.RUSAGE_CHILDREN) - kids0
        rows = store.games()
    finally:
        store.close()
    failures = Counter(f.reason for r in rows for f in r.failures)
    pool_cpu = getattr(runner.executor, "cpu", None)  # the local pool: what each worker and its bots used
    if isinstance(pool_cpu, dict) and pool_cpu:
        workers = sum(b.cpu_s for b in pool_cpu.values())
        bots = sum(b.children_cpu_s for b in pool_cpu.values())
    else:  # in process: the referee is this process; a cluster's workers are not children here
        workers, bots = (0.0, kids) if placement.cluster is None else (float("nan"), float("nan"))
    n = max(1, outcome.recorded)
    return {"label": label, "games": outcome.recorded, "seconds": dt, "games_per_s": outcome.recorded / dt,
            "referee_cpu": me, "children_cpu": kids, "cpu_per_game": (me + kids) / n,
            "coordinator_ms": me / n * 1000, "workers_ms": workers / n * 1000, "bots_ms": bots / n * 1000,
            "timeouts": failures.get("timeout", 0), "rss_while_full": max(rss, default=0.0),
            "failures": ", ".join(f"{k} {v}" for k, v in sorted(failures.items())) or "none"}


def pool_start_cost(workers: int) -> tuple[float, float]:
    """(wall s, CPU s) to start and stop a pool of `workers` that plays nothing."""
    from referee.tournament.pool import open_pool

    async def open_close() -> None:
        async with open_pool(workers):
            pass

    me0, kids0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    trio.run(open_close)
    return time.perf_counter() - t0, _cpu(resource.RUSAGE_SELF) - me0 + _cpu(resource.RUSAGE_CHILDREN) - kids0


def local_dask_cluster(workers: int, threads: int) -> Any:
    """A Dask `LocalCluster` on 127.0.0.1 (no dashboard, no sampling profiler): the `--cluster` path on one machine."""
    import logging

    import dask
    import distributed

    dask.config.set({"distributed.worker.profile.enabled": False})
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                                    dashboard_address=None, silence_logs=logging.ERROR, host="127.0.0.1")


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min)"


def throughput(games: int, concurrency: int) -> None:
    cores = os.cpu_count() or 1
    print(f"tournament throughput: 4 trivial bots, 2 seats, ~{games} games, decision=1s, {cores} cores, "
          f"concurrency {concurrency}; {_load()} before")
    print(f"{'run':<30} {'games':>5} {'seconds':>7} {'games/s':>7} {'CPU s/game':>10} {'of limit':>8} "
          f"{'coordinator':>11} {'workers':>8} {'bots':>6}  failures")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_config(folder, games, 4)
        runs: list[tuple[str, int, Any]] = [
            ("in process", concurrency, lambda: Placement()),
            ("--workers 1", concurrency, lambda: Placement(workers=1)),
            ("--workers 2", concurrency, lambda: Placement(workers=2)),
            ("Dask LocalCluster, 2 workers", concurrency, (2, max(1, concurrency // 2))),
            ("in process, one at a time", 1, lambda: Placement()),
            ("--workers 1, one at a time", 1, lambda: Placement(workers=1)),
            ("Dask, 1 worker, one at a time", 1, (1, 1)),
        ]
        results = {}
        limit = None
        for label, conc, where in runs:
            cluster = None
            if isinstance(where, tuple):  # started beforehand, as a running cluster would be
                cluster = local_dask_cluster(*where)
                placement = Placement(cluster=cluster.scheduler_address)
            else:
                placement = where()
            try:
                r = run_once(config, folder, label.replace(" ", "_").replace(",", ""), conc, placement)
            finally:
                if cluster is not None:
                    cluster.close()
            results[label] = r
            if limit is None:
                limit = cores / r["cpu_per_game"]
            cpu = "" if cluster is not None else f"{r['cpu_per_game'] * 1000:>8.0f}ms"
            split = ("" if cluster is not None else
                     f"{r['coordinator_ms']:>9.0f}ms {r['workers_ms']:>6.0f}ms {r['bots_ms']:>4.0f}ms")
            print(f"{label:<30} {r['games']:>5} {r['seconds']:>7.1f} {r['games_per_s']:>7.2f} {cpu:>10} "
                  f"{r['games_per_s'] / limit:>8.2f} {split:>28}  {r['failures']}", flush=True)
    assert limit is not None
    base = results["in process"]
    print(f"CPU-bound limit: {cores} cores / {base['cpu_per_game'] * 1000:.0f} ms CPU per game (bots + referee, "
          f"in process) = {limit:.2f} games/s")
    for label in ("in process", "--workers 1", "--workers 2", "Dask LocalCluster, 2 workers"):
        print(f"{label}: {results[label]['games_per_s']:.2f} games/s = {results[label]['games_per_s'] / limit:.2f} "
              "of the limit")
    seq = results["in process, one at a time"]
    start_wall, start_cpu = pool_start_cost(1)
    n = max(1, seq["games"])
    pool_wall = (results["--workers 1, one at a time"]["seconds"] - seq["seconds"] - start_wall) / n * 1000
    dask_wall = (results["Dask, 1 worker, one at a time"]["seconds"] - seq["seconds"]) / n * 1000
    print(f"a pool of 1 worker starts and stops in {start_wall:.2f} s wall, {start_cpu:.2f} s CPU")
    print(f"overhead per game, one at a time, against in process: --workers 1 {pool_wall:+.1f} ms wall "
          f"(start-up aside); the Dask path {dask_wall:+.1f} ms wall (cluster started beforehand); "
          f"so the Dask path costs {dask_wall - pool_wall:+.1f} ms per game more than the local pool")
    print(f"{_load()} after")


def load(games: int, concurrency: int) -> None:
    print(f"load: {games} games of 2 trivial bots, {concurrency} at once ({2 * concurrency} bot processes), "
          f"decision=1s, one process, {os.cpu_count()} cores; {_load()} before")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_config(folder, games, 2, target=52)
        r = run_once(config, folder, "load", concurrency, Placement(), sample_rss_at=concurrency)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{r['games']} games in {r['seconds']:.1f} s ({r['games_per_s']:.2f} games/s), timeouts {r['timeouts']}, "
          f"failures: {r['failures']}")
    full = f"{r['rss_while_full']:.0f} MB" if r["rss_while_full"] else "not sampled (never all running at once)"
    print(f"referee RSS: peak {peak:.0f} MB; while {concurrency} games ran: {full}")
    print(f"{_load()} after")


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else "throughput"
    if what == "throughput":
        throughput(int(sys.argv[2]) if len(sys.argv) > 2 else 96, int(sys.argv[3]) if len(sys.argv) > 3 else 16)
    elif what == "load":
        load(int(sys.argv[2]) if len(sys.argv) > 2 else 256, int(sys.argv[3]) if len(sys.argv) > 3 else 256)
    else:
        raise SystemExit(f"unknown benchmark {what!r}: throughput or load")


if __name__ == "__main__":
    main()
