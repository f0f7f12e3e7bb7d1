"""Benchmark (not a test): the strength ladder of the built-in bots.

Plays each adjacent pair of the ladder random < first-legal < greedy < pimc <
ismcts through `chicago-referee match`, by their built-in names (real bot
processes, the real referee, duplicate deal sets: every deal is replayed
with the seats rotated) and prints a Markdown table for docs/bots.md: Elo of the
stronger-meant bot over the weaker one, its 95 % interval, LOS, and whether
the interval excludes 0 (LOS above 0.975). Rows print as each match ends;
`python tests/benchmarks/ladder.py --table FILE.json` prints the table of a
saved run again.

Tables: Swedish Chicago with 2, 3 and 4 seats, and Ghost Hand Euchre (3
seats; there `greedy` is the Euchre heuristic, the built-in `euchre`). At a table
of n seats, the upper bot sits once and the lower bot n-1 times; a game
scores 1 for each lower copy the upper bot finishes ahead of (1/2 for the
same place), averaged; a deal set (the n seat rotations of one deal
sequence) is one sample (`referee.stats.ratings.set_stats`).

    python tests/benchmarks/ladder.py [--games N] [--search-games N] [--budget-ms MS] [--seed S] [--jobs J]
                                      [--concurrency C] [--tables chicago-2,chicago-3,chicago-4,ghost-euchre-3]
                                      [--from BOT] [--to BOT]

`--budget-ms` is the search bots' budget per decision (the default 200 ms
makes a ladder take hours; see docs/bots.md for the one published).
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from referee.stats.ratings import set_stats

ROOT = Path(__file__).resolve().parents[2]
LADDER = ("random", "first-legal", "greedy", "pimc", "ismcts")
TABLES = (("chicago", 2), ("chicago", 3), ("chicago", 4), ("ghost-euchre", 3))


def command(bot: str, game: str, budget_ms: int) -> str:
    """The built-in bot of this rung: the search bots at `budget_ms`, Euchre's own heuristic for greedy."""
    if bot in ("pimc", "ismcts"):
        return f"{bot} --budget-ms {budget_ms}"
    if bot == "greedy" and game == "ghost-euchre":
        return "euchre"
    return bot


def game_score(result: dict, upper_seat: int) -> float:
    """The upper bot's share of the lower copies it finished ahead of."""
    places = result["placements"]
    mine = places[upper_seat]
    others = [p for s, p in enumerate(places) if s != upper_seat]
    return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)


def play_pair(
    game: str, seats: int, upper: str, lower: str, games: int, budget_ms: int, seed: int, concurrency: int = 1
) -> dict:
    bots = [command(upper, game, budget_ms)] + [command(lower, game, budget_ms)] * (seats - 1)
    argv = [
        sys.executable,
        "-m",
        "referee.cli",
        "match",
        *bots,
        "--game",
        game,
        "--games",
        str(games),
        "--seed",
        str(seed),
        "--json",
        "--concurrency",
        str(concurrency),
    ]
    t0 = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"ladder: {upper} vs {lower} ({game}, {seats} seats) failed: {proc.stderr.strip()[-400:]}")
    summary = json.loads(proc.stdout)
    upper_name = summary["bots"][0]["name"]
    sets: dict[int, list[float]] = {}
    for r in summary["results"]:
        sets.setdefault(r["deal_set"], []).append(game_score(r, r["seats"].index(upper_name)))
    set_scores = [sum(v) / len(v) for v in sets.values() if len(v) == seats]
    stats = set_stats(set_scores, games_per_set=seats)
    failures = sum(sum(b["failures"].values()) for b in summary["bots"])
    return {
        "game": game,
        "seats": seats,
        "upper": upper,
        "lower": lower,
        "games": len(summary["results"]),
        "deal_sets": len(set_scores),
        "score": stats.score,
        "elo": stats.elo,
        "err95": stats.err95,
        "los": stats.los,
        "failures": failures,
        "seconds": time.monotonic() - t0,
    }


def row(r: dict) -> str:
    err = r["err95"]
    # The 95 % interval of the score excludes 1/2 (Elo 0) exactly when LOS > 0.975;
    # this also holds when every deal set was won (no spread, LOS 1).
    separated = r["los"] > 0.975
    table = f"{'Chicago' if r['game'] == 'chicago' else 'Ghost Hand Euchre'}, {r['seats']} seats"
    err_text = f"± {err:.0f}" if err == err else "(every deal set alike)"
    return (
        f"| {table} | {r['lower']} < {r['upper']} | {r['games']} | {r['score']:.3f} | "
        f"{r['elo']:+.0f} {err_text} | {r['los']:.3f} | {'yes' if separated else '**no**'} | {r['failures']} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=60, help="games per pair without a search bot")
    ap.add_argument("--search-games", type=int, default=40, help="games per pair with a search bot")
    ap.add_argument("--budget-ms", type=int, default=25, help="search bots' budget per decision")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--jobs", type=int, default=2, help="matches played at once")
    ap.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="deal sets played at once within each match (the same results, sooner)",
    )
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    ap.add_argument("--table", type=Path, help="print the table of a run saved with --json, and stop")
    ap.add_argument(
        "--tables",
        default=",".join(f"{g}-{n}" for g, n in TABLES),
        help="which tables, as GAME-SEATS separated by commas (default: all four)",
    )
    ap.add_argument(
        "--from",
        dest="start",
        choices=LADDER[:-1],
        default=LADDER[0],
        help="play only the steps from this bot up (e.g. greedy: the two search steps)",
    )
    ap.add_argument(
        "--to",
        dest="stop",
        choices=LADDER[1:],
        default=LADDER[-1],
        help="play only the steps up to this bot (e.g. --from greedy --to pimc: one step)",
    )
    args = ap.parse_args()
    names = {f"{g}-{n}": (g, n) for g, n in TABLES}
    unknown = [t for t in args.tables.split(",") if t not in names]
    if unknown:
        raise SystemExit(f"ladder: no table {', '.join(unknown)}; the tables are {', '.join(names)}")
    tables = [names[t] for t in args.tables.split(",")]
    if args.table:
        print("| table | step | games | score | Elo ± 95 % | LOS | separated | failures |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in json.loads(args.table.read_text()):
            print(row(r))
        return
    if LADDER.index(args.stop) <= LADDER.index(args.start):
        raise SystemExit(f"ladder: --to {args.stop} must be above --from {args.start} in {' < '.join(LADDER)}")
    work = []
    for game, seats in tables:
        rungs = LADDER[LADDER.index(args.start) : LADDER.index(args.stop) + 1]
        for lower, upper in itertools.pairwise(rungs):
            search = upper in ("pimc", "ismcts")
            work.append((game, seats, upper, lower, args.search_games if search else args.games))
    t0 = time.monotonic()
    print("| table | step | games | score | Elo ± 95 % | LOS | separated | failures |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    results = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(lambda w: play_pair(*w, args.budget_ms, args.seed, args.concurrency), work):
            results.append(r)
            print(row(r), flush=True)
            if args.json:
                args.json.write_text(json.dumps(results, indent=1))
    print(
        f"\n{len(results)} matches, search budget {args.budget_ms} ms a decision, seed {args.seed}, "
        f"{time.monotonic() - t0:.0f} s with {args.jobs} at once"
    )


if __name__ == "__main__":
    main()
