"""The host's controls as API routes, and the one control an owner has.

An admin token may: pause and resume matchmaking, close submissions (now or
at a time) and open them again, disqualify a bot and reinstate it, add users
and revoke their tokens, and export every unit, game and rating. A bot's
owner (or an admin) may make an older version that passed its check active
again. The host's web page offers the same actions: both call
`host_actions`, where what each action checks and changes is written once;
this module reads the JSON and answers a refusal as `{"error": ...}`.

Every change is a committed row before it is answered, so it survives a
restart; the server's matchmaker is told (`on_change`) so it acts at once.
A body is small JSON, read with a cap and decoded into a Struct that
refuses unknown fields: a mistake is a 400 in one line, and nothing changes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.arena import host_actions
from referee.arena.config import Arena
from referee.arena.controls import read_controls
from referee.arena.store import ArenaStore
from referee.arena.users import User, list_users
from referee.errors import ActionRefused
from referee.visible import visible

MAX_BODY = 16 << 10  # bytes of a control's JSON body
NO_STORE = {"Cache-Control": "no-store"}  # an answer holding a token is kept by no cache

Handler = Callable[[Request], Awaitable[Response]]
S = TypeVar("S", bound=msgspec.Struct)


class _Nothing(msgspec.Struct, forbid_unknown_fields=True):
    """The body of a switch: none, or `{}`."""


class _Close(msgspec.Struct, forbid_unknown_fields=True):
    at: datetime | None = None  # None: now


class _Disqualify(msgspec.Struct, forbid_unknown_fields=True):
    reason: str


class _NewUser(msgspec.Struct, forbid_unknown_fields=True):
    user: str
    admin: bool = False


async def _body(request: Request, struct: type[S]) -> S:
    """The request's JSON body as `struct` (an empty body is `{}`); 400 or 413 in one line."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise ActionRefused(f"the body is larger than a control takes ({MAX_BODY >> 10} KiB)", status=413)
    try:
        return msgspec.json.decode(bytes(data).strip() or b"{}", type=struct)
    except msgspec.ValidationError as exc:
        raise ActionRefused(f"the body: {visible(str(exc))}") from None
    except msgspec.DecodeError as exc:
        raise ActionRefused(f"the body is not JSON: {visible(str(exc))}") from None


