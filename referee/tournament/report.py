"""The standings as a self-contained HTML report (no scripts, no external
files): what was played and how, the Elo chart, standings, LOS, crosstable,
per-seat results, failures, the seed, and every game linked to its replay page."""

from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path

import msgspec

from protocol.messages import TimeControl
from referee.errors import RefereeError
from referee.games import get_game
from referee.games.rules import rules_diff
from referee.seats.clock import format_time_control
from referee.tournament.standings import RATINGS_NOTE, Standings, seed_note
from referee.tournament.standings_tables import fmt_elo, fmt_err, fmt_failures, fmt_num, fmt_pct
from referee.tournament.store import Store

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
table.about th,table.about td{text-align:left}table.about td{white-space:normal;overflow-wrap:anywhere}
.flag{color:#777;font-size:.9em}
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

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="Elo ratings with 95% error bars">'
    ]
    v = lo
    while v <= hi + 1e-9:
        xv = x(v)
        parts.append(
            f'<line x1="{xv:.1f}" y1="{top - 8}" x2="{xv:.1f}" y2="{height - 6}" '
            f'stroke="{"#888" if abs(v) < 1e-9 else "#e3e3e3"}" stroke-width="1"/>'
        )
        tick = "0" if abs(v) < 1e-9 else f"{v:+.0f}"
        parts.append(f'<text x="{xv:.1f}" y="{top - 12}" text-anchor="middle" fill="#666">{tick}</text>')
        v += step
    for i, b in enumerate(bots):
        y = top + row * i + row / 2
        parts.append(f'<text x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{html.escape(b.name)}</text>')
        if math.isfinite(b.err95):
            x1, x2 = x(b.elo - b.err95), x(b.elo + b.err95)
            parts.append(
                f'<line x1="{x1:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y:.1f}" stroke="#3366aa" stroke-width="2"/>'
            )
            for xe in (x1, x2):
                parts.append(
                    f'<line x1="{xe:.1f}" y1="{y - 5:.1f}" x2="{xe:.1f}" y2="{y + 5:.1f}" '
                    'stroke="#3366aa" stroke-width="2"/>'
                )
        parts.append(f'<circle cx="{x(b.elo):.1f}" cy="{y:.1f}" r="4.5" fill="#aa3333"/>')
        label = f"{fmt_elo(b.elo)} ± {fmt_err(b.err95)}" + (f" {b.flag}" if b.flag else "")
        parts.append(f'<text x="{left + plot + 10}" y="{y + 4:.1f}">{html.escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _html_table(head: list[str], rows: list[list[str]], left_cols: int = 1) -> str:
    out = ["<table><thead><tr>"]
    out += [f'<th class="{"l" if i < left_cols else ""}">{h}</th>' for i, h in enumerate(head)]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append(
            "<tr>"
            + "".join(
                c if c.startswith("<td") else f'<td class="{"l" if i < left_cols else ""}">{c}</td>'
                for i, c in enumerate(r)
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def to_html(st: Standings, store: Store | None = None, out_path: Path | None = None) -> str:
    """A self-contained report page (no scripts, no external files)."""
    e = html.escape
    body = [
        f"<h1>{e(st.name)}</h1>",
        _about_html(st, store),
        "<h2>Standings</h2>",
        elo_chart_svg(st),
        _standings_html(st),
        f"<p class='note'>{e(st.rating_note or RATINGS_NOTE)}</p>",
        _los_html(st),
        _crosstable_html(st),
        _seats_html(st),
        _failures_html(st),
        f"<h2>Seed</h2><p class='note'>{e(seed_note(st))}</p>",
        _games_html(st, store, out_path),
    ]
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{e(st.name)}: standings</title><style>{_CSS}</style></head><body>"
        + "\n".join(part for part in body if part)
        + "</body></html>\n"
    )


def _standings_html(st: Standings) -> str:
    e = html.escape
    wld = "W-L-D" if st.table_size == 2 else "pair W-L-D"
    return _html_table(
        ["#", "bot", "Elo", "±95%", "games", "points", "score %", wld, "1st %", "avg place", "avg pts", "failures"],
        [
            [
                str(b.rank),
                e(b.name),
                fmt_elo(b.elo) + (f" <span class='flag'>{e(b.flag)}</span>" if b.flag else ""),
                fmt_err(b.err95),
                str(b.games),
                f"{b.points:g}",
                fmt_pct(b.score),
                f"{b.pair_wins}-{b.pair_losses}-{b.pair_draws}",
                fmt_pct(b.wins / b.games if b.games else math.nan),
                fmt_num(b.avg_place),
                fmt_num(b.avg_points, 1),
                e(fmt_failures(b.failures)),
            ]
            for b in st.bots
        ],
        left_cols=2,
    )


def _los_html(st: Standings) -> str:
    """The LOS matrix, confident cells marked; '' without ratings."""
    r = st.ratings
    if r is None:
        return ""
    e = html.escape
    rated = [b.name for b in st.bots if b.name in r.players]

    def cell(a: str, b: str) -> str:
        if a == b:
            return ""
        p = r.los(a, b)
        cls = "los-hi" if p >= 0.95 else "los-lo" if p <= 0.05 else ""
        return f'<td class="{cls}">{fmt_pct(p)}</td>'

    return (
        "<h2>Likelihood of superiority</h2><p class='note'>% probability that the row bot is "
        "stronger than the column bot.</p>\n"
        + _html_table([""] + [e(n) for n in rated], [[e(a), *(cell(a, b) for b in rated)] for a in rated])
    )


def _crosstable_html(st: Standings) -> str:
    e = html.escape
    names = [b.name for b in st.bots]

    def cell(a: str, b: str) -> str:
        w = st.crosstable.get(a, {}).get(b)
        return "" if a == b else "-" if w is None else f"{w[0]}-{w[1]}-{w[2]}"

    return (
        "<h2>Crosstable</h2><p class='note'>W-L-D of the row bot against the column bot"
        f"{'' if st.table_size == 2 else ' (pairwise placements at shared tables)'}.</p>\n"
        + _html_table([""] + [e(n) for n in names], [[e(a), *(cell(a, b) for b in names)] for a in names])
    )


def _seats_html(st: Standings) -> str:
    e = html.escape
    seat_rows = [
        [e(b.name)] + [f"{fmt_num(x.avg_place)} ({fmt_pct(x.win_rate)})" for x in b.seats[: st.table_size]]
        for b in st.bots
    ]
    seat_rows.append(["<b>all bots</b>"] + [f"{fmt_num(x.avg_place)} ({fmt_pct(x.win_rate)})" for x in st.seat_totals])
    return "<h2>Per seat</h2><p class='note'>Average place (1st-place %).</p>\n" + _html_table(
        ["bot"] + [f"seat {s}" for s in range(st.table_size)], seat_rows
    )


def _failures_html(st: Standings) -> str:
    """Failures by bot and reason code; '' when nobody failed."""
    e = html.escape
    reasons = sorted({x for b in st.bots for x in b.failures})
    if not reasons:
        return ""
    return "<h2>Failures by reason</h2>\n" + _html_table(
        ["bot", *map(e, reasons), "total"],
        [[e(b.name), *[str(b.failures.get(x, 0)) for x in reasons], str(sum(b.failures.values()))] for b in st.bots],
    )


def _about_html(st: Standings, store: Store | None) -> str:
    """What was played, when, under which rules and clock, and from which seed."""
    e = html.escape
    info = store.tournament() if store is not None else None
    d = info.definition if info is not None else {}
    try:
        game = get_game(st.game)
        title = game.title
        rules = rules_diff(game, msgspec.convert(d["rules"], type=game.rules_type)) if d.get("rules") else {}
    except (RefereeError, KeyError, msgspec.ValidationError):
        title, rules = st.game, {}
    rows = [
        ("game", f"{title}, {st.format}, {st.table_size} seats per table"),
        ("games", f"{st.finished} of {st.scheduled} scheduled games finished"),
    ]
    runs = store.runs() if store is not None else []
    if runs:
        first, last = runs[0].started_at[:16].replace("T", " "), (runs[-1].ended_at or runs[-1].started_at)[:16]
        rows.append(
            ("played", f"{first} to {last.replace('T', ' ')} UTC ({len(runs)} run{'s' if len(runs) != 1 else ''})")
        )
    if d.get("time_control"):
        try:
            rows.append(("time control", format_time_control(msgspec.convert(d["time_control"], type=TimeControl))))
        except msgspec.ValidationError:
            pass
    rows.append(("rules", ", ".join(f"{k} = {json.dumps(v)}" for k, v in rules.items()) or "the defaults"))
    if d.get("failure_policy"):
        fp = d["failure_policy"]
        rows.append(
            (
                "failures",
                fp.get("mode", "") + (f", {fp.get('max_strikes')} strikes" if fp.get("mode") == "substitute" else ""),
            )
        )
    rows.append(("seed", seed_note(st)))
    return "<table class='about'>" + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows) + "</table>"


MAX_REPLAY_PAGES = 1000


def write_replay_pages(st: Standings, store: Store, limit: int = MAX_REPLAY_PAGES) -> tuple[int, int]:
    """Write the HTML replay of each finished game beside its log (once), so the
    report links a page a person can watch, not the raw JSON. Returns (pages
    written now, games left without a page because of `limit`)."""
    from referee.replay.html import write_html

    written = skipped = 0
    for g in st.games:
        log = store.abs_path(g.log_path) if g.log_path else None
        if log is None or not log.exists():
            continue
        page = log.with_suffix(".html")
        if page.exists():
            continue
        if written >= limit:
            skipped += 1
            continue
        try:
            write_html(log, page)
        except RefereeError:
            continue  # a log that does not re-simulate keeps its raw link; `verify` names it
        written += 1
    return written, skipped


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
    table = _html_table(
        ["id", "table", "deal set", "seats: score (place)", "end", "failures", "links"],
        [[r[0], f'<td class="l">{r[1]}</td>', r[2], *[f'<td class="l">{c}</td>' for c in r[3:]]] for r in rows],
        left_cols=0,
    )
    return (
        f"<h2>Games</h2><details{' open' if len(rows) <= 60 else ''}><summary>{len(rows)} games"
        f"{f', {replays} with replay pages' if replays else ''}</summary>{table}</details>"
    )


def _href(target: Path, base: Path | None) -> str:
    if base is None:
        return target.resolve().as_uri()
    rel = os.path.relpath(target.resolve(), base)
    return "/".join(rel.split(os.sep))
