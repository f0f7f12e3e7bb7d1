"""What the arena's pages show, read from its database: plain data for the
templates, nothing rendered here (the templates escape).

Every function takes a connection and runs on a worker thread with the
site's own read-only connection, so a page, however large, never holds the
lock the games write through.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from referee.arena.board import bot_page, game_dict, leaderboard, names
from referee.arena.controls import read_controls
from referee.arena.submissions import Submission, private_fields, submissions_of, submissions_of_bot
from referee.arena.units import newest_games, rating_history
from referee.stats.ratings import RatingError, set_stats

CHART_W, CHART_H = 640, 200
LATEST_GAMES = 20


def age_text(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def board_view(conn: sqlite3.Connection, configured_close: datetime | None = None) -> dict[str, Any]:
    """The leaderboard with each version's age, the games played in all, and
    the host's switches (matchmaking, when submissions close)."""
    board = leaderboard(conn)
    board.update(read_controls(conn, configured_close).as_dict(time.time()))
    now = time.time()
    for e in board["bots"]:
        since = e["active_since"]
        age = now - datetime.fromisoformat(since).timestamp() if since else 0.0
        e["age_s"], e["age"] = round(age), age_text(age)
    board["games_played"] = conn.execute("SELECT count(*) FROM games").fetchone()[0]
    return board


@dataclass(frozen=True)
class Chart:
    """An SVG line of mu after each unit, with mu ± 2 sigma as a band."""

    width: int
    height: int
    line: str
    band: str
    ticks: list[tuple[float, str]]
    units: int


def rating_chart(history: list[tuple[int, float, float]]) -> Chart | None:
    if not history:
        return None
    lows = [mu - 2 * sigma for _order, mu, sigma in history]
    highs = [mu + 2 * sigma for _order, mu, sigma in history]
    top, bottom = max(highs), min(lows)
    span = (top - bottom) or 1.0
    n = len(history)

    def x(i: int) -> float:
        return round(30 + (CHART_W - 40) * (i / (n - 1) if n > 1 else 0.5), 1)

    def y(v: float) -> float:
        return round(10 + (CHART_H - 30) * (top - v) / span, 1)

    line = " ".join(f"{x(i)},{y(mu)}" for i, (_o, mu, _s) in enumerate(history))
    upper = [f"{x(i)},{y(v)}" for i, v in enumerate(highs)]
    lower = [f"{x(i)},{y(v)}" for i, v in reversed(list(enumerate(lows)))]
    ticks = [(y(v) + 4, f"{v:.0f}") for v in (top, (top + bottom) / 2, bottom)]
    return Chart(CHART_W, CHART_H, line, " ".join(upper + lower), ticks, n)


def against(conn: sqlite3.Connection, subs: list[int]) -> list[dict[str, Any]]:
    """Per opponent bot: units shared, this bot's score by units (1 for the
    higher total, 0.5 for equal), and the Elo difference with its 95 % interval."""
    if not subs:
        return []
    marks = ",".join("?" * len(subs))
    rows = conn.execute(
        f"SELECT u.members, u.totals FROM units u WHERE u.status = 'done' AND u.id IN "
        f"(SELECT DISTINCT g.unit FROM games g JOIN game_seats gs ON gs.game = g.id WHERE gs.submission IN ({marks}))",
        subs,
    ).fetchall()
    mine = set(subs)
    outcomes: dict[int, list[float]] = {}
    for members_json, totals_json in rows:
        members, totals = json.loads(members_json), json.loads(totals_json)
        own = [t for m, t in zip(members, totals) if m in mine]
        for m, t in zip(members, totals):
            if m not in mine and own:
                outcomes.setdefault(m, []).append(1.0 if own[0] > t else 0.5 if own[0] == t else 0.0)
    bot_of = _bots_of(conn, list(outcomes))
    by_bot: dict[str, list[float]] = {}
    for sub, scores in outcomes.items():
        by_bot.setdefault(bot_of[sub], []).extend(scores)
    out = []
    for bot, scores in sorted(by_bot.items()):
        try:
            stats = set_stats(scores, games_per_set=1)
            elo = f"{stats.elo:+.0f}" if math.isfinite(stats.elo) else "too few units to say"
            if math.isfinite(stats.elo) and math.isfinite(stats.err95):
                elo += f" ± {stats.err95:.0f}"
        except RatingError:
            elo = ""
        out.append({"bot": bot, "units": len(scores), "score": sum(scores) / len(scores), "elo": elo})
    return out


def _bots_of(conn: sqlite3.Connection, subs: list[int]) -> dict[int, str]:
    if not subs:
        return {}
    rows = conn.execute(f"SELECT id, bot FROM submissions WHERE id IN ({','.join('?' * len(subs))})", subs)
    return {int(r[0]): str(r[1]) for r in rows}


def bot_view(conn: sqlite3.Connection, bot: str) -> dict[str, Any] | None:
    page = bot_page(conn, bot)
    if page is None:
        return None
    versions: list[Submission] = submissions_of_bot(conn, bot)
    subs = [v.id for v in versions]
    chosen = next((v for v in versions if v.status == "active"), versions[-1])
    games = latest_games(conn, subs)
    return {
        "bot": page,
        "chart": rating_chart(rating_history(conn, chosen.id)),
        "against": against(conn, subs),
        "games": games,
    }


def latest_games(conn: sqlite3.Connection, subs: list[int], count: int = LATEST_GAMES) -> list[dict[str, Any]]:
    """The last `count` finished games of these versions, newest first."""
    rows = newest_games(conn, subs, count)
    shown = names(conn, sorted({s for g in rows for s in g.seats}))
    return [game_dict(g, shown) for g in rows]


def my_view(conn: sqlite3.Connection, owner: str) -> list[Submission]:
    return submissions_of(conn, owner)


def submission_view(conn: sqlite3.Connection, sub: Submission) -> dict[str, Any]:
    """A version's private page: its check report and its games, with the seats its owner may read the stderr of."""
    private = private_fields(conn, sub.id)
    rows = newest_games(conn, [sub.id], LATEST_GAMES)
    shown = names(conn, sorted({s for g in rows for s in g.seats}))
    games = []
    for g in rows:
        d = game_dict(g, shown)
        d["own_seats"] = [seat for seat, s in enumerate(g.seats) if s == sub.id]
        games.append(d)
    return {"check_log": private.get("check_log"), "language": private.get("language"), "games": games}


def kits_view() -> list[dict[str, Any]]:
    """Each starter kit, and whether this machine's build sandbox has its toolchains (blocking: probes them)."""
    from referee.arena.kits import KITS, missing_toolchains
    from referee.arena.toolchains import probe_toolchains
    from referee.seats.sandbox import SANDBOX_PATH

    out = []
    for kit in KITS.values():
        missing = missing_toolchains(kit, probe_toolchains(kit.toolchains, path=SANDBOX_PATH))
        out.append({"language": kit.language, "title": kit.title, "missing": missing})
    return out


def kit_archive(language: str) -> bytes:
    """A kit's files as a .tar.gz in a folder named after it, the same bytes every time."""
    import gzip
    import io
    import tarfile

    from referee.arena.kits import get_kit, kit_files

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in kit_files(get_kit(language)):
            info = tarfile.TarInfo(f"{language}-starter/{name}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)
