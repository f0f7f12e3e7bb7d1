"""What a dashboard knows, built from the stream's lines: the board.

The board reads public records (and, when the host allows the delayed
all-cards view, private ones) and keeps: the run's header, the games in
progress with their public records and current scores, the last finished
games, when games finished (for throughput), and the last lines for
server-sent events. Everything is bounded: a running game holds its own
records until it ends, at most `KEEP_FINISHED` finished games are kept, and
the line buffer is a ring; of the other games of the run that finished, only
their ids and deal sets (a few dozen bytes each).

A hidden card reaches a spectator only through what `referee.live.tables`
makes of a game, and only once `released` (or `due`) says so: its private
record is `reveal_delay` seconds old, and every one before it, or its game
is `settled`: over, and so is every game of its deal set (the siblings play
the same cards; until they are over, a finished game shows what it showed
when it ended). A match's deal set is its games under every seat rotation,
one per bot; a tournament's dashboard asks its database instead
(`settled_rule`).
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import trio

KEEP_FINISHED = 32
RECENT_SHOWN = 12  # finished games in the summary
RECENT_LINES = 2048
THROUGHPUT_WINDOW = 64
MAX_LINE = 1 << 20  # a longer line is not the referee's: skipped

_decoder = msgspec.json.Decoder()


@dataclass
class LiveGame:
    """One game as the stream told it."""

    run: str
    game_id: int
    game: str
    n_players: int
    seats: list[str]
    rules: Any
    deal_set: int | None
    started: float
    public: list[dict[str, Any]] = field(default_factory=list)
    private: list[dict[str, Any]] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    decisions: int = 0
    failures: list[tuple[int, str]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    ended: float | None = None
    version: int = 0
    # What its live tables are sent (`referee.live.tables`): rows encoded once, shared by every viewer.
    rows: list[bytes] = field(default_factory=list)
    rows_public: int = 0  # public records made rows so far
    rows_private: int = 0  # hidden records made rows so far (released ones only)
    rows_over: bool = False
    start_bytes: bytes = b""

    def brief(self) -> dict[str, Any]:
        out = {
            "game_id": self.game_id,
            "seats": self.seats,
            "scores": self.scores,
            "decisions": self.decisions,
            "started": self.started,
            "deal_set": self.deal_set,
            "failures": [{"seat": s, "reason": r} for s, r in self.failures],
        }
        if self.result is not None:
            out.update(
                winner=self.result.get("winner"),
                placements=self.result.get("placements"),
                reason=self.result.get("reason"),
                ended=self.ended,
            )
        return out


def _stamp(rec: dict[str, Any]) -> float:
    """A record's time; one without a number is never old enough."""
    t = rec.get("t")
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else float("inf")


def _score_update(g: LiveGame, event: dict[str, Any]) -> None:
    """Current totals from the public events that carry them."""
    scores = event.get("scores")
    if isinstance(scores, list) and len(scores) == g.n_players and all(isinstance(x, int) for x in scores):
        g.scores = list(scores)
    elif (
        isinstance(event.get("total"), int) and isinstance(event.get("seat"), int) and 0 <= event["seat"] < g.n_players
    ):
        g.scores[event["seat"]] = event["total"]


