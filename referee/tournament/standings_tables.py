"""The standings as the terminal shows them: rich tables fitted to the
terminal's width (columns dropped, least important first; nothing cut), the
LOS matrix and crosstable, per-seat results and failures, and the compact
table under a running tournament's progress bar."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from referee.tournament.standings import RATINGS_NOTE, BotStanding, Standings, seed_note
from referee.visible import visible


def shown(name: str) -> str:
    """A bot name for a table or a line: its control characters visible, its brackets not markup."""
    return escape(visible(name))


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


_STANDING_COLUMNS = [
    "#",
    "bot",
    "Elo",
    "",
    "±95%",
    "games",
    "points",
    "score %",
    "W-L-D",
    "1st %",
    "avg place",
    "avg pts",
    "failures",
]
_DROP_FIRST = ["avg pts", "points", "1st %", "W-L-D", "avg place", "games"]


def _standing_cells(st: Standings, b: BotStanding) -> dict[str, str]:
    return {
        "#": str(b.rank),
        "bot": shown(b.name),
        "Elo": fmt_elo(b.elo),
        "": b.flag or "",
        "±95%": fmt_err(b.err95),
        "games": str(b.games),
        "points": f"{b.points:g}",
        "score %": fmt_pct(b.score),
        "W-L-D": f"{b.pair_wins}-{b.pair_losses}-{b.pair_draws}",
        "1st %": fmt_pct(b.wins / b.games if b.games else math.nan),
        "avg place": fmt_num(b.avg_place),
        "avg pts": fmt_num(b.avg_points, 1),
        "failures": str(sum(b.failures.values())) if b.failures else "-",
    }


def _bots_table(st: Standings, title: str, columns: list[str], droppable: list[str], width: int) -> Table:
    wld = "W-L-D" if st.table_size == 2 else "pair W-L-D"

    def build(kept: list[str]) -> Table:
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for col in kept:
            table.add_column(
                wld if col == "W-L-D" else col, justify="left" if col in ("bot", "") else "right", no_wrap=True
            )
        for bot in st.bots:
            cells = _standing_cells(st, bot)
            table.add_row(*(cells[c] for c in kept))
        return table

    return fitted(build, columns, droppable, width)


def standings_table(st: Standings, title: str | None = None, width: int = 80) -> Table:
    return _bots_table(
        st, title or f"{st.name}: {st.finished}/{st.scheduled} games", _STANDING_COLUMNS, _DROP_FIRST, width
    )


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
    return _matrix(
        st,
        "LOS: % chance that the row bot is stronger than the column bot",
        names,
        lambda a, b: "" if a == b else fmt_pct(r.los(a, b)),
        width,
    )


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
        table.add_row(
            shown(b.name), *[f"{fmt_num(x.avg_place)} ({fmt_pct(x.win_rate)})" for x in b.seats[: st.table_size]]
        )
    table.add_row(
        "all bots", *[f"{fmt_num(x.avg_place)} ({fmt_pct(x.win_rate)})" for x in st.seat_totals], style="bold"
    )
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
    return _bots_table(
        st, title, ["#", "bot", "Elo", "", "±95%", "games", "score %", "1st %", "failures"], ["1st %", "games"], width
    )
