"""Tournament standings from the results database: ratings with error bars,
LOS matrix, crosstable, per-seat results, failures. Shown by
`standings_tables` (the terminal), `standings_export` (JSON, CSV) and
`report` (a self-contained HTML page).

Ratings (docs/ratings.md): every table's final placements are broken into
pairwise comparisons (`comparisons_from_scores`), clustered by deal set of a
table (the games of one deal set share their cards, so they are not
independent), and fitted at once by maximum likelihood with 2 virtual draws
per bot (`fit_ratings`). Elo is centred on the pool mean.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from referee.stats.mle import Comparison, Ratings, comparisons_from_scores, fit_ratings
from referee.stats.ratings import RatingError
from referee.tournament.store import Store
from referee.tournament.store_rows import GameRow

PRIOR = 2.0
RATINGS_NOTE = (
    "Elo: maximum-likelihood fit of pairwise placements (logistic, 400/ln10 scale), mean 0, "
    f"prior {PRIOR:g} virtual draws; ±95 % relative to the pool mean, clustered by deal set. "
    "Judge two bots by the LOS matrix, not by adding their ± bars. "
    "'>' all wins, '<' all losses (model-based ±)."
)


@dataclass
class SeatStat:
    games: int = 0
    wins: int = 0
    place_sum: int = 0
    score_sum: int = 0
    no_results: int = 0  # games nobody won: they count as games, but add no place or points

    @property
    def avg_place(self) -> float:
        placed = self.games - self.no_results
        return self.place_sum / placed if placed else math.nan

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else math.nan

    def add(self, *, won: bool, none: bool, place: int, points: int) -> None:
        self.games += 1
        self.wins += won
        self.no_results += none
        self.place_sum += place
        self.score_sum += points


@dataclass
class BotStanding:
    name: str
    rank: int = 0
    games: int = 0
    wins: int = 0  # sole first place
    no_results: int = 0  # games in which every seat forfeited: no winner, place, points or comparison
    pair_wins: int = 0
    pair_losses: int = 0
    pair_draws: int = 0
    place_sum: int = 0
    score_sum: int = 0
    elo: float = math.nan
    err95: float = math.nan
    flag: str = ""
    failures: Counter[str] = field(default_factory=Counter)
    seats: list[SeatStat] = field(default_factory=list)

    @property
    def points(self) -> float:
        return self.pair_wins + 0.5 * self.pair_draws

    @property
    def pair_games(self) -> int:
        return self.pair_wins + self.pair_losses + self.pair_draws

    @property
    def score(self) -> float:
        return self.points / self.pair_games if self.pair_games else math.nan

    @property
    def avg_place(self) -> float:
        placed = self.games - self.no_results
        return self.place_sum / placed if placed else math.nan

    @property
    def avg_points(self) -> float:
        placed = self.games - self.no_results
        return self.score_sum / placed if placed else math.nan


@dataclass
class Standings:
    name: str
    game: str
    table_size: int
    format: str
    scheduled: int
    finished: int
    bots: list[BotStanding]  # by rank
    ratings: Ratings | None
    rating_note: str
    crosstable: dict[str, dict[str, list[int]]]  # row -> column -> [W, L, D] from row's view
    seat_totals: list[SeatStat]
    games: list[GameRow]
    seed: dict[str, Any] | None = None  # the commitment; seed and salt once revealed (`Commitment.public`)

    def bot(self, name: str) -> BotStanding:
        return next(b for b in self.bots if b.name == name)


def no_result(g: GameRow) -> bool:
    """Every seat forfeited (no bot started, or all failed): nobody beat anybody."""
    return len(g.forfeited) == len(g.seats)


def comparisons(rows: list[GameRow]) -> list[Comparison]:
    """Pairwise placements of every game with a result, clustered by (table, deal set)."""
    comps: list[Comparison] = []
    for g in rows:
        if no_result(g):
            continue
        table = {name: -g.placements[seat] for seat, name in enumerate(g.seats)}
        comps.extend(comparisons_from_scores(table, cluster=(g.table_key, g.deal_set)))
    return comps


def compute(
    rows: list[GameRow],
    bots: list[str],
    *,
    name: str = "",
    game: str = "",
    table_size: int = 0,
    fmt: str = "",
    scheduled: int = 0,
    with_ratings: bool = True,
) -> Standings:
    """The standings of `rows` (the games played so far) among `bots`."""
    by_name = {b: BotStanding(name=b) for b in bots}
    k = table_size or max((len(g.seats) for g in rows), default=0)
    seat_totals = [SeatStat() for _ in range(k)]
    for g in rows:
        _tally_game(g, by_name, seat_totals)
    comps = comparisons(rows)
    cross = _tally_pairs(comps, by_name, bots)
    ratings, note = _rate(comps, by_name, with_ratings)
    return Standings(
        name=name,
        game=game,
        table_size=k,
        format=fmt,
        scheduled=scheduled,
        finished=len(rows),
        bots=_ranked(by_name, k),
        ratings=ratings,
        rating_note=note,
        crosstable=cross,
        seat_totals=seat_totals,
        games=rows,
    )


def _tally_game(g: GameRow, by_name: dict[str, BotStanding], seat_totals: list[SeatStat]) -> None:
    """One game's places, points, sole wins and failures, per bot and per seat."""
    none = no_result(g)
    sole_first = [] if none else [s for s, p in enumerate(g.placements) if p == 1]
    for seat, bot in enumerate(g.seats):
        b = by_name.setdefault(bot, BotStanding(name=bot))
        if len(b.seats) < len(g.seats):
            b.seats.extend(SeatStat() for _ in range(len(g.seats) - len(b.seats)))
        won = sole_first == [seat]
        place, points = (0, 0) if none else (g.placements[seat], g.scores[seat])
        b.games += 1
        b.wins += won
        b.no_results += none
        b.place_sum += place
        b.score_sum += points
        for stat in (b.seats[seat], seat_totals[seat] if seat < len(seat_totals) else SeatStat()):
            stat.add(won=won, none=none, place=place, points=points)
    for f in g.failures:
        by_name[f.bot].failures[f.reason] += 1


