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
import html
import io
import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from referee.stats.ratings import (
    Comparison,
    RatingError,
    Ratings,
    comparisons_from_scores,
    fit_ratings,
)
from referee.tournament.store import GameRow, Store

PRIOR = 2.0
RATINGS_NOTE = ("Elo: maximum-likelihood fit of pairwise placements (logistic, 400/ln10 scale), mean 0, "
                f"prior {PRIOR:g} virtual draws; ±95 % relative to the pool mean, clustered by deal set. "
                "Judge two bots by the LOS matrix, not by adding their ± bars. "
                "'>' all wins, '<' all losses (model-based ±).")


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


def _elo(x: float) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:+.0f}"


def _err(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.0f}"


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f}"


def _f(x: float, digits: int = 2) -> str:
    return "-" if math.isnan(x) else f"{x:.{digits}f}"


def _fails(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"


def _finite(x: float, digits: int = 3) -> float | str | None:
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return round(x, digits)


# ------------------------------------------------------------------ rich tables


def _titled(title: str) -> Table:
    """A table at least as wide as its title (so the title stays on one line)."""
    return Table(title=title, title_justify="left", min_width=len(title))


def standings_table(st: Standings, title: str | None = None) -> Table:
    wld = "W-L-D" if st.table_size == 2 else "pair W-L-D"
    table = Table(title=title or f"{st.name}: {st.finished}/{st.scheduled} games", title_justify="left")
    for col in ("#", "bot", "Elo", "±95%", "games", "points", "score %", wld, "1st %", "avg place", "avg pts",
                "failures"):
        table.add_column(col, justify="left" if col in ("bot", "failures") else "right")
    for b in st.bots:
        table.add_row(str(b.rank), b.name + (f" {b.flag}" if b.flag else ""), _elo(b.elo), _err(b.err95),
                      str(b.games), f"{b.points:g}", _pct(b.score), f"{b.pair_wins}-{b.pair_losses}-{b.pair_draws}",
                      _pct(b.wins / b.games if b.games else math.nan), _f(b.avg_place), _f(b.avg_points, 1),
                      str(sum(b.failures.values())) if b.failures else "-")
    return table


def los_table(st: Standings) -> Table | None:
    r = st.ratings
    if r is None:
        return None
    names = [b.name for b in st.bots if b.name in r.players]
    table = _titled("LOS: % chance that the row bot is stronger")
    table.add_column("")
    for n in names:
        table.add_column(n, justify="right")
    for a in names:
        table.add_row(a, *["" if a == b else _pct(r.los(a, b)) for b in names])
    return table


def crosstable_table(st: Standings) -> Table:
    names = [b.name for b in st.bots]
    what = "games" if st.table_size == 2 else "pairwise placements"
    table = _titled(f"Crosstable: row bot's W-L-D ({what})")
    table.add_column("")
    for n in names:
        table.add_column(n, justify="right")
    for a in names:
        cells = []
        for b in names:
            w = st.crosstable.get(a, {}).get(b)
            cells.append("" if a == b else "-" if w is None else f"{w[0]}-{w[1]}-{w[2]}")
        table.add_row(a, *cells)
    return table


def seats_table(st: Standings) -> Table:
    table = _titled("Per seat: avg place (1st %)")
    table.add_column("bot")
    for s in range(st.table_size):
        table.add_column(f"seat {s}", justify="right")
    for b in st.bots:
        table.add_row(b.name, *[f"{_f(x.avg_place)} ({_pct(x.win_rate)})" for x in b.seats[:st.table_size]])
    table.add_row("all bots", *[f"{_f(x.avg_place)} ({_pct(x.win_rate)})" for x in st.seat_totals], style="bold")
    return table


def failures_table(st: Standings) -> Table | None:
    reasons = sorted({r for b in st.bots for r in b.failures})
    if not reasons:
        return None
    table = _titled("Failures by reason")
    table.add_column("bot")
    for r in reasons:
        table.add_column(r, justify="right")
    table.add_column("total", justify="right")
    for b in st.bots:
        table.add_row(b.name, *[str(b.failures.get(r, 0)) for r in reasons], str(sum(b.failures.values())))
    return table


def all_tables(st: Standings) -> list[Any]:
    """Everything `chicago-referee standings` prints, in order."""
    items: list[Any] = [standings_table(st), st.rating_note or RATINGS_NOTE]
    for t in (los_table(st), crosstable_table(st), seats_table(st), failures_table(st)):
        if t is not None:
            items.append(t)
    items.append(seed_note(st))
    return items


def live_table(st: Standings, running: int = 0) -> Table:
    """The compact table shown under the progress bar while a tournament runs."""
    title = f"{st.finished}/{st.scheduled} games" + (f", {running} running" if running else "")
    table = Table(title=title, title_justify="left")
    for col in ("#", "bot", "Elo", "±95%", "games", "score %", "1st %", "failures"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for b in st.bots:
        table.add_row(str(b.rank), b.name + (f" {b.flag}" if b.flag else ""), _elo(b.elo), _err(b.err95),
                      str(b.games), _pct(b.score), _pct(b.wins / b.games if b.games else math.nan),
                      str(sum(b.failures.values())) if b.failures else "-")
    return table


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


# ------------------------------------------------------------------ HTML


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;white-space:nowrap}
th{background:#f2f2f2}td.l,th.l{text-align:left}
tr:nth-child(even) td{background:#fafafa}
.note{color:#555;font-size:.9em;max-width:60em}
svg text{font:12px system-ui,sans-serif}
.los-hi{background:#d7f0d7!important}.los-lo{background:#f6d7d7!important}
details{margin:.5em 0}
"""


def _nice_step(span: float) -> float:
    raw = span / 6 if span > 0 else 50
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def elo_chart_svg(st: Standings) -> str:
    """Inline SVG: each bot's Elo as a dot with its ±95 % bar."""
    bots = [b for b in st.bots if math.isfinite(b.elo)]
    if not bots:
        return "<p class='note'>No ratings yet.</p>"
    lo = min(b.elo - (b.err95 if math.isfinite(b.err95) else 0) for b in bots)
    hi = max(b.elo + (b.err95 if math.isfinite(b.err95) else 0) for b in bots)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    step = _nice_step(hi - lo)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    if hi <= lo:
        hi = lo + step
    left, right, row, top = 170, 150, 26, 28
    width = 760
    plot = width - left - right
    height = top + row * len(bots) + 10

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="Elo ratings with 95% error bars">']
    v = lo
    while v <= hi + 1e-9:
        xv = x(v)
        parts.append(f'<line x1="{xv:.1f}" y1="{top - 8}" x2="{xv:.1f}" y2="{height - 6}" '
                     f'stroke="{"#888" if abs(v) < 1e-9 else "#e3e3e3"}" stroke-width="1"/>')
        tick = "0" if abs(v) < 1e-9 else f"{v:+.0f}"
        parts.append(f'<text x="{xv:.1f}" y="{top - 12}" text-anchor="middle" fill="#666">{tick}</text>')
        v += step
    for i, b in enumerate(bots):
        y = top + row * i + row / 2
        parts.append(f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{html.escape(b.name)}</text>')
        if math.isfinite(b.err95):
            x1, x2 = x(b.elo - b.err95), x(b.elo + b.err95)
            parts.append(f'<line x1="{x1:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y:.1f}" stroke="#3366aa" '
                         'stroke-width="2"/>')
            for xe in (x1, x2):
                parts.append(f'<line x1="{xe:.1f}" y1="{y - 5:.1f}" x2="{xe:.1f}" y2="{y + 5:.1f}" '
                             'stroke="#3366aa" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(b.elo):.1f}" cy="{y:.1f}" r="4.5" fill="#aa3333"/>')
        label = f"{_elo(b.elo)} ± {_err(b.err95)}" + (f" {b.flag}" if b.flag else "")
        parts.append(f'<text x="{left + plot + 10}" y="{y + 4:.1f}">{html.escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _html_table(head: list[str], rows: list[list[str]], left_cols: int = 1) -> str:
    out = ["<table><thead><tr>"]
    out += [f'<th class="{"l" if i < left_cols else ""}">{h}</th>' for i, h in enumerate(head)]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(
            c if c.startswith("<td") else f'<td class="{"l" if i < left_cols else ""}">{c}</td>'
            for i, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def to_html(st: Standings, store: Store | None = None, out_path: Path | None = None) -> str:
    """A self-contained report page (no scripts, no external files)."""
    e = html.escape
    names = [b.name for b in st.bots]
    body: list[str] = [f"<h1>{e(st.name)}</h1>",
                       f"<p>{e(st.game)}, {e(st.format)}, {st.table_size} seats per table: "
                       f"{st.finished} of {st.scheduled} scheduled games finished.</p>"]
    body.append("<h2>Standings</h2>")
    body.append(elo_chart_svg(st))
    wld = "W-L-D" if st.table_size == 2 else "pair W-L-D"
    body.append(_html_table(
        ["#", "bot", "Elo", "±95%", "games", "points", "score %", wld, "1st %", "avg place", "avg pts", "failures"],
        [[str(b.rank), e(b.name + (f" {b.flag}" if b.flag else "")), _elo(b.elo), _err(b.err95), str(b.games),
          f"{b.points:g}", _pct(b.score), f"{b.pair_wins}-{b.pair_losses}-{b.pair_draws}",
          _pct(b.wins / b.games if b.games else math.nan), _f(b.avg_place), _f(b.avg_points, 1),
          e(_fails(b.failures))] for b in st.bots], left_cols=2))
    body.append(f"<p class='note'>{e(st.rating_note or RATINGS_NOTE)}</p>")
    r = st.ratings
    if r is not None:
        rated = [n for n in names if n in r.players]
        rows = []
        for a in rated:
            cells = [e(a)]
            for b in rated:
                if a == b:
                    cells.append("")
                    continue
                p = r.los(a, b)
                cls = "los-hi" if p >= 0.95 else "los-lo" if p <= 0.05 else ""
                cells.append(f'<td class="{cls}">{_pct(p)}</td>')
            rows.append(cells)
        body.append("<h2>Likelihood of superiority</h2><p class='note'>% probability that the row bot is "
                    "stronger than the column bot.</p>")
        body.append(_html_table([""] + [e(n) for n in rated], rows))
    body.append("<h2>Crosstable</h2><p class='note'>W-L-D of the row bot against the column bot"
                f"{'' if st.table_size == 2 else ' (pairwise placements at shared tables)'}.</p>")
    rows = []
    for a in names:
        cells = [e(a)]
        for b in names:
            w = st.crosstable.get(a, {}).get(b)
            cells.append("" if a == b else "-" if w is None else f"{w[0]}-{w[1]}-{w[2]}")
        rows.append(cells)
    body.append(_html_table([""] + [e(n) for n in names], rows))
    body.append("<h2>Per seat</h2><p class='note'>Average place (1st-place %).</p>")
    seat_rows = [[e(b.name)] + [f"{_f(x.avg_place)} ({_pct(x.win_rate)})" for x in b.seats[:st.table_size]]
                 for b in st.bots]
    seat_rows.append(["<b>all bots</b>"] + [f"{_f(x.avg_place)} ({_pct(x.win_rate)})" for x in st.seat_totals])
    body.append(_html_table(["bot"] + [f"seat {s}" for s in range(st.table_size)], seat_rows))
    reasons = sorted({x for b in st.bots for x in b.failures})
    if reasons:
        body.append("<h2>Failures by reason</h2>")
        body.append(_html_table(["bot", *map(e, reasons), "total"],
                                [[e(b.name), *[str(b.failures.get(x, 0)) for x in reasons],
                                  str(sum(b.failures.values()))] for b in st.bots]))
    body.append(f"<h2>Seed</h2><p class='note'>{e(seed_note(st))}</p>")
    body.append(_games_html(st, store, out_path))
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{e(st.name)}: standings</title><style>{_CSS}</style></head><body>"
            + "\n".join(body) + "</body></html>\n")


def _games_html(st: Standings, store: Store | None, out_path: Path | None) -> str:
    e = html.escape
    base = out_path.resolve().parent if out_path is not None else None
    rows = []
    replays = 0
    for g in st.games:
        links = ""
        if store is not None and g.log_path:
            log = store.abs_path(g.log_path)
            assert log is not None
            page = log.with_suffix(".html")
            if page.exists():
                replays += 1
                links = f'<a href="{e(_href(page, base))}">replay</a> '
            links += f'<a href="{e(_href(log, base))}">log</a>'
        seats = ", ".join(f"{e(n)} {s} ({p})" for n, s, p in zip(g.seats, g.scores, g.placements))
        fails = ", ".join(f"{e(f.bot)}: {e(f.reason)}" for f in g.failures) or ""
        rows.append([str(g.game_id), e(g.table_key), str(g.deal_set), seats, e(g.reason), fails, links])
    table = _html_table(["id", "table", "deal set", "seats: score (place)", "end", "failures", "links"],
                        [[r[0], f'<td class="l">{r[1]}</td>', r[2], *[f'<td class="l">{c}</td>' for c in r[3:]]]
                         for r in rows], left_cols=0)
    return (f"<h2>Games</h2><details{' open' if len(rows) <= 60 else ''}><summary>{len(rows)} games"
            f"{f', {replays} with replay pages' if replays else ''}</summary>{table}</details>")


def _href(target: Path, base: Path | None) -> str:
    if base is None:
        return target.resolve().as_uri()
    rel = os.path.relpath(target.resolve(), base)
    return "/".join(rel.split(os.sep))
