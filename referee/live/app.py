"""The live dashboard's ASGI app: the page, its data, its event streams.

Routes, all under the dashboard's token (any other path is a plain 404):
`GET /T/` the dashboard; `GET /T/assets/NAME` its static files (with
`replay-shell.html`, the replay page a live table fills in);
`GET /T/summary` standings, progress and games as JSON;
`GET /T/summary/events` the same as server-sent events, at most one a second;
`GET /T/events` the public stream itself as server-sent events (`id:` is the
line's number; `Last-Event-ID` or `?after=N` resumes within the ring buffer);
`GET /T/game/ID` a live table; `GET /T/game/ID/moves` its rows as server-sent
events (`referee.live.tables`); `GET /T/game/ID/page` its replay page as far
as a spectator may see it (a finished game's own log when there is one);
`GET /T/game/ID/data` that page's data; `GET /T/game/follow` a live table that
follows one game in progress after another, `GET /T/game/follow/moves` its
stream. Plain ASGI, like the seat.

Every stream wakes on the same beat (whole seconds of the loop's clock)
after the board changed, so a change is encoded once however many watch,
and each viewer then costs one send a beat at most.
"""

from __future__ import annotations

import gzip
import math
import urllib.parse
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.errors import RefereeError
from referee.live.board import LiveBoard, LiveGame
from referee.live.follow import DbStandings
from referee.live.tables import next_due_s, shell, table_data, table_rows, table_start
from referee.replay.html import build_replay_data, render_html
from referee.web.server import Receive, Send, answer_lifespan, event_stream, respond

ASSETS = Path(__file__).resolve().parents[1] / "assets"
STATIC = {"live.html": "text/html", "live.js": "text/javascript", "live.css": "text/css",
          "live-table.html": "text/html"}
SHELL = "replay-shell.html"
MIN_GAP_S = 1.0  # the beat: a viewer's stream sends at most this often, so cost does not grow with the moves
RAW_GAP_S = 0.5
PAGE_REUSE_S = 1.0
LOG_WAIT_S = 10.0
KEEPALIVE_S = 15.0


