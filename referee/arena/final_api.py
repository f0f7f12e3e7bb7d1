"""The final tournament over HTTP: `GET /api/final`, which anyone may read,
and `POST /api/admin/final`, with which an admin starts (or resumes) the
final inside a running `arena serve` (docs/arena.md, "The final tournament").

The routes are a list of their own, added to the arena's app by `make_app`;
they take the app's way of knowing a user and of turning its errors into
answers from it, so a token is checked in one place. A server that plays
the final puts its `FinalHost` in the app's state; an app without one can
show the final but not start it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.arena.config import Arena
from referee.arena.final import FinalRefused
from referee.arena.final_run import FinalHost, final_status
from referee.arena.host_actions import start_final
from referee.arena.store import ArenaStore
from referee.arena.users import User

MAX_BODY = 4096
Handler = Callable[[Request], Awaitable[Response]]


class StartFinal(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The body of `POST /api/admin/final`."""

    deal_sets: int
    top: int | None = None  # None: every active bot
    force: bool = False  # start while submissions are still open


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class FinalApi:
    """The final's routes over one arena's folder."""

    def __init__(self, arena: Arena, store: ArenaStore, user_of: Callable[[Request], User | None]) -> None:
        self.arena = arena
        self.store = store
        self.user_of = user_of
        self.standings_cache: dict[tuple[str, str], dict[str, Any]] = {}

    async def _status(self, request: Request) -> dict[str, Any]:
        shown = await trio.to_thread.run_sync(final_status, self.arena.folder, self.standings_cache)
        host = _host(request)
        if host is not None and host.error is not None and shown["state"] != "done":
            shown["error"] = host.error
        return shown

    async def get(self, request: Request) -> Response:
        try:
            return JSONResponse(await self._status(request))
        except FinalRefused as exc:  # a damaged plan
            return _error(exc.status, str(exc))

    async def start(self, request: Request) -> Response:
        who = self.user_of(request)
        if who is None or not who.admin:
            return _error(403, "only an admin starts the final")
        body = await _read_body(request)
        if isinstance(body, Response):
            return body
        try:
            await start_final(_host(request), top=body.top, deal_sets=body.deal_sets, force=body.force, now=time.time())
        except FinalRefused as exc:  # a damaged database (ResultsError) gets the app's answer for one
            return _error(exc.status, str(exc))
        return JSONResponse(await self._status(request), status_code=202)


def _host(request: Request) -> FinalHost | None:
    host = getattr(request.app.state, "final_host", None)
    return host if isinstance(host, FinalHost) else None


async def _read_body(request: Request) -> StartFinal | Response:
    """The JSON body, read up to MAX_BODY bytes; an answer saying what is wrong otherwise."""
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            return _error(413, f'the body is larger than {MAX_BODY} bytes: send {{"top": N, "deal_sets": D}}')
    try:
        return msgspec.json.decode(data, type=StartFinal)
    except msgspec.DecodeError as exc:
        return _error(400, f'send JSON {{"top": N, "deal_sets": D}} (top optional, "force": true optional): {exc}')


def final_routes(
    arena: Arena,
    store: ArenaStore,
    user_of: Callable[[Request], User | None],
    guarded: Callable[[Handler], Handler],
) -> list[Route]:
    """`GET /api/final` and `POST /api/admin/final`, answering as `guarded` makes the app's routes answer."""
    api = FinalApi(arena, store, user_of)
    return [
        Route("/api/final", guarded(api.get), methods=["GET"]),
        Route("/api/admin/final", guarded(api.start), methods=["POST"]),
    ]
