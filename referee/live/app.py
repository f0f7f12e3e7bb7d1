"""The live dashboard's routes: the page, its data, its event streams.

Behind the gate (`referee.web.gate`: the printed URL is good once, then a
session cookie), relative to the server's root, GET only:
`/` the dashboard; `/assets/NAME` its static files (and
`assets/replay-shell.html`, the replay page a live table fills in);
`/summary` standings, progress and games as JSON; `/summary/events` the same
as server-sent events, at most one a second; `/events` the public stream
itself as server-sent events (`id:` is the line's number; `Last-Event-ID` or
`?after=N` resumes within the ring buffer); `/game/ID` a live table;
`/game/ID/moves` its rows as server-sent events (`referee.live.tables`);
`/game/ID/page` its replay page as far as a spectator may see it (the game's
own log once it and every game of its deal set are over); `/game/ID/data`
that page's data; `/game/follow` a live table that follows one game in
progress after another, `/game/follow/moves` its stream.

Every stream wakes on the same beat (whole seconds of the loop's clock)
after the board changed, so a change is encoded once however many watch,
and each viewer then costs one write a beat at most.
"""

from __future__ import annotations

import gzip
import math
from collections import deque
from collections.abc import AsyncIterator
from itertools import islice
from typing import Any

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from referee.live.board import LiveGame
from referee.live.source import LiveSource, TooLarge
from referee.live.tables import next_due_s, table_data, table_rows, table_start
from referee.web.renderer import Busy
from referee.web.server import ASSETS, EventStreams, assets_mount

MIN_GAP_S = 1.0  # the beat: a viewer's stream sends at most this often, so cost does not grow with the moves
RAW_GAP_S = 0.5
LOG_WAIT_S = 10.0
KEEPALIVE_S = 15.0
MAX_GAME_ID = 10**9
NO_GAME = "no such game in progress or recently finished"


def _game_id(request: Request) -> int | None:
    """The path's game id: plain digits, 1 to `MAX_GAME_ID`; None for anything else."""
    text = request.path_params["game_id"]
    if not (text.isascii() and text.isdigit() and len(text) <= 10):
        return None
    number = int(text)
    return number if 0 < number < MAX_GAME_ID else None


def _event(name: bytes, data: bytes) -> bytes:
    return b"event: " + name + b"\ndata: " + data + b"\n\n"


