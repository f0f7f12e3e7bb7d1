"""The live dashboard's ASGI app (a router): the page, its data, its event streams.

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
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.live.board import LiveGame
from referee.live.source import LiveSource
from referee.live.tables import next_due_s, table_data, table_rows, table_start
from referee.web.server import Receive, Send, answer_lifespan, event_stream, respond

ASSETS = Path(__file__).resolve().parents[1] / "assets"
STATIC = {
    "live.html": "text/html",
    "live.js": "text/javascript",
    "live.css": "text/css",
    "live-table.html": "text/html",
}
SHELL = "replay-shell.html"
MIN_GAP_S = 1.0  # the beat: a viewer's stream sends at most this often, so cost does not grow with the moves
RAW_GAP_S = 0.5
LOG_WAIT_S = 10.0
KEEPALIVE_S = 15.0


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
        route = path[len(self.prefix) :]
        parts = route.split("/")
        if route in ("", "game/follow"):
            await self._static(send, "live.html" if route == "" else "live-table.html")
        elif route.startswith("assets/"):
            await self._asset(scope, send, route[len("assets/") :])
        elif route in ("summary", "summary/events", "events", "game/follow/moves"):
            await self._stream_route(scope, receive, send, route)
        elif len(parts) >= 2 and parts[0] == "game" and _int(parts[1]) is not None:
            await self._game(scope, receive, send, _int(parts[1]) or 0, "/".join(parts[2:]))
        else:
            await respond(send, 404, b"not found", "text/plain")

    async def _asset(self, scope: dict[str, Any], send: Send, name: str) -> None:
        if name in STATIC:
            await self._static(send, name)
        elif name == SHELL:
            await _gzipped(scope, send, self.source.shell(), "text/html", cached=True)
        else:
            await respond(send, 404, b"not found", "text/plain")

    async def _stream_route(self, scope: dict[str, Any], receive: Receive, send: Send, route: str) -> None:
        """The summary, and the streams that are not one game's."""
        if route == "summary":
            await respond(send, 200, self.source.summary_bytes())
        elif route == "summary/events":
            await event_stream(receive, send, self._summary_events)
        elif route == "game/follow/moves":
            await event_stream(receive, send, self._follow_moves)
        else:  # "events": from `?after=N` or the Last-Event-ID header
            query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
            after = _int(query.get("after", [""])[0])
            last = dict(scope.get("headers") or []).get(b"last-event-id")
            if last is not None:
                after = _int(last.decode("latin-1"))
            await event_stream(receive, send, lambda s: self._raw_events(s, after or 0))

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
            await send(
                {"type": "http.response.body", "body": b"event: summary\ndata: " + body + b"\n\n", "more_body": True}
            )
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
