"""Benchmark (not a test): the arena's matchmaking policy on simulated ladders.

Each scenario is tests/arena_sim.py's `ladder`: a field of bots with hidden
strengths 0, 1, 2, ... (per-game noise 6: of two neighbours the stronger
takes about 57 % of 2-seat units, ties counted half; one scenario has them 4 times closer)
starts together, plays 2 hours of
20 s units, takes 4 newcomers at odd times and plays on to 5 hours. Over
several seeds it prints what docs/arena.md quotes:

- the newcomers' wait for their first unit (median, max);
- units per bot in the last hour, placement aside: max / min (median, max);
- units until every pair of the starting field has shared a table, and
  until a newcomer has met everyone (median, max; hours at the unit rate);
- Spearman's rho against the hidden strengths of the leaderboard's
  mu - 3 sigma and of the MLE Elo refit (referee.stats) over the same units,
  and between the two (min, median);
- the share of slot time used, and how fast it all runs.

Run: python tests/benchmarks/bench_matchmaking.py [SEEDS] [KEY=VALUE ...]
     SEEDS defaults to 10; KEY=VALUE sets a [matchmaking] parameter, e.g.
     python tests/benchmarks/bench_matchmaking.py 10 coverage_share=0.25
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout and the shared simulation

from arena_sim import HOUR, UNIT_SECONDS, field_of, ladder, spearman  # noqa: E402

from referee.arena.matchmaking import MatchmakingPolicy  # noqa: E402
from referee.arena.online import elo_comparisons  # noqa: E402
from referee.stats.mle import fit_ratings  # noqa: E402

SCENARIOS = {  # name: table size, bots, slots, strength step
    "20 bots, 2 seats, 2 slots": (2, 20, 2, 1.0),
    "20 bots, 3 seats, 2 slots": (3, 20, 2, 1.0),
    "20 bots, 4 seats, 2 slots": (4, 20, 2, 1.0),
    "40 bots, 2 seats, 4 slots": (2, 40, 4, 1.0),
    "10 bots, 2 seats, 5 slots (crowded)": (2, 10, 5, 1.0),
    "20 bots 4 times closer (step 0.25), 2 seats, 2 slots": (2, 20, 2, 0.25),
}


def spread(values: list[float], digits: int = 2) -> str:
    return f"median {statistics.median(values):.{digits}f}, max {max(values):.{digits}f}"


def low(values: list[float]) -> str:
    return f"min {min(values):.3f}, median {statistics.median(values):.3f}"


def measure(
    table: int, bots: int, slots: int, step: float, seed: int, policy: MatchmakingPolicy
) -> dict[str, list[float]]:
    """One run's figures, each a list (the newcomers' several, the others one)."""
    started = time.perf_counter()
    arena, newcomers = ladder(table, bots, slots, seed, step, policy)
    elapsed = time.perf_counter() - started
    counts = arena.units_per_bot(arena.strength, 4 * HOUR, 5 * HOUR)
    keys = list(arena.strength)
    elo = fit_ratings(elo_comparisons(arena.results), keys)
    ordinal = [arena.ratings[k].ordinal for k in keys]
    hidden = [arena.strength[k] for k in keys]
    everyone = [arena.units_until_met_everyone(k) for k in newcomers]
    return {
        "delays": [arena.first_unit_delay(k) for k in newcomers],
        "met_everyone": [float(n) for n in everyone if n is not None],
        "ratio": [max(counts.values()) / min(counts.values())],
        "all_pairs": [float(arena.units_until_all_pairs_met(list(field_of(bots))) or "inf")],
        "rho_ordinal": [arena.spearman()],
        "rho_elo": [spearman([elo.rating(k) for k in keys], hidden)],
        "rho_between": [spearman(ordinal, [elo.rating(k) for k in keys])],
        "slot_use": [len(arena.results) / (arena.now / UNIT_SECONDS * slots)],
        "units": [len(arena.results)],
        "units_per_s": [len(arena.results) / elapsed],
        "calls_per_s": [arena.calls / elapsed],
        "units_per_hour": [len(arena.results) / (arena.now / HOUR)],
    }


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    types = {f.name: type(getattr(MatchmakingPolicy(), f.name)) for f in dataclasses.fields(MatchmakingPolicy)}
    settings = dict(arg.split("=", 1) for arg in sys.argv[2:])
    policy = MatchmakingPolicy(**{key: types[key](value) for key, value in settings.items()})
    print(f"{seeds} seeds per scenario; units of {UNIT_SECONDS:.0f} s; 5 simulated hours each; {policy}\n")
    for name, (table, bots, slots, step) in SCENARIOS.items():
        runs = [measure(table, bots, slots, step, seed, policy) for seed in range(seeds)]

        def col(key: str, runs: list[dict[str, list[float]]] = runs) -> list[float]:
            return [value for run in runs for value in run[key]]

        rate = statistics.median(col("units_per_hour"))
        newcomers = len(col("delays"))
        print(f"{name}: {statistics.median(col('units')):.0f} units per run ({rate:.0f} an hour)")
        print(f"  first unit of a newcomer (s)      {spread(col('delays'), 1)} ({newcomers} newcomers)")
        print(f"  units per bot, last hour, max/min {spread(col('ratio'))}")
        pairs, met = col("all_pairs"), col("met_everyone")
        print(f"  all pairs of the field met        {spread(pairs, 0)} units ({max(pairs) / rate:.2f} h at most)")
        print(
            f"  a newcomer met everyone           {spread(met, 0)} units ({max(met) / rate:.2f} h at most);"
            f" {len(met)} of {newcomers} did within the run"
        )
        print(f"  Spearman, mu - 3 sigma vs hidden  {low(col('rho_ordinal'))}")
        print(f"  Spearman, MLE Elo vs hidden       {low(col('rho_elo'))}")
        print(f"  Spearman, mu - 3 sigma vs Elo     {low(col('rho_between'))}")
        print(f"  slot time used                    {low(col('slot_use'))}")
        print(
            f"  speed: {statistics.median(col('units_per_s')):.0f} units/s simulated (with ratings), "
            f"{statistics.median(col('calls_per_s')):.0f} next_unit calls/s\n"
        )


if __name__ == "__main__":
    main()
