"""Benchmark (not a test): a search bot against `greedy` in process, on
duplicate deals, with a breakdown of where the points go: 2-seat Chicago
by default, `--seats 3|4` for bigger tables, `--game ghost-euchre` for
Ghost Hand Euchre (there `greedy` is the Euchre heuristic).

Why in process: a real match spends most of its time in pipes and the
clock; here each search bot's `SearchBot` is called directly with an
unlimited clock, so it runs its fixed iteration budget (the default 200 ms
one unless `--iterations`) and plays exactly as at an idle default-time
match, only faster to set up. Every deal sequence is played from every
seat (a deal set), and a set's mean score is one sample. At an n-seat
table the search bot sits once and greedy n-1 times; a game scores the
share of the greedy copies the search bot finished ahead of (1/2 for the
same place), as in `ladder.py`.

Prints one JSON line: games, win rate and its standard error, Elo over
greedy with a 95 % interval, points per deal (ours minus greedy's), and
per side: Chicago calls and successes, last tricks, showdown points by
exchange round (`show1`, `show2`, and `show0` for the final showdown).

Checking the two-seat Chicago call (`--calibrate`): at each call decision of
the search bot the harness also plays both answers out exactly against the
other seat's true hand (`search_tricks.call_gain`). The decisions are
bucketed by the gain of calling the bot's worlds estimated; each bucket
shows how many, the mean estimate, the mean true gain, and the share the
bot answered with a call.
A calibrated call has the true gain close to the estimate in every bucket.

The bots are the built-in ones of this checkout (`referee/bots/`). Comparing
two versions of them: run each checkout's own `bench_search_vs_greedy.py` on the same
`--seed` and `--sets`, save the first with `--save FILE`, and pass it to the
second with `--against FILE`: the difference of win rate is then paired
set by set.

    python tests/benchmarks/bench_search_vs_greedy.py [--bot ismcts|pimc] [--sets 100] [--seed 100] [--procs 2]
                                     [--game chicago|ghost-euchre] [--seats 2|3|4]
                                     [--iterations N] [--save FILE] [--against FILE] [--calibrate]
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import math
import random
import statistics
import time
from multiprocessing import Pool
from pathlib import Path

from ladder import game_score  # a sibling benchmark: the same score per game

ARGS: argparse.Namespace
GAIN_BUCKETS = (-2.0, 0.0, 2.0, 5.0, 8.0)  # edges of the estimated gain, in points, for `--calibrate`


class _Clock:
    decision_ms = 10**7


class _Request:
    clock = _Clock()


class _Start:
    def __init__(self, seed: int, rules) -> None:
        self.seed = seed
        self.rules = rules


def _load():
    """The search bots' shared module and the heuristic bot of this game."""
    from referee.bots import search

    heuristic = importlib.import_module("referee.bots.euchre" if ARGS.game == "ghost-euchre" else "referee.bots.greedy")
    return search, heuristic


class _Greedy:
    def __init__(self, heuristic, rules) -> None:
        self.greedy, self.rules = heuristic, rules

    def start(self, seed: int) -> None:
        pass

    def event(self, event) -> None:
        pass

    def choose(self, view, legal):
        if ARGS.game == "ghost-euchre":
            return self.greedy.choose(view, legal)
        return self.greedy.choose(view, legal, self.rules)


class _Search:
    def __init__(self, kind: str, search, rules) -> None:
        module = importlib.import_module(f"referee.bots.{kind}")
        settings = search.Settings(iterations=ARGS.iterations) if ARGS.iterations else search.Settings()
        self.bot = search.SearchBot(kind, getattr(module, kind), module.ITERATIONS_PER_MS, settings)
        self.rules = rules

    def start(self, seed: int) -> None:
        self.bot.on_game_start(_Start(seed, self.rules))

    def event(self, event) -> None:
        self.bot.on_event(0, event)

    def choose(self, view, legal):
        self.bot.on_request(_Request())
        return self.bot.choose(view, legal)


