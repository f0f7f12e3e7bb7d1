"""The browser seat's routes: one page, its event stream, its choices.

Behind the gate (`referee.web.gate`: the printed URL is good once, then a
session cookie), relative to the server's root: `GET /` the page (with the
session's CSRF token in a `<meta>`); `GET /assets/NAME` its static files;
`GET /events` server-sent events, each a full snapshot (the latest first, so
a reload restores the page); `GET /state` the latest snapshot once;
`POST /act` `{"id": request id, "action": {...}}`; `POST /resign`;
`POST /again` `{"again": true|false}`. A refused choice answers 409 with
`{"error": reason}`; a body that is not a small JSON object, 400.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import trio
from markupsafe import escape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from referee.web.gate import session_of
from referee.web.server import ASSETS, EventStreams, assets_mount
from referee.web.session import Refused, WebPlayer

MAX_BODY = 16 * 1024
KEEPALIVE_S = 15.0
CSRF_MARK = "@@CSRF@@"


class SeatApp:
    """The routes of one browser seat."""

    def __init__(self, player: WebPlayer, streams: EventStreams | None = None) -> None:
        self.player = player
        self.streams = streams or EventStreams()
        self._page = (ASSETS / "play.html").read_text(encoding="utf-8")

    @property
    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.page),
            Route("/events", self.events),
            Route("/state", self.state),
            Route("/act", self.act, methods=["POST"]),
            Route("/resign", self.resign, methods=["POST"]),
            Route("/again", self.again, methods=["POST"]),
            assets_mount(),
        ]

    async def page(self, request: Request) -> Response:
        return HTMLResponse(self._page.replace(CSRF_MARK, str(escape(session_of(request).csrf))))

    async def state(self, request: Request) -> Response:
        return JSONResponse(self.player.snapshot())

    async def events(self, request: Request) -> Response:
        return self.streams.response(self._events())

    async def act(self, request: Request) -> Response:
        return await _choice(request, lambda data: self.player.choose(data.get("id"), data.get("action")))

    async def resign(self, request: Request) -> Response:
        return await _choice(request, lambda _data: self.player.resign())

    async def again(self, request: Request) -> Response:
        return await _choice(request, lambda data: self.player.answer_again(bool(data.get("again"))))

    async def _events(self) -> AsyncIterator[bytes]:
        """Server-sent events: the current snapshot, then every new one."""
        seen = -1
        while True:
            player = self.player
            # Taken before the version is read: a change made while a snapshot is being
            # sent sets this event, so it is never missed (waiting on the event that
            # replaced it would hold the new state back until the next keep-alive).
            changed = player.changed
            if player.version != seen:
                seen = player.version
                yield b"event: state\ndata: " + msgspec.json.encode(player.snapshot()) + b"\n\n"
                continue
            with trio.move_on_after(KEEPALIVE_S):
                await changed.wait()
                continue
            yield b": keep-alive\n\n"


async def _small_json(request: Request) -> dict[str, Any] | None:
    """The body as a JSON object, or None if it is not a small one."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            return None
    try:
        value = msgspec.json.decode(bytes(data)) if data else None
    except (msgspec.DecodeError, RecursionError, ValueError):  # RecursionError: [[[[...]]]] nested deep
        return None
    return value if isinstance(value, dict) else None


async def _choice(request: Request, take: Any) -> Response:
    data = await _small_json(request)
    if data is None:
        return JSONResponse({"error": "the body must be a small JSON object"}, 400)
    try:
        take(data)
    except Refused as exc:
        return JSONResponse({"error": str(exc)}, 409)
    return JSONResponse({"ok": True})
