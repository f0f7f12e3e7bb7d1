"""Benchmark (not a test): how far tournaments scale on one machine.

`throughput` plays the same round robin of trivial bots (`first_legal_bot.py`,
stdlib only, 1 s per decision) through the real tournament runner:

* ROUNDS (default 3) rounds of four runs at concurrency C, interleaved, each
  round in a rotated order so that a machine that drifts, or a neighbour
  that comes and goes, falls on every kind of run alike:
  - in process, which also measures the CPU a game costs (bots + referee:
    every bot is a child of the referee, so its CPU is in RUSAGE_CHILDREN
    once it has exited);
  - `--workers 1` and `--workers 2` (the local pool of worker processes),
    with where the CPU went: the coordinator, the workers' own loops, the
    bots (each worker reports its own and its children's CPU when it closes);
* the Dask path: a `dask scheduler` and 2 `dask worker` processes (threads = C / 2),
  started here beforehand as docs/cluster.md starts them and reached as `--cluster` would be, at
  concurrency C, once, with where the CPU went (each worker is asked its
  own CPU and its bots' before and after the run);
* one game at a time (48 games) in process, on `--workers 1` and on a
  1-worker, 1-thread cluster, whose differences in wall and CPU time
  per game are what each path adds to a game.

GAMES defaults to 576 (about 40 s a run on 2 cores): a pool starts its
workers once per run (about half a second of one core each), which in a
real tournament of thousands of games is nothing; the benchmark prints
that start-up cost and each pool run's share of the limit with and without it.

It prints each run (with its share of its own round's limit), then the
CPU-bound limit (cores / CPU seconds per game, the median of the in-process
runs) and each kind's median games/s and share of it, with every round's.

`load` plays GAMES games at CONCURRENCY at once in one process (default 256
games of 2 bots, so 512 bot processes) and reports timeouts and the
referee's resident memory (peak, and sampled while all games run).

`parts` times the Dask path's pieces one by one (docs/cluster.md, "What a
cluster game costs").

Run: python tests/benchmarks/bench_scale.py throughput [GAMES] [CONCURRENCY] [ROUNDS]
     python tests/benchmarks/bench_scale.py parts [CALLS]
     python tests/benchmarks/bench_scale.py load [GAMES] [CONCURRENCY]
"""

from __future__ import annotations

import math
import os
import resource
import shutil
import signal
import statistics
import subprocess
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
    lines = [
        'name = "bench"',
        "seed = 1",
        "table_size = 2",
        f"deal_sets = {max(1, -(-games // per_set))}",
        'time_control = "decision=1s,startup=10s"',
        "sandbox = false",
        "[rules]",
        f"options = {{ target_score = {target} }}",
    ]
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


def run_once(
    config: Path, folder: Path, label: str, concurrency: int, placement: Placement, sample_rss_at: int = 0
) -> dict[str, Any]:
    t = load_config(config)
    schedule = schedule_for(t)
    db = folder / f"{label}.db"
    store = Store.open(db, create=True, lock=True)
    rss: list[float] = []
    try:
        prepare_store(t, store, schedule)
        runner = TournamentRunner(
            t, store, schedule, log_dir=folder / f"{label}-logs", concurrency=concurrency, placement=placement
        )

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
    return {
        "label": label,
        "games": outcome.recorded,
        "seconds": dt,
        "games_per_s": outcome.recorded / dt,
        "referee_cpu": me,
        "children_cpu": kids,
        "cpu_per_game": (me + kids) / n,
        "coordinator_ms": me / n * 1000,
        "workers_ms": workers / n * 1000,
        "bots_ms": bots / n * 1000,
        "timeouts": failures.get("timeout", 0),
        "rss_while_full": max(rss, default=0.0),
        "failures": ", ".join(f"{k} {v}" for k, v in sorted(failures.items())) or "none",
        "dask_tasks": getattr(runner.executor, "tasks_sent", 0),  # a cluster's: each carries a batch of games
    }


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


DASK = Path(sys.executable).with_name("dask")
DASK_SETTINGS = {  # docs/cluster.md's settings for a cluster that plays games
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
}