class LiveBoard:
    """The dashboard's state; `feed` and `feed_private` take raw lines, and
    `bump` after a batch of them tells the waiting viewers."""

    def __init__(self, reveal_delay: float | None = None, clock: Callable[[], float] = time.time) -> None:
        self.reveal_delay = reveal_delay
        self.clock = clock
        self.info: dict[str, Any] = {}
        self.run: str | None = None
        self.private_run: str | None = None
        self.running: dict[int, LiveGame] = {}
        self.finished: OrderedDict[int, LiveGame] = OrderedDict()
        self.finish_times: deque[float] = deque(maxlen=THROUGHPUT_WINDOW)
        self.finished_this_run = 0
        self.tally: dict[str, dict[str, Any]] = {}  # per bot, from the results in the stream
        self.recent: deque[tuple[int, bytes]] = deque(maxlen=RECENT_LINES)
        self.seq = 0
        self.version = 0
        self.changed = trio.Event()
        self.skipped = 0  # lines that did not decode
        # What finished in this run, for `settled`: game id -> its deal set, and how many finished per deal set.
        self.finished_ids: dict[int, int | None] = {}
        self.set_done: Counter[int] = Counter()
        self.settled_rule: Callable[[int], bool] | None = None  # replaces the stream's count when given

    # ------------------------------------------------------------ feeding

    def _decode(self, raw: bytes) -> dict[str, Any] | None:
        if len(raw) > MAX_LINE:
            self.skipped += 1
            return None
        try:
            rec = _decoder.decode(raw)
        except (msgspec.DecodeError, RecursionError, ValueError):
            self.skipped += 1
            return None
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            self.skipped += 1
            return None
        return rec

    def bump(self) -> None:
        self.version += 1
        self.changed.set()
        self.changed = trio.Event()

    def feed(self, raw: bytes) -> None:
        """One public line."""
        rec = self._decode(raw)
        if rec is None:
            return
        self.seq += 1
        self.recent.append((self.seq, raw))
        kind = rec["type"]
        gid = rec.get("game_id")
        if kind == "run_started":
            self.run = str(rec.get("run"))
            self.info = {k: rec.get(k) for k in ("v", "source", "name", "game", "bots", "scheduled", "finished", "t")}
            self.running.clear()  # a run killed without a goodbye left its games here
            self.finished_this_run = 0
            self.finish_times.clear()
            if not rec.get("finished"):  # a new match or a fresh tournament: no game of it has finished
                self.finished_ids.clear()
                self.set_done.clear()
        elif kind == "run_ended":
            self.info["ended"] = rec.get("t")
            self.info["status"] = rec.get("status")
            self.running.clear()
        elif kind == "game_started" and isinstance(gid, int):
            n = rec.get("n_players")
            seats = rec.get("seats")
            if not isinstance(n, int) or not isinstance(seats, list) or len(seats) != n or not 1 <= n <= 8:
                self.skipped += 1
                return
            self.running[gid] = LiveGame(
                run=self.run or "",
                game_id=gid,
                game=str(rec.get("game")),
                n_players=n,
                seats=[str(s) for s in seats],
                rules=rec.get("rules"),
                deal_set=rec.get("deal_set"),
                started=float(rec.get("t") or 0),
                scores=[0] * n,
            )
        elif isinstance(gid, int) and gid in self.running:
            self._game_record(self.running[gid], kind, rec)
        self.version += 1  # the follower wakes the viewers once per batch of lines (`bump`)

    def _game_record(self, g: LiveGame, kind: str, rec: dict[str, Any]) -> None:
        g.version += 1
        if kind == "event" and isinstance(rec.get("event"), dict):
            g.public.append(rec)
            _score_update(g, rec["event"])
        elif kind == "decision":
            g.decisions += 1
        elif kind == "failure":
            g.public.append(rec)
            g.failures.append((rec.get("seat", -1), str(rec.get("reason"))))
        elif kind == "game_finished":
            g.result = {k: rec.get(k) for k in ("winner", "scores", "placements", "reason", "forfeited")}
            g.ended = float(rec.get("t") or 0)
            if isinstance(rec.get("scores"), list):
                g.scores = rec["scores"]
            del self.running[g.game_id]
            self.finished[g.game_id] = g
            self.finished.move_to_end(g.game_id)
            while len(self.finished) > KEEP_FINISHED:
                self.finished.popitem(last=False)
            self.finished_this_run += 1
            self.finish_times.append(g.ended)
            if (
                self.settled_rule is None and g.game_id not in self.finished_ids
            ):  # a rule needs no count (and an arena's would grow for weeks)
                deal_set = g.deal_set if isinstance(g.deal_set, int) else None
                self.finished_ids[g.game_id] = deal_set
                if deal_set is not None:
                    self.set_done[deal_set] += 1
            self._count(g)
        elif kind == "game_abandoned":
            del self.running[g.game_id]

    def _count(self, g: LiveGame) -> None:
        """A match's standings from its results: games, wins, points, failures per bot."""
        res = g.result or {}
        places = res.get("placements") or []
        for seat, name in enumerate(g.seats):
            row = self.tally.setdefault(name, {"bot": name, "games": 0, "wins": 0, "points": 0, "failures": {}})
            row["games"] += 1
            if seat < len(places) and places[seat] == 1:
                row["wins"] += 1
            if seat < len(g.scores) and isinstance(g.scores[seat], int):
                row["points"] += g.scores[seat]
        for seat, reason in g.failures:
            if 0 <= seat < len(g.seats):
                fails = self.tally[g.seats[seat]]["failures"]
                fails[reason] = fails.get(reason, 0) + 1

    def feed_private(self, raw: bytes) -> None:
        """One private line: kept with its game, shown only after the delay (`released`)."""
        if self.reveal_delay is None:
            return  # never asked for: hidden cards are not even kept
        rec = self._decode(raw)
        if rec is None:
            return
        if rec["type"] == "run_started":
            self.private_run = str(rec.get("run"))
            return
        gid = rec.get("game_id")
        g = self.game(gid) if isinstance(gid, int) else None  # finished already, if it ended since the last look
        if g is None or g.run != self.private_run or not isinstance(rec.get("at"), int):
            return
        g.private.append(rec)

    # ------------------------------------------------------------ reading

    def game(self, game_id: int) -> LiveGame | None:
        return self.running.get(game_id) or self.finished.get(game_id)

    def settled_id(self, game_id: int) -> bool:
        """Whether game `game_id` is over, and so is every game of its deal set."""
        if self.settled_rule is not None:
            return self.settled_rule(game_id)
        if game_id not in self.finished_ids:
            return False
        deal_set = self.finished_ids[game_id]
        match = self.info.get("source") == "match"
        if deal_set is None or (match and "ended" in self.info):  # no siblings, or none left to play
            return True
        bots = self.info.get("bots")
        return match and isinstance(bots, list) and self.set_done[deal_set] >= len(bots)

    def settled(self, g: LiveGame) -> bool:
        return g.result is not None and self.settled_id(g.game_id)

    def shown_private(self, g: LiveGame, now: float | None = None, start: int = 0) -> int:
        """How many of `g`'s private records a spectator may see now: all once
        it is `settled`; else those at least `reveal_delay` seconds old (a
        record waits for every one before it), as of its end once it is over;
        none without a delay. (`start`: that many are known to be shown already.)"""
        if self.reveal_delay is None:
            return 0
        if g.result is None:
            return self.due(g, start, now)
        if self.settled(g):
            return len(g.private)
        return self.due(g, start, g.ended if g.ended is not None else now)

    def released(self, g: LiveGame, now: float | None = None) -> list[dict[str, Any]]:
        """The private records of `g` a spectator may see now (`shown_private`)."""
        return g.private[: self.shown_private(g, now)]

    def due(self, g: LiveGame, start: int, now: float | None = None) -> int:
        """How many of `g`'s private records, counting from the first, are due
        (at least `start` of them, known due already)."""
        if self.reveal_delay is None:
            return 0
        cutoff = (self.clock() if now is None else now) - self.reveal_delay
        n = start
        while n < len(g.private) and _stamp(g.private[n]) <= cutoff:
            n += 1
        return n

    def summary(self, now: float | None = None) -> dict[str, Any]:
        """Progress, games in progress and the last finished games."""
        now = self.clock() if now is None else now
        times = list(self.finish_times)
        rate = None
        if len(times) == self.finish_times.maxlen and times[-1] > times[0]:  # the last games
            rate = (len(times) - 1) / (times[-1] - times[0])
        elif times and isinstance(self.info.get("t"), (int, float)) and times[-1] > self.info["t"]:
            rate = len(times) / (times[-1] - self.info["t"])  # since the run started
        scheduled = self.info.get("scheduled") or 0
        done = (self.info.get("finished") or 0) + self.finished_this_run
        left = max(0, scheduled - done)
        return {
            "run": dict(self.info.items()),
            "progress": {
                "finished": done,
                "scheduled": scheduled,
                "running": len(self.running),
                "per_minute": None if rate is None else round(rate * 60, 2),
                "eta_s": None if rate is None or not left else round(left / rate, 1),
                "finished_this_run": self.finished_this_run,
            },
            "running": [g.brief() for g in sorted(self.running.values(), key=lambda g: g.game_id)],
            "recent": [g.brief() for g in list(reversed(self.finished.values()))[:RECENT_SHOWN]],
            "tally": sorted(self.tally.values(), key=lambda r: (-r["wins"], -r["points"], r["bot"])),
            "reveal_delay": self.reveal_delay,
            "now": round(now, 3),
        }