@dataclass
class LiveSource:
    """What the dashboard shows: the board, a tournament's standings (or a
    match's tally), and where finished games' logs are."""

    board: LiveBoard
    title: str
    db: DbStandings | None = None
    log_of: Callable[[int], Path | None] = lambda _gid: None
    _summary: tuple[int, bytes] = (-1, b"")
    _shell: bytes = b""
    _pages: dict[int, tuple[float, Any, bytes]] = field(default_factory=dict)  # game id -> (made, key, page)
    _finals: dict[int, tuple[Any, bytes]] = field(default_factory=dict)  # game id -> (key, data)

    def summary_bytes(self) -> bytes:
        """The summary JSON, encoded once per change (every viewer shares it)."""
        version, body = self._summary
        if version == self.board.version:
            return body
        data = self.board.summary()
        data["title"] = self.title
        if self.db is not None:
            data["standings"] = self.db.as_dict
            data["db_error"] = self.db.error
            st = self.db.standings
            if st is not None:  # the database is the truth for what finished
                data["progress"]["finished"] = st.finished
                data["progress"]["scheduled"] = st.scheduled
                data["progress"]["bots"] = [b.name for b in st.bots]
        body = msgspec.json.encode(data)
        self._summary = (self.board.version, body)
        return body

    def shell(self) -> bytes:
        """The live table's replay frame, gzipped, made once."""
        if not self._shell:
            self._shell = gzip.compress(shell().encode(), 6)
        return self._shell

    def page(self, game_id: int) -> bytes | None:
        """A game's replay page, gzipped: its log once it is finished, else the board's view.

        Rendered once for every viewer of a game: a finished game's page while
        its log is unchanged, a running game's at most every `PAGE_REUSE_S`
        (for a page opened as it is; a live table takes the moves from its stream)."""
        now = trio.current_time()
        g = self.board.game(game_id)
        log = self.log_of(game_id)
        cached = self._pages.get(game_id)
        if (g is None or g.result is not None) and log is not None and log.is_file():
            st = log.stat()
            key: Any = ("log", st.st_size, st.st_mtime_ns)
            if cached is not None and cached[1] == key:
                return cached[2]
            try:
                return self._keep(game_id, now, key, gzip.compress(render_html(build_replay_data(log)).encode(), 5))
            except RefereeError:
                pass  # a log that does not read: the board's view, if any
        if g is None:
            return None
        key = ("live", g.version, len(self.board.released(g)), g.result is not None)
        if cached is not None and (cached[1] == key or (cached[1][0] == "live" and not key[3]
                                                         and now - cached[0] < PAGE_REUSE_S)):
            return cached[2]
        data = table_data(self.board, game_id)
        return None if data is None else self._keep(game_id, now, key, gzip.compress(render_html(data).encode(), 5))

    def final_data(self, game_id: int) -> bytes | None:
        """A finished game's replay data from its log (every card), encoded
        once for every viewer; None while its log is unknown or unreadable."""
        log = self.log_of(game_id)
        if log is None or not log.is_file():
            return None
        st = log.stat()
        key = ("data", st.st_size, st.st_mtime_ns)
        cached = self._finals.get(game_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            body = msgspec.json.encode(build_replay_data(log))
        except RefereeError:
            return None  # a log that does not read: the table asks for its page
        if len(self._finals) > 64:  # bounded: the games being watched now
            self._finals.clear()
        self._finals[game_id] = (key, body)
        return body

    def log_known(self, game_id: int) -> bool:
        """Whether a finished game's page can be its log: a tournament's logs are
        known once the database has the game (a moment after the stream tells of it)."""
        log = self.log_of(game_id)
        return self.db is None or (log is not None and log.is_file())

    def _keep(self, game_id: int, now: float, key: Any, page: bytes) -> bytes:
        if len(self._pages) > 64:  # bounded: the games being watched now
            self._pages.clear()
        self._pages[game_id] = (now, key, page)
        return page


class DashboardApp:
    """The ASGI app of one dashboard; `token` is its only key."""

    def __init__(self, token: str, source: LiveSource) -> None:
        self.prefix = f"/{token}/"
        self.source = source
        self._files: dict[str, bytes] = {}

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        if method != "GET" or not path.startswith(self.prefix):
            await respond(send, 404, b"not found", "text/plain")
            return
        route = path[len(self.prefix):]
        query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
        parts = route.split("/")
        if route == "":
            await self._static(send, "live.html")
        elif route.startswith("assets/") and route[7:] in STATIC:
            await self._static(send, route[7:])
        elif route == "assets/" + SHELL:
            await _gzipped(scope, send, self.source.shell(), "text/html", cached=True)
        elif route == "summary":
            await respond(send, 200, self.source.summary_bytes())
        elif route == "summary/events":
            await event_stream(receive, send, self._summary_events)
        elif route == "events":
            after = _int(query.get("after", [""])[0])
            last = dict(scope.get("headers") or []).get(b"last-event-id")
            if last is not None:
                after = _int(last.decode("latin-1"))
            await event_stream(receive, send, lambda s: self._raw_events(s, after or 0))
        elif route == "game/follow":
            await self._static(send, "live-table.html")
        elif route == "game/follow/moves":
            await event_stream(receive, send, self._follow_moves)
        elif len(parts) >= 2 and parts[0] == "game" and _int(parts[1]) is not None:
            await self._game(scope, receive, send, _int(parts[1]) or 0, "/".join(parts[2:]))
        else:
            await respond(send, 404, b"not found", "text/plain")

    async def _static(self, send: Send, name: str) -> None:
        if name not in self._files:  # read once: the files do not change while serving
            self._files[name] = (ASSETS / name).read_bytes()
        await respond(send, 200, self._files[name], STATIC[name], cached=True)

    async def _game(self, scope: dict[str, Any], receive: Receive, send: Send, game_id: int, rest: str) -> None:
        if rest == "":
            await self._static(send, "live-table.html")
        elif rest == "page":
            page = self.source.page(game_id)
            if page is None:
                await respond(send, 404, b"no such game in progress or recently finished", "text/plain")
            else:
                await _gzipped(scope, send, page, "text/html")
        elif rest == "data":
            data = table_data(self.source.board, game_id)
            if data is None:
                await respond(send, 404, b'{"error":"no such game in progress or recently finished"}')
            else:
                await respond(send, 200, msgspec.json.encode(data))
        elif rest == "moves":
            await event_stream(receive, send, lambda s: self._table_moves(s, game_id))
        else:
            await respond(send, 404, b"not found", "text/plain")

    async def _beat(self, send: Send, seen: int, gap: float = MIN_GAP_S, due_s: float | None = None) -> None:
        """Until the board changes from version `seen` (or `due_s` seconds
        pass: a hidden card comes due), then on to the next beat: a whole
        multiple of `gap` on the loop's clock, the same instant for every
        viewer, so they wake together and share what the first one made.
        A keep-alive comment goes out every `KEEPALIVE_S` of quiet."""
        board = self.source.board
        due_at = None if due_s is None else trio.current_time() + due_s
        while board.version == seen:
            limit = KEEPALIVE_S if due_at is None else min(KEEPALIVE_S, due_at - trio.current_time())
            with trio.move_on_after(max(0.0, limit)) as timer:
                await board.changed.wait()
            if timer.cancelled_caught:
                if due_at is not None and trio.current_time() >= due_at:
                    break
                await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
        await trio.sleep_until(math.ceil(trio.current_time() / gap) * gap)

    async def _summary_events(self, send: Send) -> None:
        while True:
            seen = self.source.board.version
            body = self.source.summary_bytes()
            await send({"type": "http.response.body", "body": b"event: summary\ndata: " + body + b"\n\n",
                        "more_body": True})
            await self._beat(send, seen)

    async def _raw_events(self, send: Send, after: int) -> None:
        board = self.source.board
        while True:
            seen = board.version
            lines = [b"id: %d\ndata: %s\n\n" % (n, raw) for n, raw in board.recent if n > after]
            if lines:
                after = board.recent[-1][0]
                await send({"type": "http.response.body", "body": b"".join(lines), "more_body": True})
            await self._beat(send, seen, RAW_GAP_S)

    async def _table_moves(self, send: Send, game_id: int) -> None:
        """`start` (the game's header), then `moves` (new rows, a JSON list)
        on each beat the game moved, then `over` (or `gone`: not on the board)."""
        g = self.source.board.game(game_id)
        if g is None:
            await _body(send, [_event(b"gone", b"{}")])
        else:
            await _body(send, await self._follow_game(send, g, []))

    async def _follow_moves(self, send: Send) -> None:
        """One game in progress after another, each as `_table_moves` sends it:
        the lowest-numbered game running that this viewer has not followed yet."""
        board = self.source.board
        followed: deque[int] = deque(maxlen=256)
        pending: list[bytes] = []  # the last game's end goes out with the next game's start
        while True:
            seen = board.version
            nxt = min((gid for gid in board.running if gid not in followed), default=None)
            if nxt is None:
                await _body(send, pending)
                pending = []
                await self._beat(send, seen)
                continue
            followed.append(nxt)
            pending = await self._follow_game(send, board.running[nxt], pending)

    async def _follow_game(self, send: Send, g: LiveGame, pieces: list[bytes]) -> list[bytes]:
        """Send one game's start and rows, beat by beat, until it is over or
        gone; its last pieces are returned unsent. One send per beat."""
        board = self.source.board
        pieces = [*pieces, _event(b"start", table_start(board, g))]
        sent = 0
        give_up = math.inf  # over, but the log unknown yet: `over` waits for it this long at most
        while True:
            seen = board.version
            rows = table_rows(board, g)
            if len(rows) > sent:
                pieces.append(b"event: moves\ndata: [" + b",".join(rows[sent:]) + b"]\n\n")
                sent = len(rows)
            end = b'{"game_id":%d}' % g.game_id
            if g.rows_over and (self.source.log_known(g.game_id) or trio.current_time() >= give_up):
                final = self.source.final_data(g.game_id)  # the log's data: every card
                over = end if final is None else end[:-1] + b',"data":' + final + b"}"
                return [*pieces, _event(b"over", over)]
            if board.game(g.game_id) is not g:  # abandoned, or a new run
                return [*pieces, _event(b"gone", end)]
            await _body(send, pieces)
            pieces = []
            if g.rows_over:
                give_up = min(give_up, trio.current_time() + LOG_WAIT_S)
                await self._beat(send, seen, due_s=max(0.0, give_up - trio.current_time()))
            else:
                await self._beat(send, seen, due_s=next_due_s(board, g))


def _event(name: bytes, data: bytes) -> bytes:
    return b"event: " + name + b"\ndata: " + data + b"\n\n"


async def _body(send: Send, pieces: list[bytes]) -> None:
    """Server-sent events in one send (nothing at all for none)."""
    if pieces:
        await send({"type": "http.response.body", "body": b"".join(pieces), "more_body": True})


async def _gzipped(scope: dict[str, Any], send: Send, body: bytes, content_type: str, cached: bool = False) -> None:
    """A gzipped body as it is to a viewer that takes gzip (browsers do), else unzipped."""
    if b"gzip" in dict(scope.get("headers") or []).get(b"accept-encoding", b""):
        await respond(send, 200, body, content_type, gzipped=True, cached=cached)  # a quarter of the bytes
    else:
        await respond(send, 200, gzip.decompress(body), content_type, cached=cached)


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
