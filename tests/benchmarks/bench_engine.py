"""Benchmark (not a test): in-process random play through the engines, as a
ratio to a fixed card-shaped pure-Python workload.

Decisions/s alone says as much about the machine as about the engine, so
each table is timed alternately with `reference_loops`, a workload that
never changes (deal five five-card hands with an LCG, count ranks and
suits, take a trick), and reported as decisions/s over its loops/s. With a
base (a directory holding `referee` and `protocol`, or a git revision, by
default the commit before the engine's speed work) the same child
measurement runs on both trees in interleaved subprocesses and both ratios
are printed side by side. Both are timed in this process's CPU time, which
a neighbour's load on a shared machine disturbs far less than wall time.

Run: python tests/benchmarks/bench_engine.py [--seconds S] [--rounds N] [--base REV|DIR|none]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASE_REVISION = "c498ad1"  # the engine before the speed work of issue 36
TABLES = (
    ("chicago", 2, "Swedish Chicago, 2 seats"),
    ("chicago", 3, "Swedish Chicago, 3 seats"),
    ("chicago", 4, "Swedish Chicago, 4 seats"),
    ("ghost_euchre", 3, "Ghost Hand Euchre, 3 seats"),
)
HERE = Path(__file__).resolve().parents[2]


def reference_loops(seconds: float) -> float:
    """Loops/s of the fixed workload: keep it exactly as it is, or old
    ratios stop being comparable."""
    deck = list(range(52))
    x = 1
    acc = 0
    loops = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for _ in range(100):
            hands = []
            for _h in range(5):
                hand = []
                for k in range(5):
                    x = (x * 1103515245 + 12345) & 0x7FFFFFFF
                    j = x % (52 - k)
                    top = 51 - k
                    deck[j], deck[top] = deck[top], deck[j]
                    hand.append(deck[top])
                hand.sort()
                counts: dict[int, int] = {}
                for c in hand:
                    r = c >> 2
                    counts[r] = counts.get(r, 0) + 1
                shape = sorted(counts.values(), reverse=True)
                flush = len({c & 3 for c in hand}) == 1
                acc += shape[0] + flush
                hands.append(hand)
            trick = [h[-1] for h in hands]
            led = trick[0] & 3
            acc += max([c for c in trick if c & 3 == led], key=lambda c: c >> 2)
        loops += 100
    return loops / (time.process_time() - t0)


def engine_decisions(game: str, n_players: int, seconds: float) -> float:
    """Decisions/s of uniform random play, whole games, fresh seeds."""
    from referee.games.playout import new_game

    rng = random.Random(1)
    decisions = games = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        state = new_game(game, n_players, games)
        games += 1
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
            decisions += 1
    return decisions / (time.process_time() - t0)


def child(seconds: float) -> None:
    """One round in this process: each table beside the workload, in slices
    of a fifth of a second taken alternately (so that a neighbour's load
    falls on both), and the median of the slices' decisions/s and ratios."""
    out = {}
    for game, n, _ in TABLES:
        engine_decisions(game, n, 0.1)  # warm the tables and the caches
        pairs = []
        for _ in range(max(1, round(seconds / 0.2))):
            dps = engine_decisions(game, n, 0.2)
            pairs.append((dps, dps / reference_loops(0.2)))
        out[f"{game}/{n}"] = [statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)]
    print(json.dumps(out))


def run_child(tree: Path, seconds: float) -> dict[str, list[float]]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(seconds)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def base_tree(base: str, scratch: Path) -> Path:
    """A directory to import the base engine from: `base` itself, or the
    `referee` and `protocol` packages of a revision of this repository."""
    if Path(base).is_dir():
        return Path(base)
    archive = subprocess.run(
        ["git", "-C", str(HERE), "archive", base, "referee", "protocol"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive, check=True)
    return scratch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="per table and workload, per round")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved child processes per tree")
    ap.add_argument("--base", default=BASE_REVISION, help="git revision or directory to compare with, or none")
    ap.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"now": HERE}
        if args.base != "none":
            trees = {"base": base_tree(args.base, Path(scratch)), "now": HERE}
        rounds: dict[str, list[dict[str, list[float]]]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                rounds[name].append(run_child(tree, args.seconds))
    print(f"Uniform random play, one core; medians of {args.rounds} interleaved rounds of {args.seconds:g} s")
    print("ratio = engine decisions/s over the fixed workload's loops/s, timed alternately")
    head = f"  {'table':28}"
    for name in trees:
        head += f" {name + ' decisions/s':>19} {name + ' ratio':>11}"
    print(head)
    for game, n, title in TABLES:
        key = f"{game}/{n}"
        line = f"  {title:28}"
        for name in trees:
            dps = statistics.median(r[key][0] for r in rounds[name])
            ratio = statistics.median(r[key][1] for r in rounds[name])
            line += f" {dps:19,.0f} {ratio:11.2f}"
        print(line)


if __name__ == "__main__":
    main()