class Dashboard:
    """The routes of one dashboard over its `LiveSource`."""

    def __init__(self, source: LiveSource, streams: EventStreams | None = None) -> None:
        self.source = source
        self.streams = streams or EventStreams()
        self._raw: tuple[Any, bytes] = (None, b"")  # the public lines a viewer is sent next, made once a beat

    @property
    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/summary", self.summary),
            Route("/summary/events", self.summary_events),
            Route("/events", self.raw_events),
            Route("/game/follow", self.table_page),
            Route("/game/follow/moves", self.follow_moves),
            Route("/game/{game_id}", self.table_page),
            Route("/game/{game_id}/moves", self.table_moves),
            Route("/game/{game_id}/page", self.page),
            Route("/game/{game_id}/data", self.data),
            Route("/assets/replay-shell.html", self.shell),
            assets_mount(),
        ]

    # ------------------------------------------------------------ pages and data

    async def index(self, request: Request) -> Response:
        return FileResponse(ASSETS / "live.html", headers={"cache-control": "private, max-age=3600"})

    async def table_page(self, request: Request) -> Response:
        if "game_id" in request.path_params and _game_id(request) is None:
            return PlainTextResponse("not found", 404)
        return FileResponse(ASSETS / "live-table.html", headers={"cache-control": "private, max-age=3600"})

    async def shell(self, request: Request) -> Response:
        return _maybe_gzipped(request, self.source.shell(), "text/html", cached=True)

    async def summary(self, request: Request) -> Response:
        return Response(self.source.summary_bytes(), media_type="application/json")

    async def page(self, request: Request) -> Response:
        game_id = _game_id(request)
        try:
            page = None if game_id is None else await self.source.page(game_id)
        except TooLarge as exc:
            return PlainTextResponse(str(exc), 413)
        except Busy as exc:
            return PlainTextResponse(str(exc), 503, headers={"retry-after": "2"})
        if page is None:
            return PlainTextResponse(NO_GAME, 404)
        return _maybe_gzipped(request, page, "text/html")

    async def data(self, request: Request) -> Response:
        """What `page` shows, as the replay viewer's data: a live table fills its frame with it."""
        game_id = _game_id(request)
        if game_id is None:
            return JSONResponse({"error": NO_GAME}, 404)
        try:
            final = await self.source.final_data(game_id)
        except Busy as exc:
            return JSONResponse({"error": str(exc)}, 503, headers={"retry-after": "2"})
        if final is not None:
            return Response(final, media_type="application/json")
        data = table_data(self.source.board, game_id)
        if data is None:
            return JSONResponse({"error": NO_GAME}, 404)
        return Response(msgspec.json.encode(data), media_type="application/json")

    # ------------------------------------------------------------ streams

    async def summary_events(self, request: Request) -> Response:
        return self.streams.response(self._summary_events())

    async def raw_events(self, request: Request) -> Response:
        """From `?after=N` or the Last-Event-ID header."""
        after = request.headers.get("last-event-id", request.query_params.get("after", "0"))
        start = int(after) if after.isascii() and after.isdigit() and len(after) < 19 else 0
        return self.streams.response(self._raw_events(start))

    async def table_moves(self, request: Request) -> Response:
        game_id = _game_id(request)
        g = None if game_id is None else self.source.board.game(game_id)
        return self.streams.response(self._table_moves(g))

    async def follow_moves(self, request: Request) -> Response:
        return self.streams.response(self._follow_moves())

    async def _beat(self, seen: int, gap: float = MIN_GAP_S, due_s: float | None = None) -> AsyncIterator[bytes]:
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
                yield b": keep-alive\n\n"
        await trio.sleep_until(math.ceil(trio.current_time() / gap) * gap)

    async def _summary_events(self) -> AsyncIterator[bytes]:
        while True:
            seen = self.source.board.version
            yield b"event: summary\ndata: " + self.source.summary_bytes() + b"\n\n"
            async for chunk in self._beat(seen):
                yield chunk

    def _raw_after(self, after: int) -> tuple[int, bytes]:
        """The public lines after number `after` as server-sent events, and the
        last one's number: made once for every viewer that has come as far."""
        recent = self.source.board.recent
        if not recent or recent[-1][0] <= after:
            return after, b""
        key = (after, recent[-1][0])
        if self._raw[0] != key:
            start = max(0, after - recent[0][0] + 1)  # the ring's lines are numbered without gaps
            self._raw = (key, b"".join(b"id: %d\ndata: %s\n\n" % line for line in islice(recent, start, None)))
        return key[1], self._raw[1]

    async def _raw_events(self, after: int) -> AsyncIterator[bytes]:
        board = self.source.board
        while True:
            seen = board.version
            after, body = self._raw_after(after)
            if body:
                yield body
            async for chunk in self._beat(seen, RAW_GAP_S):
                yield chunk

    async def _table_moves(self, g: LiveGame | None) -> AsyncIterator[bytes]:
        """`start` (the game's header), then `moves` (new rows, a JSON list)
        on each beat the game moved, then `over` (or `gone`: not on the board)."""
        if g is None:
            yield _event(b"gone", b"{}")
            return
        last: list[bytes] = []
        async for chunk in self._follow_game(g, [], last):
            yield chunk
        yield b"".join(last)

    async def _follow_moves(self) -> AsyncIterator[bytes]:
        """One game in progress after another, each as `_table_moves` sends it:
        the lowest-numbered game running that this viewer has not followed yet."""
        board = self.source.board
        followed: deque[int] = deque(maxlen=256)
        pending: list[bytes] = []  # the last game's end goes out with the next game's start
        while True:
            seen = board.version
            nxt = min((gid for gid in board.running if gid not in followed), default=None)
            if nxt is None:
                if pending:
                    yield b"".join(pending)
                    pending = []
                async for chunk in self._beat(seen):
                    yield chunk
                continue
            followed.append(nxt)
            last: list[bytes] = []
            async for chunk in self._follow_game(board.running[nxt], pending, last):
                yield chunk
            pending = last

    async def _follow_game(self, g: LiveGame, pieces: list[bytes], last: list[bytes]) -> AsyncIterator[bytes]:
        """One game's start and rows, beat by beat, one write a beat, until it
        is over or gone; its last pieces go to `last`, unsent."""
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
                try:
                    final = await self.source.final_data(g.game_id)  # the log's data, every card, when it may be shown
                except Busy:
                    final = None  # the table asks for the game's data itself
                over = end if final is None else end[:-1] + b',"data":' + final + b"}"
                last.extend([*pieces, _event(b"over", over)])
                return
            if board.game(g.game_id) is not g:  # abandoned, or a new run
                last.extend([*pieces, _event(b"gone", end)])
                return
            if pieces:
                yield b"".join(pieces)
                pieces = []
            if g.rows_over:
                give_up = min(give_up, trio.current_time() + LOG_WAIT_S)
                due = max(0.0, give_up - trio.current_time())
            else:
                due = next_due_s(board, g)  # type: ignore[assignment]
            async for chunk in self._beat(seen, due_s=due):
                yield chunk


def _maybe_gzipped(request: Request, body: bytes, media_type: str, cached: bool = False) -> Response:
    """A gzipped body as it is to a viewer that takes gzip (browsers do), else unzipped."""
    headers = {"cache-control": "private, max-age=3600"} if cached else {}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(body, media_type=media_type, headers={**headers, "content-encoding": "gzip"})
    return Response(gzip.decompress(body), media_type=media_type, headers=headers)
