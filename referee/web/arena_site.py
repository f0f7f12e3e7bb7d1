"""The arena's web site: the pages people use, and the JSON API beside them,
as one Starlette app behind `WebGuard`.

People sign in once with their token (`/signin`); their browser then holds
a session cookie and never the token, and every form that changes anything
carries the session's CSRF token and must come from this site's own
origin. The JSON API keeps `Authorization: Bearer` and reads no cookie, so
no other site can drive it through a visitor's browser. A page that is
someone else's (a build log, a stderr, a source) answers 404, as a page
that does not exist does. Pages read the database through a connection of
their own on worker threads, so no request, however heavy, takes a
decision's time from the games.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import msgspec
import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from referee.arena.api import api_error, api_routes, archive_response, read_form
from referee.arena.config import Arena
from referee.arena.final_run import FinalHost, final_status
from referee.arena.game_files import read_stderr, shown_log
from referee.arena.intake import Upload, accept, check_user_limits
from referee.arena.kits import KIT_LANGUAGES
from referee.arena.store import ArenaStore
from referee.arena.submissions import Submission, get_submission, owners_of
from referee.arena.units import GameRow, get_game_row
from referee.arena.users import User, get_user, user_for_token
from referee.errors import ConfigError, RefereeError, ResultsError, SubmissionRefused
from referee.web import arena_views as views
from referee.web.arena_admin import AdminPages
from referee.web.arena_visitors import NotHere, Redirect, Visitor
from referee.web.page_renderer import PageRenderer
from referee.web.security import WebGuard, same_origin, unexpected_error
from referee.web.sessions import COOKIE, Sessions, clear_cookie, csrf_ok, set_cookie
from referee.web.templates import page

ASSETS = Path(__file__).resolve().parents[1] / "assets"
SERVED_ASSETS = {
    "arena.css": "text/css",
    "arena.js": "text/javascript",
    "replay.css": "text/css",
    "replay.js": "text/javascript",
}
SIGNIN_COOKIE = "chicago_referee_signin"
MAX_FORM_BYTES = 16 * 1024
STREAM_BEAT_S = 1.0  # a stream sends at most this often
MAX_STREAMS = 1000  # event-stream subscribers at once; more are refused (503)
READERS = 2  # page reads on worker threads at once
BOT_VIEW_S = 5.0  # a bot's page is read from the database at most this often
BOT_VIEWS_KEPT = 512


class ArenaSite:
    """The pages of one arena."""

    def __init__(
        self,
        arena: Arena,
        store: ArenaStore,
        reader: ArenaStore,
        on_submission: Callable[[], None],
        *,
        secure_cookies: bool,
        live: bool = False,
    ) -> None:
        self.arena = arena
        self.live = live  # the live dashboard is served under /live/
        self.on_submission = on_submission
        self.store = store  # writes (uploads) go where the API's go
        self.reader = reader  # reads, on threads, never waiting on the games' lock
        self.secure = secure_cookies
        self.sessions = Sessions()
        self.limiter = trio.CapacityLimiter(READERS)
        self.streams = 0
        self._assets: dict[str, bytes] = {}
        self._board_lock = trio.Lock()
        self._board_at = -math.inf
        self._board_event = b""
        self.renderer = PageRenderer()
        self._heavy = trio.Lock()
        self._bot_views: dict[str, tuple[float, dict[str, Any]]] = {}
        self._final_standings: dict[tuple[str, str], dict[str, Any]] = {}
        self._kits: list[dict[str, Any]] | None = None  # probed once: the machine's toolchains do not move

    async def read(self, query: Callable[..., Any], *args: Any) -> Any:
        """`query(conn, *args)` on a worker thread, on the pages' own connection."""
        return await trio.to_thread.run_sync(self.reader.read, lambda conn: query(conn, *args), limiter=self.limiter)

    # ------------------------------------------------------------ who asks

    async def visitor(self, request: Request) -> Visitor:
        session = self.sessions.of(request)
        if session is None:
            return Visitor(None, None)
        user: User | None
        try:
            user = await self.read(lambda c: get_user(c, session.user))
        except ConfigError:  # the user is gone
            user = None
        if user is None or user.revoked:
            self.sessions.close_user(session.user)
            return Visitor(None, None)
        return Visitor(user, session)

    async def signed_in(self, request: Request) -> Visitor:
        who = await self.visitor(request)
        if who.user is None:
            raise Redirect("/signin")
        return who

    async def small_form(self, request: Request) -> dict[str, str]:
        """A short urlencoded form (sign in, sign out), refused when large."""
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                raise HTTPException(413, "the form is too large")
        return dict(parse_qsl(body.decode("utf-8", "replace"), max_num_fields=10))

    def context(self, who: Visitor, **extra: Any) -> dict[str, Any]:
        a = self.arena
        site = {
            "name": a.name,
            "game": a.game.name,
            "table_size": a.table_size,
            "rules": _rules_text(a.rules),
            "clock": f"{a.time_control.decision_ms} ms a decision",
            "submissions": "Submissions are open.",
            "max_upload_mib": a.archives.max_upload_bytes >> 20,
            "live": self.live,
        }
        return {"site": site, "me": who.user, "csrf": who.csrf, **extra}

    # ------------------------------------------------------------ public pages

    async def leaderboard(self, request: Request) -> Response:
        who = await self.visitor(request)
        board = await self.read(views.board_view, self.arena.submissions_close)
        final = await self.final_status()
        return page("arena_leaderboard.html", **self.context(who, board=board, final=final))

    async def final_status(self) -> dict[str, Any]:
        """The final tournament as `GET /api/final` shows it; nothing when it cannot be read."""
        try:
            shown: dict[str, Any] = await trio.to_thread.run_sync(
                final_status, self.arena.folder, self._final_standings, limiter=self.limiter
            )
        except RefereeError:  # a damaged final: GET /api/final says so; the front page stays up
            return {"state": "none"}
        return shown

    async def board_event(self) -> bytes:
        """The leaderboard as one encoded event, read at most once a beat however
        many watch: every viewer is sent the same bytes."""
        async with self._board_lock:
            if trio.current_time() - self._board_at >= STREAM_BEAT_S:
                board = await self.read(views.board_view, self.arena.submissions_close)
                for e in board["bots"]:
                    e.pop("age", None)
                self._board_event = b"event: board\ndata: " + msgspec.json.encode(board) + b"\n\n"
                self._board_at = trio.current_time()
            return self._board_event

    async def leaderboard_events(self, request: Request) -> Response:
        async def changes() -> AsyncIterator[bytes]:
            last = b""
            while True:
                event = await self.board_event()
                yield event if event != last else b": beat\n\n"
                last = event
                await trio.sleep(STREAM_BEAT_S)

        return self._stream(changes())

    async def bot(self, request: Request) -> Response:
        who = await self.visitor(request)
        name = request.path_params["name"]
        held = self._bot_views.get(name)
        if held is not None and trio.current_time() - held[0] < BOT_VIEW_S:
            view = held[1]
        else:
            async with self._heavy:  # one bot page read at a time, however many ask
                view = await self.read(views.bot_view, name)
            if view is not None:
                self._bot_views[name] = (trio.current_time(), view)
                while len(self._bot_views) > BOT_VIEWS_KEPT:
                    self._bot_views.pop(next(iter(self._bot_views)))
        if view is None:
            raise NotHere
        return page("arena_bot.html", **self.context(who, **view))

    async def game(self, request: Request) -> Response:
        game = await self._game(request)
        who = await self.visitor(request)
        own = await self._own_seats(who, game)
        data = await self.renderer.page(self.arena.folder / "logs" / game.log_name, own, game.id)
        return Response(data, media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-store"})

    async def game_log(self, request: Request) -> Response:
        game = await self._game(request)
        who = await self.visitor(request)
        data = await trio.to_thread.run_sync(
            self._log_bytes, game, await self._own_seats(who, game), limiter=self.limiter
        )
        return Response(
            data,
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="game{game.id}.jsonl"'},
        )

    async def start(self, request: Request) -> Response:
        who = await self.visitor(request)
        if self._kits is None:
            self._kits = await trio.to_thread.run_sync(views.kits_view, limiter=self.limiter)
        return page("arena_start.html", **self.context(who, kits=self._kits))

    async def kit(self, request: Request) -> Response:
        """A starter kit as a .tar.gz, the same files `arena kit` writes."""
        language = request.path_params["language"]
        if language not in KIT_LANGUAGES:
            raise NotHere
        data = await trio.to_thread.run_sync(views.kit_archive, language, limiter=self.limiter)
        return Response(
            data,
            media_type="application/gzip",
            headers={"Content-Disposition": f'attachment; filename="{language}-starter.tar.gz"'},
        )

    # ------------------------------------------------------------ signing in and out

    async def signin_form(self, request: Request) -> Response:
        who = await self.visitor(request)
        if who.user is not None:
            return RedirectResponse("/me", 303)
        return self._signin_page(who, None, 200)

    def _signin_page(self, who: Visitor, error: str | None, status: int) -> Response:
        nonce = secrets.token_urlsafe(24)  # the form's CSRF token before any session: double-submitted
        response = page("arena_signin.html", status=status, **{**self.context(who), "csrf": nonce, "error": error})
        response.set_cookie(
            SIGNIN_COOKIE, nonce, max_age=3600, path="/signin", httponly=True, samesite="strict", secure=self.secure
        )
        return response

    async def signin(self, request: Request) -> Response:
        form = await self.small_form(request)
        sent, expected = form.get("csrf", ""), request.cookies.get(SIGNIN_COOKIE, "")
        if not same_origin(request) or not expected or not secrets.compare_digest(sent, expected):
            raise HTTPException(403, "this form must be sent from this site's own sign-in page")
        token = form.get("token", "").strip()
        user = await self.read(lambda c: user_for_token(c, token)) if token else None
        if user is None:
            return self._signin_page(Visitor(None, None), "That token is not valid (revoked or mistyped).", 401)
        key, _session = self.sessions.open(user.name, admin=user.admin)
        response = RedirectResponse("/me", 303)
        set_cookie(response, key, secure=self.secure)
        response.delete_cookie(SIGNIN_COOKIE, path="/signin")
        return response

    async def signout(self, request: Request) -> Response:
        who = await self.visitor(request)
        form = await self.small_form(request)
        self.check_form(request, who, form.get("csrf"))
        self.sessions.close(request.cookies.get(COOKIE))
        response = RedirectResponse("/", 303)
        clear_cookie(response, secure=self.secure)
        return response

    def check_form(self, request: Request, who: Visitor, sent: object) -> None:
        if not same_origin(request) or not csrf_ok(who.session, sent):
            raise HTTPException(403, "this form must be sent from this site's own page, signed in")

    # ------------------------------------------------------------ a competitor's own pages

    async def me(self, request: Request) -> Response:
        who = await self.signed_in(request)
        assert who.user is not None
        subs = await self.read(views.my_view, who.user.name)
        notice = {"sent": "Received: it is queued for its build and check."}.get(request.query_params.get("n", ""))
        return page("arena_me.html", **self.context(who, subs=subs, notice=notice, error=None))

    async def me_events(self, request: Request) -> Response:
        who = await self.signed_in(request)
        assert who.user is not None
        owner = who.user.name

        async def changes() -> AsyncIterator[bytes]:
            last = b""
            while True:
                subs: list[Submission] = await self.read(views.my_view, owner)
                data = msgspec.json.encode([{"id": s.id, "status": s.status, "reason": s.reason} for s in subs])
                yield (b"event: subs\ndata: " + data + b"\n\n") if data != last else b": beat\n\n"
                last = data
                await trio.sleep(STREAM_BEAT_S)

        return self._stream(changes())

    async def upload(self, request: Request) -> Response:
        who = await self.signed_in(request)
        assert who.user is not None
        if not same_origin(request):
            raise HTTPException(403, "this form must be sent from this site's own page, signed in")
        owner = who.user.name
        try:
            check_user_limits(self.store, self.arena, owner, time.time())
            upload, fields = await read_form(request, Upload(self.arena.folder, self.arena.archives), ("name", "csrf"))
            if not csrf_ok(who.session, fields.get("csrf")):
                upload.discard()
                raise HTTPException(403, "this form must be sent from this site's own page, signed in")
            received = await trio.to_thread.run_sync(upload.finish)
            await trio.to_thread.run_sync(
                partial(accept, self.store, self.arena, owner, fields.get("name") or owner, received)
            )
        except SubmissionRefused as exc:
            subs = await self.read(views.my_view, owner)
            return page("arena_me.html", status=exc.status, **self.context(who, subs=subs, notice=None, error=str(exc)))
        self.on_submission()
        return RedirectResponse("/me?n=sent", 303)

    async def submission(self, request: Request) -> Response:
        who = await self.signed_in(request)
        sub = await self.own_submission(request, who)
        view = await self.read(views.submission_view, sub)
        build_log = await trio.to_thread.run_sync(self._build_log, sub.sha256)
        notice = "That version is the bot's active one again." if request.query_params.get("n") == "active" else None
        error = request.query_params.get("e")
        return page(
            "arena_submission.html",
            **self.context(who, sub=sub, build_log=build_log, notice=notice, error=error, **view),
        )

    async def archive(self, request: Request) -> Response:
        who = await self.signed_in(request)
        sub = await self.own_submission(request, who)
        return await archive_response(self.arena.folder, sub)

    async def stderr(self, request: Request) -> Response:
        who = await self.signed_in(request)
        game = await self._game(request)
        seat = int(request.path_params["seat"])
        own = await self._own_seats(who, game)
        if seat >= len(game.seats) or (own is not None and seat not in own):
            raise NotHere
        data = await trio.to_thread.run_sync(read_stderr, self.arena.folder / "logs", game.log_name, seat)
        return Response(data, media_type="text/plain; charset=utf-8")

    # ------------------------------------------------------------ helpers

    async def _game(self, request: Request) -> GameRow:
        game_id = int(request.path_params["id"])
        game: GameRow | None = await self.read(lambda c: get_game_row(c, game_id))
        if game is None:
            raise NotHere
        return game

    async def _own_seats(self, who: Visitor, game: GameRow) -> set[int] | None:
        if who.user is not None and who.user.admin:
            return None
        if who.user is None:
            return set()
        owners = await self.read(lambda c: owners_of(c, game.seats))
        return {seat for seat, sub in enumerate(game.seats) if owners.get(sub) == who.user.name}

    async def own_submission(self, request: Request, who: Visitor) -> Submission:
        assert who.user is not None
        try:
            sub: Submission = await self.read(lambda c: get_submission(c, int(request.path_params["id"])))
        except KeyError:
            raise NotHere from None
        if not (who.user.admin or sub.owner == who.user.name):
            raise NotHere
        return sub

    def _log_bytes(self, game: GameRow, own: set[int] | None) -> bytes:
        return shown_log((self.arena.folder / "logs" / game.log_name).read_bytes(), own)

    def _build_log(self, sha256: str) -> str | None:
        try:
            return (self.arena.folder / "builds" / f"{sha256}.log").read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            return None

    def _stream(self, body: AsyncIterator[bytes]) -> Response:
        if self.streams >= MAX_STREAMS:
            raise HTTPException(503, "too many live viewers right now; reload in a minute")
        self.streams += 1

        async def counted() -> AsyncIterator[bytes]:
            try:
                async for chunk in body:
                    yield chunk
            finally:
                self.streams -= 1

        return StreamingResponse(counted(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        kind = SERVED_ASSETS.get(name)
        if kind is None:
            raise NotHere
        if name not in self._assets:
            self._assets[name] = (ASSETS / name).read_bytes()
        return Response(self._assets[name], media_type=kind, headers={"Cache-Control": "max-age=300"})


def _rules_text(rules: Any) -> str:
    """The rules as far as they differ from the game's defaults, in a few words."""
    fields = getattr(rules, "__struct_fields__", ())
    try:
        defaults = type(rules)()
    except TypeError:  # no defaults to compare with: name what there is
        defaults = None
    changed = [f for f in fields if defaults is None or getattr(rules, f) != getattr(defaults, f)]
    if not changed:
        return "the default rules"
    return "rules as default but " + ", ".join(f"{f.replace('_', ' ')} {getattr(rules, f)}" for f in changed)


def make_site(
    arena: Arena,
    store: ArenaStore,
    on_submission: Callable[[], None],
    final_host: FinalHost | None = None,
    *,
    reader: ArenaStore,
    hosts: frozenset[str] | None,
    secure_cookies: bool = False,
    live_routes: Sequence[BaseRoute] = (),
) -> WebGuard:
    """The arena's pages and its API as one app, behind the web guard; and
    the live dashboard's routes (under `/live`) when the server has one."""
    site = ArenaSite(arena, store, reader, on_submission, secure_cookies=secure_cookies, live=bool(live_routes))
    admin = AdminPages(site)

    def pg(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except Redirect as r:
                return RedirectResponse(r.to, 303)
            except NotHere:
                return await _page_error(request, 404, "There is no such page (or it is not yours).")
            except (ResultsError, RefereeError) as exc:
                return await _page_error(request, 503, str(exc))

        return run

    routes = [
        Route("/", pg(site.leaderboard)),
        Route("/events/leaderboard", pg(site.leaderboard_events)),
        Route("/start", pg(site.start)),
        Route("/start/kits/{language}.tar.gz", pg(site.kit)),
        Route("/signin", pg(site.signin_form), methods=["GET"]),
        Route("/signin", pg(site.signin), methods=["POST"]),
        Route("/signout", pg(site.signout), methods=["POST"]),
        Route("/me", pg(site.me)),
        Route("/events/me", pg(site.me_events)),
        Route("/me/upload", pg(site.upload), methods=["POST"]),
        Route("/me/submissions/{id:int}", pg(site.submission)),
        Route("/me/submissions/{id:int}/archive", pg(site.archive)),
        Route("/me/games/{id:int}/stderr/{seat:int}", pg(site.stderr)),
        Route("/bots/{name}", pg(site.bot)),
        Route("/games/{id:int}", pg(site.game)),
        Route("/games/{id:int}/log", pg(site.game_log)),
        Route("/assets/{name}", pg(site.asset)),
        Route("/me/submissions/{id:int}/activate", pg(admin.activate), methods=["POST"]),
        Route("/admin", pg(admin.page)),
        Route("/admin/matchmaking", pg(admin.matchmaking), methods=["POST"]),
        Route("/admin/submissions", pg(admin.submissions), methods=["POST"]),
        Route("/admin/bots/{name}", pg(admin.bot), methods=["POST"]),
        Route("/admin/users", pg(admin.add_user), methods=["POST"]),
        Route("/admin/users/{name}/revoke", pg(admin.revoke_user), methods=["POST"]),
        Route("/admin/final", pg(admin.final), methods=["POST"]),
        Route("/admin/export.json", pg(admin.export)),
        Route("/admin/export/{table}.csv", pg(admin.export)),
        *api_routes(arena, store, on_submission),
        *live_routes,
    ]

    async def _page_error(request: Request, status: int, message: str) -> Response:
        who = await site.visitor(request)
        return page("arena_error.html", status=status, **site.context(who, code=status, message=message))

    async def http_error(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/"):
            return await api_error(request, exc)
        if isinstance(exc, HTTPException):
            text = "There is no such page." if exc.status_code == 404 else str(exc.detail)
            return await _page_error(request, exc.status_code, text)
        return await unexpected_error(request, exc)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            site.renderer.close()

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, Exception: unexpected_error},
        lifespan=lifespan,
    )
    app.state.final_host = final_host  # POST /api/admin/final plays the final in the running server
    return WebGuard(app, hosts)
