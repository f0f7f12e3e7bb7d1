"""Tournament standings from the results database: ratings with error bars,
LOS matrix, crosstable, per-seat results, failures; as rich tables, JSON,
CSV and a self-contained HTML report.

Ratings (docs/ratings.md): every table's final placements are broken into
pairwise comparisons (`comparisons_from_scores`), clustered by deal set of a
table (the games of one deal set share their cards, so they are not
independent), and fitted at once by maximum likelihood with 2 virtual draws
per bot (`fit_ratings`). Elo is centred on the pool mean.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from referee.stats.mle import Comparison, Ratings, comparisons_from_scores, fit_ratings
from referee.stats.ratings import RatingError
from referee.tournament.store import GameRow, Store
from referee.visible import visible

PRIOR = 2.0
RATINGS_NOTE = ("Elo: maximum-likelihood fit of pairwise placements (logistic, 400/ln10 scale), mean 0, "
                f"prior {PRIOR:g} virtual draws; ±95 % relative to the pool mean, clustered by deal set. "
                "Judge two bots by the LOS matrix, not by adding their ± bars. "
                "'>' all wins, '<' all losses (model-based ±).")


def shown(name: str) -> str:
    """A bot name for a table or a line: its control characters visible, its brackets not markup."""
    return escape(visible(name))


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


def compute(rows: list[GameRow], bots: list[str], *, name: str = "", game: str = "", table_size: int = 0,
            fmt: str = "", scheduled: int = 0, with_ratings: bool = True) -> Standings:
    by_name = {b: BotStanding(name=b) for b in bots}
    k = table_size or max((len(g.seats) for g in rows), default=0)
    seat_totals = [SeatStat() for _ in range(k)]
    cross: dict[str, dict[str, list[int]]] = {b: {} for b in bots}
    for g in rows:
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
                stat.games += 1
                stat.wins += won
                stat.no_results += none
                stat.place_sum += place
                stat.score_sum += points
        for f in g.failures:
            by_name[f.bot].failures[f.reason] += 1
    comps = comparisons(rows)
    for c in comps:
        a, b = by_name[c.a], by_name[c.b]
        wld_a = cross.setdefault(c.a, {}).setdefault(c.b, [0, 0, 0])
        wld_b = cross.setdefault(c.b, {}).setdefault(c.a, [0, 0, 0])
        if c.score_a == 1.0:
            a.pair_wins += 1
            b.pair_losses += 1
            wld_a[0] += 1
            wld_b[1] += 1
        elif c.score_a == 0.0:
            a.pair_losses += 1
            b.pair_wins += 1
            wld_a[1] += 1
            wld_b[0] += 1
        else:
            a.pair_draws += 1
            b.pair_draws += 1
            wld_a[2] += 1
            wld_b[2] += 1
    ratings, note = None, ""
    played = [b for b in by_name if by_name[b].games > 0]
    if with_ratings:
        if len(played) < 2:
            note = "no ratings yet: fewer than 2 bots have played"
        else:
            try:
                ratings = fit_ratings(comps, played, prior=PRIOR)
            except RatingError as exc:
                note = f"no ratings yet: {exc}"
    if ratings is not None:
        for i, n in enumerate(ratings.players):
            by_name[n].elo, by_name[n].err95, by_name[n].flag = ratings.elo[i], ratings.err95[i], ratings.flags[i]

    def key(b: BotStanding) -> tuple[float, float, str]:
        elo = b.elo if not math.isnan(b.elo) else -math.inf
        sc = b.score if not math.isnan(b.score) else -1.0
        return (-elo, -sc, b.name)

    ordered = sorted(by_name.values(), key=key)
    for i, b in enumerate(ordered, start=1):
        b.rank = i
        if len(b.seats) < k:
            b.seats.extend(SeatStat() for _ in range(k - len(b.seats)))
    return Standings(name=name, game=game, table_size=k, format=fmt, scheduled=scheduled, finished=len(rows),
                     bots=ordered, ratings=ratings, rating_note=note, crosstable=cross, seat_totals=seat_totals,
                     games=rows)


def from_store(store: Store, with_ratings: bool = True) -> Standings:
    info = store.tournament()
    d = info.definition if info else {}
    st = compute(store.games(), store.bot_names(), name=info.name if info else "", game=d.get("game", ""),
                 table_size=d.get("table_size", 0), fmt=d.get("format", ""),
                 scheduled=info.scheduled_games if info else 0, with_ratings=with_ratings)
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
    return (f"seed {c['seed']}, salt {c['salt']} (commitment {c['commitment']} = sha256 of "
            f"chicago-referee-seed:{c['seed']}:{c['salt']}); results digest {c['results_digest']}")


# ------------------------------------------------------------------ formatting helpers


def fmt_elo(x: float) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:+.0f}"


def fmt_err(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.0f}"


def fmt_pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f}"


def fmt_num(x: float, digits: int = 2) -> str:
    return "-" if math.isnan(x) else f"{x:.{digits}f}"


def fmt_failures(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"


def _finite(x: float, digits: int = 3) -> float | None:
    """JSON numbers are numbers: an undefined or unbounded value is null (the
    bot's `flag`, '>' or '<', says when its Elo is unbounded)."""
    return round(x, digits) if math.isfinite(x) else None


# ------------------------------------------------------------------ rich tables


def _titled(title: str) -> Table:
    """A table at least as wide as its title (so the title stays on one line)."""
    return Table(title=title, title_justify="left", min_width=len(title), box=box.SIMPLE_HEAD, pad_edge=False)


def table_width(table: Table) -> int:
    """The width `table` needs to show every cell whole."""
    return Console(width=100_000).measure(table).maximum


def fitted(build: Callable[[list[str]], Table], columns: list[str], droppable: Sequence[str], width: int) -> Table:
    """The table `build(columns)` made to fit `width`: the `droppable` columns
    go, least important first, until it fits; nothing is ever cut."""
    columns = list(columns)
    while True:
        table = build(columns)
        left = [c for c in droppable if c in columns]
        if not left or table_width(table) <= width:
            return table
        columns.remove(left[0])


_STANDING_COLUMNS = ["#", "bot", "Elo", "", "±95%", "games", "points", "score %", "W-L-D", "1st %", "avg place",
                     "avg pts", "failures"]
_DROP_FIRST = ["avg pts", "points", "1st %", "W-L-D", "avg place", "games"]


def _standing_cells(st: Standings, b: BotStanding) -> dict[str, str]:
    return {
        "#": str(b.rank), "bot": shown(b.name), "Elo": fmt_elo(b.elo), "": b.flag or "", "±95%": fmt_err(b.err95),
        "games": str(b.games), "points": f"{b.points:g}", "score %": fmt_pct(b.score),
        "W-L-D": f"{b.pair_wins}-{b.pair_losses}-{b.pair_draws}",
        "1st %": fmt_pct(b.wins / b.games if b.games else math.nan), "avg place": fmt_num(b.avg_place),
        "avg pts": fmt_num(b.avg_points, 1), "failures": str(sum(b.failures.values())) if b.failures else "-",
    }


def _bots_table(st: Standings, title: str, columns: list[str], droppable: list[str], width: int) -> Table:
    wld = "W-L-D" if st.table_size == 2 else "pair W-L-D"

    def build(kept: list[str]) -> Table:
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for col in kept:
            table.add_column(wld if col == "W-L-D" else col, justify="left" if col in ("bot", "") else "right",
                             no_wrap=True)
        for bot in st.bots:
            cells = _standing_cells(st, bot)
            table.add_row(*(cells[c] for c in kept))
        return table

    return fitted(build, columns, droppable, width)


def standings_table(st: Standings, title: str | None = None, width: int = 80) -> Table:
    return _bots_table(st, title or f"{st.name}: {st.finished}/{st.scheduled} games", _STANDING_COLUMNS,
                       _DROP_FIRST, width)


def _matrix(st: Standings, title: str, names: list[str], cell: Callable[[str, str], str], width: int) -> Any:
    """A bots x bots table. Columns are headed by the row number of each bot
    (names would not fit); past the width it becomes one line per pair."""
    table = _titled(title)
    table.add_column("")
    table.add_column("bot", no_wrap=True)
    for i, _ in enumerate(names, start=1):
        table.add_column(str(i), justify="right", no_wrap=True)
    for i, a in enumerate(names, start=1):
        table.add_row(str(i), shown(a), *[cell(a, b) for b in names])
    if table_width(table) <= width:
        return table
    lines = [title]
    for a in names:
        pairs = ", ".join(f"{shown(b)} {cell(a, b)}" for b in names if b != a and cell(a, b) not in ("", "-"))
        lines.append(f"  {shown(a)}: {pairs or '-'}")
    return "\n".join(lines)


def los_table(st: Standings, width: int = 80) -> Any:
    r = st.ratings
    if r is None:
        return None
    names = [b.name for b in st.bots if b.name in r.players]
    return _matrix(st, "LOS: % chance that the row bot is stronger than the column bot", names,
                   lambda a, b: "" if a == b else fmt_pct(r.los(a, b)), width)


def crosstable_table(st: Standings, width: int = 80) -> Any:
    names = [b.name for b in st.bots]
    what = "games" if st.table_size == 2 else "pairwise placements"

    def cell(a: str, b: str) -> str:
        w = st.crosstable.get(a, {}).get(b)
        return "" if a == b else "-" if w is None else f"{w[0]}-{w[1]}-{w[2]}"

    return _matrix(st, f"Crosstable: row bot's W-L-D against the column bot ({what})", names, cell, width)


def seats_table(st: Standings) -> Table:
    table = _titled("Per seat: avg place (1st %)")
    table.add_column("bot", no_wrap=True)
    for s in range(st.table_size):
        table.add_column(f"seat {s}", justify="right", no_wrap=True)
    for b in st.bots:
        table.add_row(shown(b.name), *[f"{fmt_num(x.avg_place)} ({fmt_pct(x.win_rate)})" for x in b.seats[:st.table_size]])
    table.add_row("all bots", *[f"{fmt_num(x.avg_place)} ({fmt_pct(x.win_rate)})" for x in st.seat_totals], style="bold")
    return table


def failures_table(st: Standings) -> Any:
    """One line per bot and reason code: reason codes are shown whole."""
    if not any(b.failures for b in st.bots):
        return None
    lines = ["Failures by reason"]
    for b in st.bots:
        if b.failures:
            lines.append(f"  {shown(b.name)}: " + ", ".join(f"{k} {v}" for k, v in sorted(b.failures.items())))
    return "\n".join(lines)


def all_tables(st: Standings, width: int = 80) -> list[Any]:
    """Everything `chicago-referee standings` prints, in order, fitted to `width`."""
    items: list[Any] = [standings_table(st, width=width), st.rating_note or RATINGS_NOTE]
    for t in (los_table(st, width), crosstable_table(st, width), seats_table(st), failures_table(st)):
        if t is not None:
            items.append(t)
    items.append(seed_note(st))
    return items


def live_table(st: Standings, running: int = 0, width: int = 80, in_flight: dict[str, int] | None = None) -> Table:
    """The compact table shown under the progress bar while a tournament runs
    (with workers: how many games each is playing)."""
    title = f"{st.finished}/{st.scheduled} games" + (f", {running} running" if running else "")
    if in_flight and set(in_flight) != {"local"}:
        title += " (" + ", ".join(f"{name} {n}" for name, n in sorted(in_flight.items())) + ")"
    return _bots_table(st, title, ["#", "bot", "Elo", "", "±95%", "games", "score %", "1st %", "failures"],
                       ["1st %", "games"], width)


# ------------------------------------------------------------------ JSON / CSV


def to_dict(st: Standings) -> dict[str, Any]:
    r = st.ratings
    out: dict[str, Any] = {
        "tournament": st.name, "game": st.game, "format": st.format, "table_size": st.table_size,
        "scheduled_games": st.scheduled, "finished_games": st.finished,
        "ratings_note": st.rating_note or RATINGS_NOTE,
        "standings": [{
            "rank": b.rank, "bot": b.name, "elo": _finite(b.elo), "err95": _finite(b.err95), "flag": b.flag,
            "games": b.games, "points": b.points, "pair_games": b.pair_games, "score": _finite(b.score, 6),
            "pair_wins": b.pair_wins, "pair_losses": b.pair_losses, "pair_draws": b.pair_draws,
            "wins": b.wins, "no_results": b.no_results, "avg_place": _finite(b.avg_place, 4), "avg_points": _finite(b.avg_points, 4),
            "failures": dict(sorted(b.failures.items())),
            "seats": [{"seat": s, "games": x.games, "wins": x.wins, "avg_place": _finite(x.avg_place, 4)}
                      for s, x in enumerate(b.seats)],
        } for b in st.bots],
        "los": None,
        "crosstable": {a: {b: {"w": w[0], "l": w[1], "d": w[2]} for b, w in sorted(row.items())}
                       for a, row in st.crosstable.items() if row},
        "seat_totals": [{"seat": s, "games": x.games, "wins": x.wins, "avg_place": _finite(x.avg_place, 4)}
                        for s, x in enumerate(st.seat_totals)],
        "seed": st.seed,
    }
    if r is not None:
        out["los"] = {a: {b: _finite(r.los(a, b), 6) for b in r.players if b != a} for a in r.players}
    return out


CSV_COLUMNS = ("rank", "bot", "elo", "err95", "flag", "games", "points", "score_pct", "pair_wins", "pair_losses",
               "pair_draws", "wins", "avg_place", "avg_points", "failures")


def to_csv(st: Standings) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for b in st.bots:
        w.writerow([b.rank, b.name, _csvnum(b.elo, 1), _csvnum(b.err95, 1), b.flag, b.games, f"{b.points:g}",
                    _csvnum(100 * b.score, 2), b.pair_wins, b.pair_losses, b.pair_draws, b.wins,
                    _csvnum(b.avg_place, 3), _csvnum(b.avg_points, 2), sum(b.failures.values())])
    return buf.getvalue()


def _csvnum(x: float, digits: int) -> str:
    return "" if not math.isfinite(x) else f"{x:.{digits}f}"
