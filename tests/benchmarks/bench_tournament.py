"""Benchmark (not a test): tournament throughput at several concurrency levels.

A round robin of trivial bots (`first_legal_bot.py`, stdlib only) at a
1 s per decision time control, run in-process through the real tournament
runner (bot processes, logs, SQLite commits), once per concurrency level.
Prints games/s, decisions/s, the CPU time of the referee process and of the
bot processes, and every failure seen (there should be none: no timeout
even at concurrency 32 on a 2-core machine).

Run: python tests/benchmarks/bench_tournament.py [GAMES] [TABLE_SIZE] [LEVELS]
     e.g. python tests/benchmarks/bench_tournament.py 96 2 1,2,8,32
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

import trio

from referee.tournament.config import load_config
from referee.tournament.run import TournamentRunner, prepare_store
from referee.tournament.schedule import schedule_for
from referee.tournament.store import Store

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "sample_bots" / "python" / "first_legal_bot.py"
N_BOTS = 4


def write_config(folder: Path, games: int, table_size: int) -> Path:
    per_set = comb(N_BOTS, table_size) * table_size
    deal_sets = max(1, -(-games // per_set))
    lines = [
        'name = "bench"',
        "seed = 1",
        f"table_size = {table_size}",
        f"deal_sets = {deal_sets}",
        'time_control = "decision=1s,startup=10s"',
        "sandbox = false  # the referee's own speed; bench --sandbox measures the sandbox",
        # short games: the point is the referee and the processes, not the cards
        "[rules]",
        "options = { target_score = 30 }",
    ]
    for i in range(N_BOTS):
        lines += ["[[bots]]", f'name = "trivial{i}"', f'command = "{BOT}"']
    path = folder / "bench.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_once(config: Path, folder: Path, concurrency: int) -> dict[str, float | int | str]:
    t = load_config(config)
    schedule = schedule_for(t)
    db = folder / f"c{concurrency}.db"
    store = Store.open(db, create=True, lock=True)
    try:
        prepare_store(t, store, schedule)
        runner = TournamentRunner(t, store, schedule, log_dir=folder / f"logs{concurrency}", concurrency=concurrency)
        me0, kids0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        outcome = trio.run(runner.run)
        dt = time.perf_counter() - t0
        me, kids = _cpu(resource.RUSAGE_SELF) - me0, _cpu(resource.RUSAGE_CHILDREN) - kids0
        rows = store.games()
    finally:
        store.close()
    failures = Counter(f.reason for r in rows for f in r.failures)
    decisions = sum(r.decisions for r in rows)
    return {
        "games": outcome.recorded,
        "seconds": dt,
        "games_per_s": outcome.recorded / dt,
        "decisions_per_s": decisions / dt,
        "timeouts": failures.get("timeout", 0),
        "referee_cpu": me,
        "bots_cpu": kids,
        "failures": ", ".join(f"{k} {v}" for k, v in sorted(failures.items())) or "none",
    }


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 96
    table_size = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    levels = [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [1, 2, 8, 32]
    print(
        f"tournament throughput: {N_BOTS} trivial bots, {table_size} seats, ~{games} games, "
        f"decision=1s, {os.cpu_count()} cores"
    )
    print(
        f"{'concurrency':>11} {'games':>6} {'seconds':>8} {'games/s':>8} {'decisions/s':>12} "
        f"{'referee CPU s':>13} {'bots CPU s':>10} {'timeouts':>8}  failures"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_config(folder, games, table_size)
        for c in levels:
            r = run_once(config, folder, c)
            print(
                f"{c:>11} {r['games']:>6} {r['seconds']:>8.1f} {r['games_per_s']:>8.2f} "
                f"{r['decisions_per_s']:>12.0f} {r['referee_cpu']:>13.1f} {r['bots_cpu']:>10.1f} "
                f"{r['timeouts']:>8}  {r['failures']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
