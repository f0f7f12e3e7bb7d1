"""The host's controls as API routes, and the one control an owner has.

An admin token may: pause and resume matchmaking, close submissions (now or
at a time) and open them again, disqualify a bot and reinstate it, add users
and revoke their tokens, and export every unit, game and rating. A bot's
owner (or an admin) may make an older version that passed its check active
again. Web pages for the host are a thin layer over these routes.

Every change is a committed row before it is answered, so it survives a
restart; the server's matchmaker is told (`on_change`) so it acts at once.
A body is small JSON, read with a cap and decoded into a Struct that
refuses unknown fields: a mistake is a 400 in one line, and nothing changes.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import msgspec
import trio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.arena.config import Arena
from referee.arena.controls import check_open, in_utc, read_controls, set_close, set_matchmaking
from referee.arena.export import CSV_TABLES, export_csv, export_json
from referee.arena.store import ArenaStore, now_text
from referee.arena.submissions import (
    check_not_disqualified,
    disqualify,
    get_submission,
    reactivate,
    reinstate,
    submissions_of_bot,
)
from referee.arena.users import User, add_user, check_user_name, get_user, list_users, new_token, revoke
from referee.errors import ConfigError
from referee.visible import visible

MAX_BODY = 16 << 10  # bytes of a control's JSON body
MAX_REASON = 200  # characters of a disqualification's reason
USER_NAME_CHARS = 32  # as users.USER_NAME allows: a longer one is refused without being echoed
NO_STORE = {"Cache-Control": "no-store"}  # an answer holding a token is kept by no cache

Handler = Callable[[Request], Awaitable[Response]]
S = TypeVar("S", bound=msgspec.Struct)


class Refused(Exception):
    """A request the controls refuse: its status and its one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


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
            raise Refused(413, f"the body is larger than a control takes ({MAX_BODY >> 10} KiB)")
    try:
        return msgspec.json.decode(bytes(data).strip() or b"{}", type=struct)
    except msgspec.ValidationError as exc:
        raise Refused(400, f"the body: {visible(str(exc))}") from None
    except msgspec.DecodeError as exc:
        raise Refused(400, f"the body is not JSON: {visible(str(exc))}") from None


def _one_line(text: str, what: str, cap: int) -> str:
    """`text` stripped, refused (400) if empty, longer than `cap` or not one line of visible text."""
    text = text.strip()
    if not text:
        raise Refused(400, f"{what} is empty: say why, in one line")
    if len(text) > cap:
        raise Refused(400, f"{what} is longer than {cap} characters")
    if visible(text) != text:
        raise Refused(400, f"{what} must be one line of visible text: it holds {visible(text)}")
    return text


