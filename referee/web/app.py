"""The browser seat's ASGI app: one page, its event stream, its choices.

Routes, all under the seat's token (any other path is a plain 404):
`GET /T/` the page; `GET /T/assets/NAME` its static files; `GET /T/events`
server-sent events, each a full snapshot (the latest first, so a reload
restores the page); `GET /T/state` the latest snapshot once; `POST /T/act` `{"id": request id, "action": {...}}`;
`POST /T/resign`; `POST /T/again` `{"again": true|false}`. A refused choice
answers 409 with `{"error": reason}`. Written as plain ASGI: five routes
need no framework.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.web.server import Receive, Send, answer_lifespan, event_stream, respond
from referee.web.session import Refused, WebPlayer

ASSETS = Path(__file__).resolve().parents[1] / "assets"
STATIC = {"play.html": "text/html", "play.js": "text/javascript", "play.css": "text/css", "replay.css": "text/css"}
MAX_BODY = 16 * 1024
KEEPALIVE_S = 15.0


async def _json(send: Send, status: int, value: Any) -> None:
    await respond(send, status, msgspec.json.encode(value))


async def _body(receive: Receive) -> bytes | None:
    """The request body, or None if it is too long to be a choice."""
    data = bytearray()
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            return None
        data += msg.get("body", b"")
        if len(data) > MAX_BODY:
            return None
        if not msg.get("more_body"):
            return bytes(data)


class SeatApp:
    """The ASGI app of one browser seat; `token` is its only key."""

    def __init__(self, token: str, player: WebPlayer) -> None:
        self.prefix = f"/{token}/"
        self.player = player

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        if not path.startswith(self.prefix):
            await respond(send, 404, b"not found", "text/plain")
            return
        route = path[len(self.prefix) :]
        if method == "GET" and route in ("", "play.html"):
            await self._static(send, "play.html")
        elif method == "GET" and route.startswith("assets/") and route[7:] in STATIC:
            await self._static(send, route[7:])
        elif method == "GET" and route == "events":
            await event_stream(receive, send, self._events)
        elif method == "GET" and route == "state":
            await _json(send, 200, self.player.snapshot())
        elif method == "POST" and route in ("act", "resign", "again"):
            await self._post(route, receive, send)
        else:
            await respond(send, 404, b"not found", "text/plain")

    async def _static(self, send: Send, name: str) -> None:
        body = (ASSETS / name).read_bytes()
        await respond(send, 200, body, STATIC[name])

    async def _post(self, route: str, receive: Receive, send: Send) -> None:
        raw = await _body(receive)
        try:
            data = msgspec.json.decode(raw) if raw else None
        except msgspec.DecodeError:
            data = None
        if raw is None or not isinstance(data, dict):
            await _json(send, 400, {"error": "the body must be a small JSON object"})
            return
        try:
            if route == "act":
                self.player.choose(data.get("id"), data.get("action"))
            elif route == "resign":
                self.player.resign()
            else:
                self.player.answer_again(bool(data.get("again")))
        except Refused as exc:
            await _json(send, 409, {"error": str(exc)})
            return
        await _json(send, 200, {"ok": True})

    async def _events(self, send: Send) -> None:
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
                data = msgspec.json.encode(player.snapshot())
                await send(
                    {"type": "http.response.body", "body": b"event: state\ndata: " + data + b"\n\n", "more_body": True}
                )
                continue
            with trio.move_on_after(KEEPALIVE_S):
                await changed.wait()
                continue
            await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