class _CallRecorder:
    """Wraps `search_tricks.call_estimate`: records each estimate beside the
    gain of calling played out against `truth`, the other seat's true hand."""

    def __init__(self, search_tricks, card_bits) -> None:
        current = search_tricks.call_estimate  # a worker plays many games: wrap the original once
        self.estimate = current.estimate if isinstance(current, _CallRecorder) else current
        self.call_gain, self.card_bits = search_tricks.call_gain, card_bits
        self.truth: list[int] = []
        self.log: list[list[float]] = []
        search_tricks.call_estimate = self

    def __call__(self, decision, solver) -> float:
        gain = self.estimate(decision, solver)
        called, not_called = self.call_gain(decision, solver, self.card_bits(self.truth))
        self.log.append([gain, called - not_called])
        return gain


def _calibration(log: list[list[float]]) -> list[dict]:
    """The call decisions bucketed by estimated gain: count, mean estimate,
    mean true gain, and the share the bot called."""
    edges = (-math.inf, *GAIN_BUCKETS, math.inf)
    rows = []
    for low, high in itertools.pairwise(edges):
        inside = [(g, t, c) for g, t, c in log if low <= g < high]
        if inside:
            rows.append(
                {
                    "estimate": [None if math.isinf(low) else low, None if math.isinf(high) else high],
                    "n": len(inside),
                    "mean_estimate": round(statistics.mean(g for g, _, _ in inside), 2),
                    "mean_true": round(statistics.mean(t for _, t, _ in inside), 2),
                    "called": round(statistics.mean(c for _, _, c in inside), 2),
                }
            )
    return rows


def play(job: tuple[int, int]) -> dict:
    """One game of deal sequence `seed`, our bot in seat `me`; its figures."""
    seed, me = job
    search, heuristic = _load()
    from referee.games import PUBLIC, new_game
    from referee.games.cards import CARD_INT

    recorder = None
    if ARGS.calibrate:
        from referee.bots import search_model, search_tricks

        recorder = _CallRecorder(search_tricks, search_model.card_bits)
    state = new_game(ARGS.game, ARGS.seats, seed)
    bots = [_Greedy(heuristic, state.rules) for _ in range(ARGS.seats)]
    bots[me] = _Search(ARGS.bot, search, state.rules)
    for i, bot in enumerate(bots):
        bot.start(seed * 7 + i)
    cursor = [0] * ARGS.seats
    while not state.is_terminal():
        seat = state.current_player()
        events = state.events
        for audience, event in events[cursor[seat] :]:
            if audience in (PUBLIC, seat):
                bots[seat].event(event)
        cursor[seat] = len(events)
        if recorder is not None and seat == me:
            recorder.truth = [CARD_INT[c] for c in state.view(1 - me).hand]
        logged = len(recorder.log) if recorder is not None else 0
        action = bots[seat].choose(state.view(seat), state.legal_actions())
        if recorder is not None and len(recorder.log) > logged:
            recorder.log[-1].append(float(action.call))  # what the bot answered on that estimate
        state.apply_action(action)
    figures: dict[str, list[int]] = {}

    def add(key: str, seat: int, amount: int = 1) -> None:
        figures.setdefault(key, [0, 0])[0 if seat == me else 1] += amount

    showdown_round = 0
    deals = 0
    for _, event in state.events:
        kind = type(event).__name__
        if kind == "Showdown":
            showdown_round = event.round
        elif kind == "DealStarted":
            deals += 1
        elif kind == "ChicagoDecision" and event.call:
            add("calls", event.seat)
        elif kind == "ScoreChanged":
            if event.reason == "chicago":
                add("chicago_made", event.seat)
            elif event.reason == "chicago_failed":
                add("chicago_failed", event.seat)
            elif event.reason == "last_trick":
                add("last_tricks", event.seat)
            elif event.reason == "showdown":
                add(f"show{showdown_round}", event.seat, event.points)
    result = state.result()
    score = game_score({"placements": result.placements}, me)
    rest = [v for s, v in enumerate(result.scores) if s != me]
    calls = {"call_log": recorder.log} if recorder is not None else {}
    return {"win": score, "diff": result.scores[me] - sum(rest) / len(rest), "deals": deals, **figures, **calls}