class DaskCluster:
    """A Dask cluster on 127.0.0.1 started as docs/cluster.md starts one: a `dask scheduler` and
    `dask worker` processes, each in a session of its own as on machines of their own, with its settings; the
    `--cluster` path on one machine. Its processes are children here, so their CPU counts here
    once `close` has reaped them."""

    def __init__(self, workers: int, threads: int) -> None:
        import distributed

        self._folder = Path(tempfile.mkdtemp(prefix="bench-dask-"))
        self._procs: list[subprocess.Popen[bytes]] = []
        env = {**os.environ, **DASK_SETTINGS}
        file = self._folder / "scheduler.json"
        try:
            self._start("scheduler", ["--host", "127.0.0.1", "--port", "0", "--no-dashboard"], file, env)
            deadline = time.monotonic() + 60
            while not file.exists():
                if time.monotonic() > deadline or self._procs[0].poll() is not None:
                    raise RuntimeError(f"dask scheduler did not start: see {self._folder / 'scheduler.log'}")
                time.sleep(0.05)
            for i in range(workers):
                args = ["--name", f"w{i + 1}", "--nthreads", str(threads), "--nworkers", "1", "--no-dashboard"]
                self._start("worker", [*args, "--host", "127.0.0.1"], file, env, f"w{i + 1}")
            with distributed.Client(scheduler_file=str(file), set_as_default=False) as client:
                client.wait_for_workers(workers, timeout=60)
                self.scheduler_address = client.scheduler.address
        except BaseException:
            self.close()
            raise

    def _start(self, kind: str, args: list[str], file: Path, env: dict[str, str], name: str = "") -> None:
        with (self._folder / f"{name or kind}.log").open("wb") as log:
            argv = [str(DASK), kind, *args, "--scheduler-file", str(file)]
            self._procs.append(
                subprocess.Popen(
                    argv,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    start_new_session=True,
                    cwd=self._folder,
                )
            )

    def close(self) -> None:
        for proc in reversed(self._procs):  # the workers first, then the scheduler
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
            except ProcessLookupError:
                proc.wait()
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        shutil.rmtree(self._folder, ignore_errors=True)


def dask_run(config: Path, folder: Path, label: str, concurrency: int, workers: int, threads: int) -> dict[str, Any]:
    """A run on a `DaskCluster` started beforehand (timed without its start-up), its CPU counted with
    the cluster's processes (children here once closed) less what an idle cluster's life costs. Each
    worker is asked its own CPU and its bots' before and after the run, as a pool worker reports them."""
    import distributed

    def own_and_children_cpu() -> tuple[float, float]:  # sent to each worker (by value: they cannot import this)
        import resource

        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime

    me0, kids0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    DaskCluster(workers, threads).close()
    idle = _cpu(resource.RUSAGE_SELF) - me0 + _cpu(resource.RUSAGE_CHILDREN) - kids0
    me0, kids0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    cluster = DaskCluster(workers, threads)
    try:
        with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
            before = client.run(own_and_children_cpu)
            r = run_once(config, folder, label, concurrency, Placement(cluster=cluster.scheduler_address))
            after = client.run(own_and_children_cpu)
    finally:
        cluster.close()
    total = _cpu(resource.RUSAGE_SELF) - me0 + _cpu(resource.RUSAGE_CHILDREN) - kids0 - idle
    n = max(1, r["games"])
    r["cpu_per_game"] = total / n
    spent = [(a[0] - before.get(w, (0.0, 0.0))[0], a[1] - before.get(w, (0.0, 0.0))[1]) for w, a in after.items()]
    r["workers_ms"] = sum(own for own, _ in spent) / n * 1000  # the Dask workers themselves: referee and Dask
    r["bots_ms"] = sum(kids for _, kids in spent) / n * 1000
    return r


def _ms(seconds: float, width: int) -> str:
    """Seconds as milliseconds in `width` columns; `-` where a path does not tell them apart."""
    return f"{'-':>{width}}" if math.isnan(seconds) else f"{seconds * 1000:>{width - 2}.0f}ms"


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) {five:.2f} (5 min)"


ONE_AT_A_TIME = 48  # games of the runs that measure the overhead per game (they take 0.2 s each)
ROUNDS = 3  # rounds of the three one-machine runs, interleaved; their medians are compared
DASK_2 = "Dask, 2 workers"
ROUND_RUNS: list[tuple[str, Placement | str]] = [
    ("in process", Placement()),
    ("--workers 1", Placement(workers=1)),
    ("--workers 2", Placement(workers=2)),
    (DASK_2, "dask-2"),  # a cluster started before the run, not timed
]
ONCE_RUNS: list[tuple[str, bool, Any]] = [  # label, concurrency C (else 1), where
    ("in process, one at a time", False, Placement()),
    ("--workers 1, one at a time", False, Placement(workers=1)),
    ("Dask, 1 worker, one at a time", False, "dask-1"),
]