def _refusing(handler: Handler) -> Handler:
    """`ActionRefused` becomes `{"error": ...}` with its status."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except ActionRefused as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)

    return run


class HostControls:
    """The routes, over one arena's config and database. `who` is the API's
    bearer-token check (401 without a valid token); `on_change` wakes the matchmaker.
    What each action checks and changes is `host_actions`', shared with the host's page."""

    def __init__(
        self, arena: Arena, store: ArenaStore, who: Callable[[Request], User | None], on_change: Callable[[], None]
    ) -> None:
        self.arena = arena
        self.store = store
        self.who = who
        self.on_change = on_change

    def admin(self, request: Request) -> User:
        user = self.who(request)
        assert user is not None  # `who` refuses a request without a token
        if not user.admin:
            raise ActionRefused("this is the host's: it needs an admin token", status=403)
        return user

    def _state(self) -> dict[str, Any]:
        controls = self.store.read(lambda c: read_controls(c, self.arena.submissions_close))
        shown = controls.as_dict(time.time())
        shown["submissions_close_from"] = "host" if controls.close_set_by_host else "arena.toml"
        return shown

    # ------------------------------------------------------------ matchmaking and submissions

    async def pause(self, request: Request) -> Response:
        return await self._switch(request, paused=True)

    async def resume(self, request: Request) -> Response:
        return await self._switch(request, paused=False)

    async def _switch(self, request: Request, *, paused: bool) -> Response:
        who = self.admin(request)
        await _body(request, _Nothing)
        host_actions.set_paused(self.store, paused=paused, by=who.name)
        self.on_change()
        return JSONResponse(self._state())

    async def close(self, request: Request) -> Response:
        who = self.admin(request)
        body = await _body(request, _Close)
        host_actions.close_submissions(self.store, body.at, by=who.name)
        return JSONResponse(self._state())

    async def open(self, request: Request) -> Response:
        who = self.admin(request)
        await _body(request, _Nothing)
        host_actions.open_submissions(self.store, by=who.name)
        return JSONResponse(self._state())

    # ------------------------------------------------------------ bots

    async def disqualify(self, request: Request) -> Response:
        who = self.admin(request)
        bot = str(request.path_params["name"])
        body = await _body(request, _Disqualify)
        out = host_actions.disqualify_bot(self.store, bot, body.reason, by=who.name)
        self.on_change()
        return JSONResponse({"bot": bot, "disqualified": out.as_dict(host_view=True)})

    async def reinstate(self, request: Request) -> Response:
        self.admin(request)
        bot = str(request.path_params["name"])
        await _body(request, _Nothing)
        host_actions.reinstate_bot(self.store, bot)
        self.on_change()
        return JSONResponse({"bot": bot, "disqualified": None})

    async def activate(self, request: Request) -> Response:
        """An owner's (or an admin's): an older version that passed its check plays again."""
        who = self.who(request)
        assert who is not None
        await _body(request, _Nothing)
        sub, retired = host_actions.reactivate_version(
            self.store, int(request.path_params["id"]), who, self.arena.submissions_close, time.time()
        )
        self.on_change()
        return JSONResponse({**sub.as_dict(), "retired": retired})

    # ------------------------------------------------------------ users

    async def users(self, request: Request) -> Response:
        self.admin(request)
        rows = self.store.read(list_users)
        return JSONResponse({"users": [_user(u) for u in rows]})

    async def add_user(self, request: Request) -> Response:
        self.admin(request)
        body = await _body(request, _NewUser)
        issued = host_actions.new_user(self.store, body.user, admin=body.admin)
        return JSONResponse(issued.as_dict(), status_code=201, headers=NO_STORE)

    async def revoke(self, request: Request) -> Response:
        who = self.admin(request)
        await _body(request, _Nothing)
        user = host_actions.revoke_user(self.store, str(request.path_params["name"]), by=who.name)
        return JSONResponse(_user(user))

    async def token(self, request: Request) -> Response:
        self.admin(request)
        await _body(request, _Nothing)
        issued = host_actions.reissue_token(self.store, str(request.path_params["name"]))
        return JSONResponse(issued.as_dict(), headers=NO_STORE)

    # ------------------------------------------------------------ exports

    async def export_json(self, request: Request) -> Response:
        self.admin(request)
        return _download(await host_actions.export_file(self.store, self.arena.name, None))

    async def export_csv(self, request: Request) -> Response:
        self.admin(request)
        return _download(await host_actions.export_file(self.store, self.arena.name, request.path_params["table"]))


def _user(user: User) -> dict[str, Any]:
    return {"user": user.name, "admin": user.admin, "created": user.created, "revoked": user.revoked}


def _download(file: host_actions.Download) -> Response:
    disposition = f'attachment; filename="{file.filename}"'
    return Response(file.data, media_type=file.media_type, headers={"Content-Disposition": disposition})


def host_routes(
    arena: Arena,
    store: ArenaStore,
    who: Callable[[Request], User | None],
    guard: Callable[[Handler], Handler],
    on_change: Callable[[], None] = lambda: None,
) -> list[Route]:
    """The controls' routes; `guard` is the API's own translation of errors (401s, a full disk...)."""
    c = HostControls(arena, store, who, on_change)
    table: list[tuple[str, Handler, str]] = [
        ("/api/admin/pause", c.pause, "POST"),
        ("/api/admin/resume", c.resume, "POST"),
        ("/api/admin/close", c.close, "POST"),
        ("/api/admin/open", c.open, "POST"),
        ("/api/admin/bots/{name}/disqualify", c.disqualify, "POST"),
        ("/api/admin/bots/{name}/reinstate", c.reinstate, "POST"),
        ("/api/admin/users", c.users, "GET"),
        ("/api/admin/users", c.add_user, "POST"),
        ("/api/admin/users/{name}/revoke", c.revoke, "POST"),
        ("/api/admin/users/{name}/token", c.token, "POST"),
        ("/api/admin/export.json", c.export_json, "GET"),
        ("/api/admin/export/{table}.csv", c.export_csv, "GET"),
        ("/api/submissions/{id:int}/activate", c.activate, "POST"),
    ]
    return [Route(path, guard(_refusing(handler)), methods=[method]) for path, handler, method in table]