def _refusing(handler: Handler) -> Handler:
    """`Refused` becomes `{"error": ...}` with its status."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except Refused as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status)

    return run


class HostControls:
    """The routes, over one arena's config and database. `who` is the API's
    bearer-token check (401 without a valid token); `on_change` wakes the matchmaker."""

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
            raise Refused(403, "this is the host's: it needs an admin token")
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
        with self.store.transaction() as conn:
            set_matchmaking(conn, paused=paused, by=who.name, now=now_text())
        self.on_change()
        return JSONResponse(self._state())

    async def close(self, request: Request) -> Response:
        who = self.admin(request)
        body = await _body(request, _Close)
        try:
            at = datetime.now(UTC) if body.at is None else in_utc(body.at)
        except ValueError as exc:  # a time without a zone
            raise Refused(400, f"the body: `at`: {exc}") from None
        with self.store.transaction() as conn:
            set_close(conn, at, by=who.name, now=now_text())
        return JSONResponse(self._state())

    async def open(self, request: Request) -> Response:
        who = self.admin(request)
        await _body(request, _Nothing)
        with self.store.transaction() as conn:
            set_close(conn, None, by=who.name, now=now_text())
        return JSONResponse(self._state())

    # ------------------------------------------------------------ bots

    def _bot(self, request: Request) -> str:
        name = request.path_params["name"]
        if not self.store.read(lambda c: submissions_of_bot(c, name)):
            raise Refused(404, f"no bot {visible(name)!r}")
        return str(name)

    async def disqualify(self, request: Request) -> Response:
        who = self.admin(request)
        bot = self._bot(request)
        reason = _one_line((await _body(request, _Disqualify)).reason, "the reason", MAX_REASON)
        with self.store.transaction() as conn:
            out, new = disqualify(conn, bot, reason, who.name, now_text())
        if not new:
            raise Refused(409, f"the bot {bot!r} is disqualified already, since {out.since} ({out.reason})")
        self.on_change()
        return JSONResponse({"bot": bot, "disqualified": out.as_dict(host_view=True)})

    async def reinstate(self, request: Request) -> Response:
        self.admin(request)
        bot = self._bot(request)
        await _body(request, _Nothing)
        with self.store.transaction() as conn:
            was_out = reinstate(conn, bot)
        if not was_out:
            raise Refused(409, f"the bot {bot!r} is not disqualified")
        self.on_change()
        return JSONResponse({"bot": bot, "disqualified": None})

    async def activate(self, request: Request) -> Response:
        """An owner's (or an admin's): an older version that passed its check plays again."""
        who = self.who(request)
        assert who is not None
        sub_id = int(request.path_params["id"])
        await _body(request, _Nothing)
        with self.store.transaction() as conn:
            try:
                sub = get_submission(conn, sub_id)
            except KeyError:
                raise Refused(404, f"no submission {sub_id}") from None
            if not who.admin:
                if sub.owner != who.name:
                    raise Refused(403, f"{sub.bot} is another user's bot: only its owner chooses its version")
                check_open(conn, self.arena.submissions_close, time.time())  # the field is frozen once closed
            check_not_disqualified(conn, sub.bot)
            retired = reactivate(conn, sub.id, now_text())
            shown = get_submission(conn, sub.id).as_dict()
        self.on_change()
        return JSONResponse({**shown, "retired": retired})

    # ------------------------------------------------------------ users

    async def users(self, request: Request) -> Response:
        self.admin(request)
        rows = self.store.read(list_users)
        return JSONResponse({"users": [_user(u) for u in rows]})

    async def add_user(self, request: Request) -> Response:
        self.admin(request)
        body = await _body(request, _NewUser)
        if len(body.user) > USER_NAME_CHARS:
            raise Refused(400, f"a user name has at most {USER_NAME_CHARS} characters, not {len(body.user)}")
        try:
            check_user_name(body.user)
        except ConfigError as exc:
            raise Refused(400, visible(str(exc))) from None
        with self.store.transaction() as conn:
            if conn.execute("SELECT 1 FROM users WHERE name = ?", (body.user,)).fetchone():
                raise Refused(
                    409, f"user {body.user!r} exists: POST /api/admin/users/{body.user}/token gives a new token"
                )
            issued = add_user(conn, body.user, admin=body.admin, now=now_text())
        return JSONResponse(issued.as_dict(), status_code=201, headers=NO_STORE)

    def _user_name(self, request: Request) -> str:
        name = str(request.path_params["name"])
        try:
            self.store.read(lambda c: get_user(c, name))
        except ConfigError:
            raise Refused(404, f"no user {visible(name)!r}") from None
        return name

    async def revoke(self, request: Request) -> Response:
        who = self.admin(request)
        name = self._user_name(request)
        await _body(request, _Nothing)
        if name == who.name:
            raise Refused(409, "that is your own token: revoking it would lock you out (another admin may)")
        with self.store.transaction() as conn:
            user = revoke(conn, name, now=now_text())
        return JSONResponse(_user(user))

    async def token(self, request: Request) -> Response:
        self.admin(request)
        name = self._user_name(request)
        await _body(request, _Nothing)
        with self.store.transaction() as conn:
            issued = new_token(conn, name)
        return JSONResponse(issued.as_dict(), headers=NO_STORE)

    # ------------------------------------------------------------ exports

    async def export_json(self, request: Request) -> Response:
        self.admin(request)
        data = await _off_the_loop(self.store.read_snapshot, lambda c: export_json(c, self.arena.name))
        return _download(data, "application/json", f"{self.arena.name}-export.json")

    async def export_csv(self, request: Request) -> Response:
        self.admin(request)
        table = request.path_params["table"]
        if table not in CSV_TABLES:
            raise Refused(404, f"no export {visible(table)!r}: choose {', '.join(CSV_TABLES)}")
        data = await _off_the_loop(self.store.read_snapshot, lambda c: export_csv(c, table))
        return _download(data, "text/csv; charset=utf-8", f"{self.arena.name}-{table}.csv")


async def _off_the_loop(
    read: Callable[[Callable[[sqlite3.Connection], bytes]], bytes], query: Callable[[sqlite3.Connection], bytes]
) -> bytes:
    """An export built on a thread; a request cancelled (its client gone, the server
    stopping) does not wait for it: the thread finishes alone and closes its connection."""
    return await trio.to_thread.run_sync(read, query, abandon_on_cancel=True)


def _user(user: User) -> dict[str, Any]:
    return {"user": user.name, "admin": user.admin, "created": user.created, "revoked": user.revoked}


def _download(data: bytes, media_type: str, filename: str) -> Response:
    safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in filename)
    return Response(data, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{safe}"'})


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