def elo(p: float) -> float:
    p = min(max(p, 1e-3), 1 - 1e-3)
    return -400 * math.log10(1 / p - 1)


def main() -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot", default="ismcts", choices=("ismcts", "pimc"))
    parser.add_argument("--game", default="chicago", choices=("chicago", "ghost-euchre"))
    parser.add_argument("--seats", type=int, default=None, help="Chicago: 2, 3 or 4 (Ghost Hand Euchre: 3)")
    parser.add_argument("--sets", type=int, default=100, help="deal sets (one game from each seat)")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--save", default=None, help="write the per-set wins here")
    parser.add_argument("--against", default=None, help="a saved run on the same seeds: paired difference")
    parser.add_argument(
        "--calibrate", action="store_true", help="two-seat Chicago: the call's estimates against the true hand"
    )
    ARGS = parser.parse_args()
    if ARGS.seats is None:
        ARGS.seats = 3 if ARGS.game == "ghost-euchre" else 2
    n = ARGS.seats
    if ARGS.calibrate and (ARGS.game != "chicago" or n != 2):
        parser.error("--calibrate is for two-seat Chicago, where the call is played out exactly")
    rng = random.Random(ARGS.seed)
    jobs = [(seed, me) for seed in (rng.getrandbits(48) for _ in range(ARGS.sets)) for me in range(n)]
    started = time.time()
    with Pool(ARGS.procs) as pool:
        games = pool.map(play, jobs, chunksize=1)
    sets = [sum(g["win"] for g in games[i : i + n]) / n for i in range(0, len(games), n)]
    mean = statistics.mean(sets)
    se = statistics.stdev(sets) / math.sqrt(len(sets)) if len(sets) > 1 else 0.0
    deals = sum(g["deals"] for g in games)
    keys = sorted({k for g in games for k in g if isinstance(g[k], list) and k != "call_log"})
    out = {
        "bot": ARGS.bot,
        "game": ARGS.game,
        "seats": n,
        "games": len(games),
        "win_rate": round(mean, 3),
        "se": round(se, 3),
        "elo": round(elo(mean)),
        "elo95": [round(elo(mean - 1.96 * se)), round(elo(mean + 1.96 * se))],
        "points_per_deal": round(sum(g["diff"] for g in games) / deals, 3),
        "deals": deals,
        **{k: [sum(g.get(k, [0, 0])[0] for g in games), sum(g.get(k, [0, 0])[1] for g in games)] for k in keys},
        "secs": round(time.time() - started),
    }
    if ARGS.calibrate:
        from referee.bots.search_tricks import CALL_MARGIN_POINTS

        log = [entry for g in games for entry in g["call_log"]]
        out["calibration"] = {
            "decisions": len(log),
            "margin": CALL_MARGIN_POINTS,
            "by_estimated_gain": _calibration(log),
        }
    if ARGS.against:
        base = json.loads(Path(ARGS.against).read_text())["sets"]
        deltas = [a - b for a, b in zip(sets, base)]
        d_se = statistics.stdev(deltas) / math.sqrt(len(deltas))
        out["vs_saved"] = {
            "win_rate_diff": round(statistics.mean(deltas), 3),
            "se": round(d_se, 3),
            "elo_diff": round(elo(mean) - elo(mean - statistics.mean(deltas))),
        }
    print(json.dumps(out))
    if ARGS.save:
        Path(ARGS.save).write_text(json.dumps({**out, "sets": sets}))


if __name__ == "__main__":
    main()