def _tally_pairs(
    comps: list[Comparison], by_name: dict[str, BotStanding], bots: list[str]
) -> dict[str, dict[str, list[int]]]:
    """Pairwise wins, losses and draws per bot, and the crosstable."""
    cross: dict[str, dict[str, list[int]]] = {b: {} for b in bots}
    for c in comps:
        a, b = by_name[c.a], by_name[c.b]
        wld_a = cross.setdefault(c.a, {}).setdefault(c.b, [0, 0, 0])
        wld_b = cross.setdefault(c.b, {}).setdefault(c.a, [0, 0, 0])
        if c.score_a == 1.0:
            a.pair_wins, b.pair_losses = a.pair_wins + 1, b.pair_losses + 1
            wld_a[0], wld_b[1] = wld_a[0] + 1, wld_b[1] + 1
        elif c.score_a == 0.0:
            a.pair_losses, b.pair_wins = a.pair_losses + 1, b.pair_wins + 1
            wld_a[1], wld_b[0] = wld_a[1] + 1, wld_b[0] + 1
        else:
            a.pair_draws, b.pair_draws = a.pair_draws + 1, b.pair_draws + 1
            wld_a[2], wld_b[2] = wld_a[2] + 1, wld_b[2] + 1
    return cross


def _rate(comps: list[Comparison], by_name: dict[str, BotStanding], with_ratings: bool) -> tuple[Ratings | None, str]:
    """The fitted ratings written into each bot's standing, or why there are none."""
    played = [b for b in by_name if by_name[b].games > 0]
    if not with_ratings:
        return None, ""
    if len(played) < 2:
        return None, "no ratings yet: fewer than 2 bots have played"
    try:
        ratings = fit_ratings(comps, played, prior=PRIOR)
    except RatingError as exc:
        return None, f"no ratings yet: {exc}"
    for i, n in enumerate(ratings.players):
        by_name[n].elo, by_name[n].err95, by_name[n].flag = ratings.elo[i], ratings.err95[i], ratings.flags[i]
    return ratings, ""


def _ranked(by_name: dict[str, BotStanding], table_size: int) -> list[BotStanding]:
    """By Elo, then score, then name; each with a row for every seat."""

    def key(b: BotStanding) -> tuple[float, float, str]:
        elo = b.elo if not math.isnan(b.elo) else -math.inf
        sc = b.score if not math.isnan(b.score) else -1.0
        return (-elo, -sc, b.name)

    ordered = sorted(by_name.values(), key=key)
    for i, b in enumerate(ordered, start=1):
        b.rank = i
        if len(b.seats) < table_size:
            b.seats.extend(SeatStat() for _ in range(table_size - len(b.seats)))
    return ordered


def from_store(store: Store, with_ratings: bool = True) -> Standings:
    info = store.tournament()
    d = info.definition if info else {}
    st = compute(
        store.games(),
        store.bot_names(),
        name=info.name if info else "",
        game=d.get("game", ""),
        table_size=d.get("table_size", 0),
        fmt=d.get("format", ""),
        scheduled=info.scheduled_games if info else 0,
        with_ratings=with_ratings,
    )
    sealed = store.commitment()
    st.seed = sealed.public() if sealed is not None else None
    return st


def seed_note(st: Standings) -> str:
    """One line on the seed: the commitment, and the seed and salt once revealed."""
    c = st.seed
    if c is None:
        return "no seed commitment in this database"
    if not c["revealed"]:
        return f"seed commitment {c['commitment']}: the seed is revealed when the tournament completes"
    return (
        f"seed {c['seed']}, salt {c['salt']} (commitment {c['commitment']} = sha256 of "
        f"chicago-referee-seed:{c['seed']}:{c['salt']}); results digest {c['results_digest']}"
    )