def _row(label: str, r: dict[str, Any], limit: float | None) -> str:
    share = f"{r['games_per_s'] / limit:>8.2f}" if limit else f"{'':>8}"
    return (
        f"{label:<30} {r['games']:>5} {r['seconds']:>7.1f} {r['games_per_s']:>7.2f} "
        f"{_ms(r['cpu_per_game'], 8)} {share}   {_ms(r['coordinator_ms'] / 1000, 11)} "
        f"{_ms(r['workers_ms'] / 1000, 7)} {_ms(r['bots_ms'] / 1000, 6)}  {r['failures']}"
    )


def throughput(games: int, concurrency: int, rounds: int = ROUNDS) -> None:
    """Rounds of the in-process and pool runs, interleaved (each round in a
    rotated order), so that a machine that drifts or a neighbour that comes
    and goes falls on every kind of run alike; the limit and each kind's
    share of it are the medians over the rounds."""
    cores = os.cpu_count() or 1
    print(
        f"tournament throughput: 4 trivial bots, 2 seats, ~{games} games, decision=1s, {cores} cores, "
        f"concurrency {concurrency}, {rounds} interleaved rounds; {_load()} before"
    )
    print(
        f"{'run':<30} {'games':>5} {'seconds':>7} {'games/s':>7} {'CPU/game':>8} {'of round':>8}   "
        f"{'coordinator':>11} {'workers':>7} {'bots':>6}  failures"
    )
    rounds_of: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in ROUND_RUNS}
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        many, few = write_config(folder, games, 4), write_config(folder, ONE_AT_A_TIME, 4)
        for k in range(rounds):
            order = ROUND_RUNS[k % len(ROUND_RUNS) :] + ROUND_RUNS[: k % len(ROUND_RUNS)]
            done: dict[str, dict[str, Any]] = {}
            for label, where in order:
                name = f"{label.replace(' ', '_').replace(',', '')}-{k}"
                if isinstance(where, Placement):
                    done[label] = run_once(many, folder, name, concurrency, where)
                else:
                    done[label] = dask_run(many, folder, name, concurrency, 2, max(1, concurrency // 2))
            round_limit = cores / done["in process"]["cpu_per_game"]
            for label, _ in ROUND_RUNS:
                rounds_of[label].append(done[label])
                print(_row(f"{label} (round {k + 1})", done[label], round_limit), flush=True)
        for label, at_c, where in ONCE_RUNS:
            conc, config = (concurrency, many) if at_c else (1, few)
            name = label.replace(" ", "_").replace(",", "")
            if where == "dask-1":
                r = dask_run(config, folder, name, conc, 1, 1)
            else:
                r = run_once(config, folder, name, conc, where)
            results[label] = r
            print(_row(label, r, None), flush=True)
    med = statistics.median
    base_cpu = med(r["cpu_per_game"] for r in rounds_of["in process"])
    limit = cores / base_cpu
    start_wall, start_cpu = pool_start_cost(1)
    start2_wall, start2_cpu = pool_start_cost(2)
    print(
        f"CPU-bound limit: {cores} cores / {base_cpu * 1000:.0f} ms CPU per game (bots + referee, in process, "
        f"median of {rounds} rounds) = {limit:.2f} games/s"
    )
    print(
        f"a pool starts and stops in {start_wall:.2f} s wall, {start_cpu:.2f} s CPU (1 worker); "
        f"{start2_wall:.2f} s wall, {start2_cpu:.2f} s CPU (2 workers); once per run"
    )
    starts = {"--workers 1": start_wall, "--workers 2": start2_wall}
    for label, _ in ROUND_RUNS:
        start = starts.get(label, 0.0)
        runs = rounds_of[label]
        shares = sorted(r["games_per_s"] / limit for r in runs)
        rate = med(r["games_per_s"] for r in runs)
        aside = (
            f"; {med(r['games'] / (r['seconds'] - start) for r in runs) / limit:.2f} with the pool's start-up aside"
            if start
            else ""
        )
        print(
            f"{label}: {rate:.2f} games/s = {rate / limit:.2f} of the limit (rounds "
            f"{', '.join(f'{x:.2f}' for x in shares)}){aside}; CPU per game "
            f"{med(r['cpu_per_game'] for r in runs) * 1000:.0f} ms"
        )
    pool, dask = (med(r["games_per_s"] for r in rounds_of[label]) for label in ("--workers 2", DASK_2))
    per_task = med(r["games"] / max(1, r["dask_tasks"]) for r in rounds_of[DASK_2])
    print(
        f"the Dask path on 2 workers reaches {dask / pool:.2f} of --workers 2's pace (medians), "
        f"{per_task:.1f} games per Dask task"
    )
    seq = results["in process, one at a time"]
    n = max(1, seq["games"])

    def extra(label: str, wall: float = 0.0, cpu: float = 0.0) -> tuple[float, float]:
        r = results[label]
        return (
            (r["seconds"] - seq["seconds"] - wall) / n * 1000,
            (r["cpu_per_game"] * r["games"] - seq["cpu_per_game"] * n - cpu) / n * 1000,
        )

    pool_wall, pool_cpu = extra("--workers 1, one at a time", start_wall, start_cpu)
    dask_wall, dask_cpu = extra("Dask, 1 worker, one at a time")
    print(
        f"overhead per game, one at a time, against in process: --workers 1 {pool_wall:+.1f} ms wall, "
        f"{pool_cpu:+.1f} ms CPU (start-up aside); the Dask path {dask_wall:+.1f} ms wall, {dask_cpu:+.1f} ms CPU "
        f"(cluster start-up aside)"
    )
    print(
        f"so the Dask path costs {dask_wall - pool_wall:+.1f} ms wall and {dask_cpu - pool_cpu:+.1f} ms CPU per "
        "game more than the local pool"
    )
    one = results["Dask, 1 worker, one at a time"]
    print(
        f"one at a time, per game: the Dask worker {one['workers_ms']:.1f} ms and its bots {one['bots_ms']:.1f} ms, "
        f"the referee in process {seq['coordinator_ms']:.1f} ms and its bots {seq['bots_ms']:.1f} ms"
    )
    print(f"{_load()} after")


def load(games: int, concurrency: int) -> None:
    print(
        f"load: {games} games of 2 trivial bots, {concurrency} at once ({2 * concurrency} bot processes), "
        f"decision=1s, one process, {os.cpu_count()} cores; {_load()} before"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_config(folder, games, 2, target=52)
        r = run_once(config, folder, "load", concurrency, Placement(), sample_rss_at=concurrency)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{r['games']} games in {r['seconds']:.1f} s ({r['games_per_s']:.2f} games/s), timeouts {r['timeouts']}, "
        f"failures: {r['failures']}"
    )
    full = f"{r['rss_while_full']:.0f} MB" if r["rss_while_full"] else "not sampled (never all running at once)"
    print(f"referee RSS: peak {peak:.0f} MB; while {concurrency} games ran: {full}")
    print(f"{_load()} after")


def _timed(n: int, fn: Any) -> tuple[float, float]:
    """(wall ms, CPU ms of this process) per call of `fn`, over `n` calls after one to warm up."""
    fn()
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - w0) / n * 1000, (time.process_time() - c0) / n * 1000


def _tree_cpu() -> float:
    """CPU seconds of this process and every process under it (a cluster's scheduler and worker)."""
    import psutil

    me = psutil.Process()
    total = 0.0
    for proc in [me, *me.children(recursive=True)]:
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def parts(n: int) -> None:
    """Where the Dask path's cost per game goes, piece by piece, each timed alone
    (one at a time, so wall time here is latency, CPU time what a busy machine pays)."""
    import pickle
    import threading
    import zlib

    from referee.tournament import bot_files
    from referee.tournament.game_job import PlayedGame, play_job_shipped, worker_info

    print(f"the Dask path's parts, per game, each timed alone ({n} calls); {_load()}")
    print(f"{'part':<62} {'wall':>8} {'CPU':>8}")

    def show(label: str, wall_cpu: tuple[float, float]) -> None:
        print(f"{label:<62} {wall_cpu[0]:>6.2f}ms {wall_cpu[1]:>6.2f}ms", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_config(folder, ONE_AT_A_TIME, 4)
        t = load_config(config)
        schedule = schedule_for(t)
        store = Store.open(folder / "jobs.db", create=True, lock=True)
        try:
            prepare_store(t, store, schedule)
            runner = TournamentRunner(
                t, store, schedule, log_dir=folder, concurrency=1, placement=Placement(cluster="tcp://x:1")
            )
            job = runner.job_for(schedule[0])
        finally:
            store.close()

        async def one_game() -> PlayedGame:
            return await play_job_shipped(job, worker_info("w"), trio.CapacityLimiter(2))

        played = trio.run(one_game)  # a real game's record and log, as a worker ships them
        assert played.log_zlib is not None
        data = zlib.decompress(played.log_zlib)
        log = folder / "game.jsonl"

        def check_files(cold: bool) -> None:
            if cold:
                bot_files._checked.clear()
                bot_files._cache.clear()
            for (bot, digest, where), spec in zip(job.bot_digests, job.bots):
                bot_files.check_same_files(bot, spec.argv, spec.cwd, where, digest, "w")

        async def nothing() -> None:
            pass

        def trio_run_in_thread() -> None:
            th = threading.Thread(target=trio.run, args=(nothing,))
            th.start()
            th.join()

        def shipped(level: int) -> None:
            with tempfile.TemporaryDirectory() as scratch:
                (Path(scratch) / log.name).write_bytes(data)
                zlib.compress((Path(scratch) / log.name).read_bytes(), level)

        show(f"check 2 bots' files, hashed ({len(job.bot_digests)} digests)", _timed(n, lambda: check_files(True)))
        show("check 2 bots' files, cached by stat", _timed(n, lambda: check_files(False)))
        show("a Trio loop started and ended in a new thread (per game before)", _timed(n, trio_run_in_thread))
        show("worker_info (load average)", _timed(n, lambda: worker_info("w")))
        show(
            f"pickle + unpickle the job ({len(pickle.dumps(job))} bytes)",
            _timed(n, lambda: pickle.loads(pickle.dumps(job))),
        )
        size = len(pickle.dumps(played))
        show(f"pickle + unpickle the result ({size} bytes)", _timed(n, lambda: pickle.loads(pickle.dumps(played))))
        for level in (6, 1):  # 6 before, 1 now
            show(
                f"scratch folder, log written, read, zlib {level} ({len(data)} bytes)",
                _timed(n, lambda level=level: shipped(level)),
            )
        show("decompress and write the log on the coordinator", _timed(n, lambda: played.write_into(folder / "x.part")))

        async def to_thread_and_back() -> None:
            for _ in range(n):
                await trio.to_thread.run_sync(lambda: None)

        w0, c0 = time.perf_counter(), time.process_time()
        trio.run(to_thread_and_back)
        show(
            "a coordinator thread per waiting game (hand-off and back)",
            ((time.perf_counter() - w0) / n * 1000, (time.process_time() - c0) / n * 1000),
        )
    import distributed

    cluster = DaskCluster(1, 1)
    try:
        with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
            payload = b"x" * size

            def round_trip() -> None:
                client.submit(bytes, payload, pure=False).result()

            round_trip()
            cpu0, w0 = _tree_cpu(), time.perf_counter()
            for _ in range(n):
                round_trip()
            wall, cpu = (time.perf_counter() - w0) / n * 1000, (_tree_cpu() - cpu0) / n * 1000
            show("Dask round trip: submit, run a no-op, gather (all processes)", (wall, cpu))
    finally:
        cluster.close()


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else "throughput"
    if what == "throughput":
        throughput(
            int(sys.argv[2]) if len(sys.argv) > 2 else 576,
            int(sys.argv[3]) if len(sys.argv) > 3 else 16,
            int(sys.argv[4]) if len(sys.argv) > 4 else ROUNDS,
        )
    elif what == "parts":
        parts(int(sys.argv[2]) if len(sys.argv) > 2 else 200)
    elif what == "load":
        load(int(sys.argv[2]) if len(sys.argv) > 2 else 256, int(sys.argv[3]) if len(sys.argv) > 3 else 256)
    else:
        raise SystemExit(f"unknown benchmark {what!r}: throughput or load")


if __name__ == "__main__":
    main()
