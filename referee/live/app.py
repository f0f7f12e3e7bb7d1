"""The live dashboard's ASGI app: the page, its data, its event streams.

Routes, all under the dashboard's token (any other path is a plain 404):
`GET /T/` the dashboard; `GET /T/assets/NAME` its static files;
`GET /T/summary` standings, progress and games as JSON;
`GET /T/summary/events` the same as server-sent events, at most two a second;
`GET /T/events` the public stream itself as server-sent events (`id:` is the
line's number; `Last-Event-ID` or `?after=N` resumes within the ring buffer);
`GET /T/game/ID` a live table; `GET /T/game/ID/page` its replay page as far
as a spectator may see it (a finished game's own log when there is one);
`GET /T/game/ID/data` that page's data; `GET /T/game/ID/events` a
server-sent `version` whenever the table changed. Plain ASGI, like the seat.
"""

from __future__ import annotations

import gzip
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.errors import RefereeError
from referee.live.board import LiveBoard
from referee.live.follow import DbStandings
from referee.replay.html import build_replay_data, render_html
from referee.web.server import HEADERS, Receive, Send, answer_lifespan, respond

ASSETS = Path(__file__).resolve().parents[1] / "assets"
STATIC = {"live.html": "text/html", "live.js": "text/javascript", "live.css": "text/css",
          "live-table.html": "text/html"}
MIN_GAP_S = 1.0  # a viewer's stream sends at most this often: cost does not grow with the moves
TABLE_GAP_S = 1.0
PAGE_REUSE_S = 1.0
KEEPALIVE_S = 15.0


@dataclass
class LiveSource:
    """What the dashboard shows: the board, a tournament's standings (or a
    match's tally), and where finished games' logs are."""

    board: LiveBoard
    title: str
    db: DbStandings | None = None
    log_of: Callable[[int], Path | None] = lambda _gid: None
    _summary: tuple[int, float, bytes] = (-1, 0.0, b"")
    _pages: dict[int, tuple[float, Any, bytes]] = field(default_factory=dict)  # game id -> (made, key, page)

    def summary_bytes(self) -> bytes:
        """The summary JSON, encoded once per change (every viewer shares it)."""
        now = trio.current_time()
        version, made, body = self._summary
        if version == self.board.version and now - made < MIN_GAP_S * 2:
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
        self._summary = (self.board.version, now, body)
        return body

    def page(self, game_id: int) -> bytes | None:
        """A game's replay page, gzipped: its log once it is finished, else the board's view.

        Rendered once for every viewer of a game: a finished game's page while
        its log is unchanged, a running game's at most every `PAGE_REUSE_S`
        (a viewer told of a newer move gets it with the next notice)."""
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
        data = self.board.table_data(game_id)
        return None if data is None else self._keep(game_id, now, key, gzip.compress(render_html(data).encode(), 5))

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
        elif route == "summary":
            await respond(send, 200, self.source.summary_bytes())
        elif route == "summary/events":
            await self._stream(receive, send, self._summary_events)
        elif route == "events":
            after = _int(query.get("after", [""])[0])
            last = dict(scope.get("headers") or []).get(b"last-event-id")
            if last is not None:
                after = _int(last.decode("latin-1"))
            await self._stream(receive, send, lambda s: self._raw_events(s, after or 0))
        elif len(parts) >= 2 and parts[0] == "game" and _int(parts[1]) is not None:
            await self._game(scope, receive, send, _int(parts[1]) or 0, "/".join(parts[2:]))
        else:
            await respond(send, 404, b"not found", "text/plain")

    async def _static(self, send: Send, name: str) -> None:
        await respond(send, 200, (ASSETS / name).read_bytes(), STATIC[name])

    async def _game(self, scope: dict[str, Any], receive: Receive, send: Send, game_id: int, rest: str) -> None:
        if rest == "":
            await self._static(send, "live-table.html")
        elif rest == "page":
            page = self.source.page(game_id)
            if page is None:
                await respond(send, 404, b"no such game in progress or recently finished", "text/plain")
            elif b"gzip" in dict(scope.get("headers") or []).get(b"accept-encoding", b""):
                await respond(send, 200, page, "text/html", gzipped=True)  # a quarter of the bytes
            else:
                await respond(send, 200, gzip.decompress(page), "text/html")
        elif rest == "data":
            data = self.source.board.table_data(game_id)
            if data is None:
                await respond(send, 404, b'{"error":"no such game in progress or recently finished"}')
            else:
                await respond(send, 200, msgspec.json.encode(data))
        elif rest == "events":
            await self._stream(receive, send, lambda s: self._table_events(s, game_id))
        else:
            await respond(send, 404, b"not found", "text/plain")

    async def _stream(self, receive: Receive, send: Send, body: Callable[[Send], Awaitable[None]]) -> None:
        """A server-sent event stream until the viewer goes away."""
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"), *HEADERS]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        async with trio.open_nursery() as nursery:
            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch_disconnect)
            await body(send)
            nursery.cancel_scope.cancel()

    async def _wait(self, send: Send, seen: int) -> None:
        """Until the board changes (a keep-alive comment every so often)."""
        board = self.source.board
        while board.version == seen:
            with trio.move_on_after(KEEPALIVE_S) as timer:
                await board.changed.wait()
            if timer.cancelled_caught:
                await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})

    async def _summary_events(self, send: Send) -> None:
        seen = -1
        while True:
            seen = self.source.board.version
            body = self.source.summary_bytes()
            await send({"type": "http.response.body", "body": b"event: summary\ndata: " + body + b"\n\n",
                        "more_body": True})
            await trio.sleep(MIN_GAP_S)
            await self._wait(send, seen)

    async def _raw_events(self, send: Send, after: int) -> None:
        board = self.source.board
        while True:
            seen = board.version
            lines = [b"id: %d\ndata: %s\n\n" % (n, raw) for n, raw in board.recent if n > after]
            if lines:
                after = board.recent[-1][0]
                await send({"type": "http.response.body", "body": b"".join(lines), "more_body": True})
            await trio.sleep(MIN_GAP_S / 2)
            await self._wait(send, seen)

    async def _table_events(self, send: Send, game_id: int) -> None:
        board = self.source.board
        sent: tuple[Any, ...] = ()
        while True:
            g = board.game(game_id)
            state = ("gone",) if g is None else (g.version, len(board.released(g)), g.result is not None)
            if state != sent:
                sent = state
                data = msgspec.json.encode({"version": state[0], "shown": state[1] if g else 0,
                                            "over": bool(g and g.result is not None), "gone": g is None})
                await send({"type": "http.response.body", "body": b"event: version\ndata: " + data + b"\n\n",
                            "more_body": True})
            await trio.sleep(TABLE_GAP_S)
            with trio.move_on_after(1.0 if board.reveal_delay is not None else KEEPALIVE_S):
                await board.changed.wait()  # with a delay, cards come due without a new line


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
