"""A match's results summed up: per bot (games, wins, points, places, failures,
thinking time) and between them (Elo with its error bar and LOS over deal
sets for two bots, the SPRT, a maximum-likelihood fit for three or four).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from referee.play.game_spec import GameRecord
from referee.play.match_config import MatchConfig
from referee.stats.mle import Ratings, comparisons_from_scores, fit_ratings
from referee.stats.ratings import MatchStats, SprtResult, set_counts, set_stats, sprt


@dataclass
class BotSummary:
    name: str
    command: list[str]
    games: int = 0
    wins: int = 0
    score_sum: int = 0
    deals: int = 0
    place_sum: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    asked: int = 0  # requests it answered (or let time out)
    think_ms: float = 0.0  # wall time of those decisions
    cpu_ms: float | None = None  # their CPU time; None: not measured

    def as_dict(self) -> dict[str, Any]:
        g = max(1, self.games)
        n = max(1, self.asked)
        return {
            "name": self.name,
            "command": self.command,
            "games": self.games,
            "wins": self.wins,
            "win_rate": round(self.wins / g, 4),
            "avg_score": round(self.score_sum / g, 3),
            "points_per_deal": round(self.score_sum / max(1, self.deals), 4),
            "avg_place": round(self.place_sum / g, 3),
            "failures": dict(sorted(self.failures.items())),
            "decisions": self.asked,
            "ms_per_decision": round(self.think_ms / n, 3),
            "cpu_ms_per_decision": None if self.cpu_ms is None else round(self.cpu_ms / n, 3),
        }


@dataclass
class MatchResult:
    config: MatchConfig
    records: list[GameRecord]
    bots: list[BotSummary]
    stats: MatchStats | None = None
    pentanomial: list[int] | None = None
    ratings: Ratings | None = None
    sprt: SprtResult | None = None
    stopped: str = ""


def summarize(config: MatchConfig, records: list[GameRecord]) -> MatchResult:
    """Per-bot totals, and the statistics between the bots."""
    names = [b.name for b in config.bots]
    bots = [BotSummary(name=b.name, command=list(b.argv)) for b in config.bots]
    for rec in records:
        _tally(rec, bots, names)
    result = MatchResult(config=config, records=records, bots=bots)
    if len(names) == 2:
        _pair_statistics(result, names)
    elif len(names) > 2 and records:
        comps = []
        for rec in records:
            table = {name: -rec.placements[seat] for seat, name in enumerate(rec.seat_names)}
            comps.extend(comparisons_from_scores(table, cluster=rec.deal_set))
        result.ratings = fit_ratings(comps, names, prior=2.0)
    return result


def _tally(rec: GameRecord, bots: list[BotSummary], names: list[str]) -> None:
    """One game's wins, points, places, thinking time and failures."""
    for seat, name in enumerate(rec.seat_names):
        b = bots[names.index(name)]
        b.games += 1
        b.wins += rec.winner == seat
        b.score_sum += rec.scores[seat]
        b.deals += rec.deals
        b.place_sum += rec.placements[seat]
        if seat < len(rec.asked):
            b.asked += rec.asked[seat]
            b.think_ms += rec.think_ms[seat]
            cpu = rec.cpu_ms[seat]
            if cpu is not None:
                b.cpu_ms = (b.cpu_ms or 0.0) + cpu
    for f in rec.failures:
        bots[names.index(rec.seat_names[f.seat])].failures[f.reason] += 1


def _pair_statistics(result: MatchResult, names: list[str]) -> None:
    """Two bots: Elo and LOS over complete deal sets, the pentanomial, the SPRT."""
    config = result.config
    sets: dict[int, list[GameRecord]] = {}
    for rec in result.records:
        sets.setdefault(rec.deal_set or 0, []).append(rec)
    complete = [v for v in sets.values() if len(v) == config.set_size]
    if not complete:
        return
    set_scores = [sum(_score_for(r, names[0]) for r in v) / len(v) for v in complete]
    result.stats = set_stats(set_scores, games_per_set=2)
    result.pentanomial = set_counts(set_scores, games_per_set=2)
    if config.sprt is not None:
        e0, e1, a, b = config.sprt
        result.sprt = sprt(e0, e1, a, b, result.pentanomial)


def _score_for(rec: GameRecord, name: str) -> float:
    seat = rec.seat_names.index(name)
    if rec.winner is None:
        return 0.5 if rec.placements[seat] == 1 else 0.0
    return 1.0 if rec.winner == seat else 0.0
