"""The arena's HTTP API (JSON; docs/arena.md): a Starlette app on Trio.

Every answer is JSON; every error is `{"error": "one line"}` with a fitting
status. A user is known by `Authorization: Bearer TOKEN`, never by anything
in a URL, and the token is never written to a log line or an error. Uploads
are read as a stream and refused the moment they pass the arena's cap: the
body is never held in memory whole.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
from python_multipart import MultipartParser
from python_multipart.multipart import parse_options_header
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from referee.arena.admin_api import host_routes
from referee.arena.config import Arena
from referee.arena.final_api import final_routes
from referee.arena.final_run import FinalHost
from referee.arena.game_files import read_stderr, shown_log
from referee.arena.intake import Upload, accept, check_user_limits
from referee.arena.public_api import BadQuery, NotFound, PublicApi
from referee.arena.store import ArenaStore
from referee.arena.submissions import Submission, get_submission, owners_of, private_fields, submissions_of
from referee.arena.units import GameRow, get_game_row
from referee.arena.users import User, user_for_token
from referee.errors import ResultsError, SubmissionRefused

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

_log = logging.getLogger("referee.arena")
FORM_OVERHEAD = 64 * 1024  # multipart headers and the `name` field, beyond the archive itself
MAX_NAME_FIELD = 200


class ApiError(Exception):
    """An answer other than success: its status and its one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _error(status: int, message: str) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class ArenaApi:
    """The routes, over one arena's config and database."""

    def __init__(self, arena: Arena, store: ArenaStore, on_submission: Callable[[], None]) -> None:
        self.arena = arena
        self.store = store
        self.on_submission = on_submission

    # ------------------------------------------------------------ who asks

    def user(self, request: Request, *, required: bool = True) -> User | None:
        header = request.headers.get("authorization")
        if header is None:
            if required:
                raise ApiError(401, "this needs your token: send the header Authorization: Bearer TOKEN")
            return None
        scheme, _, token = header.partition(" ")
        who = self.store.read(lambda c: user_for_token(c, token.strip())) if scheme.lower() == "bearer" else None
        if who is None:
            raise ApiError(401, "the token is not valid (revoked, mistyped, or of another arena)")
        return who

    # ------------------------------------------------------------ submissions

    async def post_submission(self, request: Request) -> JSONResponse:
        who = self.user(request)
        assert who is not None
        check_user_limits(self.store, self.arena, who.name, time.time())  # before a byte of the body is read
        upload, fields = await read_form(request, Upload(self.arena.folder, self.arena.archives))
        bot = fields.get("name")
        received = await trio.to_thread.run_sync(upload.finish)
        sub, new = await trio.to_thread.run_sync(
            partial(accept, self.store, self.arena, who.name, bot or who.name, received)
        )
        if new:
            self.on_submission()
        return JSONResponse(_public(sub, owner_view=True), status_code=201 if new else 200)

    async def get_submission(self, request: Request) -> JSONResponse:
        who = self.user(request, required=False)
        try:
            sub = self.store.read(lambda c: get_submission(c, int(request.path_params["id"])))
        except KeyError:
            raise ApiError(404, f"no submission {request.path_params['id']}") from None
        if who is None or not (who.admin or who.name == sub.owner):
            return JSONResponse(_public(sub, owner_view=False))
        shown = _public(sub, owner_view=True)
        shown.update(self.store.read(lambda c: private_fields(c, sub.id)))
        shown["build_log"] = await trio.to_thread.run_sync(
            _build_log, self.arena.folder / "builds" / f"{sub.sha256}.log"
        )
        return JSONResponse(shown)

    async def get_archive(self, request: Request) -> Response:
        """A submission's archive as it was sent: its owner's source, for its owner and admins."""
        who = self.user(request)
        assert who is not None
        try:
            sub = self.store.read(lambda c: get_submission(c, int(request.path_params["id"])))
        except KeyError:
            raise ApiError(404, f"no submission {request.path_params['id']}") from None
        if not (who.admin or who.name == sub.owner):
            raise ApiError(403, f"submission {sub.id} is another user's: only its owner reads its source")
        data = await trio.to_thread.run_sync((self.arena.folder / "archives" / sub.sha256).read_bytes)
        suffix = {"zip": ".zip", "tar": ".tar", "tar.gz": ".tar.gz"}.get(sub.kind, "")
        return Response(
            data,
            media_type="application/octet-stream",
            headers={"Content-Disposition": f'attachment; filename="{sub.bot}.v{sub.version}{suffix}"'},
        )

    async def list_submissions(self, request: Request) -> JSONResponse:
        who = self.user(request)
        assert who is not None
        if request.query_params.get("mine") not in ("1", "true"):
            raise ApiError(400, "list your own submissions with ?mine=1 (the leaderboard lists every bot)")
        subs = self.store.read(lambda c: submissions_of(c, who.name))
        return JSONResponse({"submissions": [_public(s, owner_view=True) for s in subs]})

    # ------------------------------------------------------------ a finished game's files

    def _finished_game(self, request: Request) -> GameRow:
        game_id = int(request.path_params["id"])
        game = self.store.read(lambda c: get_game_row(c, game_id))
        if game is None:  # a running game, or one whose unit still plays its deal: served to no one
            raise ApiError(404, f"no finished game {game_id} (a game is shown once its whole unit has finished)")
        return game

    def _own_seats(self, who: User | None, game: GameRow) -> set[int] | None:
        """The seats of `game` whose bot `who` owns; None: every seat (an admin)."""
        if who is not None and who.admin:
            return None
        if who is None:
            return set()
        owners = self.store.read(lambda c: owners_of(c, game.seats))
        return {seat for seat, sub in enumerate(game.seats) if owners.get(sub) == who.name}

    async def game_log(self, request: Request) -> Response:
        who = self.user(request, required=False)
        game = self._finished_game(request)
        data = await trio.to_thread.run_sync((self.arena.folder / "logs" / game.log_name).read_bytes)
        return Response(
            shown_log(data, self._own_seats(who, game)),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{game.log_name}"'},
        )

    async def game_stderr(self, request: Request) -> Response:
        who = self.user(request)
        assert who is not None
        game = self._finished_game(request)
        seat = int(request.path_params["seat"])
        if seat >= len(game.seats):
            raise ApiError(404, f"game {game.id} has seats 0 to {len(game.seats) - 1}")
        own = self._own_seats(who, game)
        if own is not None and seat not in own:
            raise ApiError(403, f"seat {seat} of game {game.id} is another user's bot: only its owner reads its stderr")
        data = await trio.to_thread.run_sync(read_stderr, self.arena.folder / "logs", game.log_name, seat)
        return Response(
            data,
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="game{game.id}.seat{seat}.stderr"'},
        )


def _build_log(path: Path) -> str | None:
    """A build's log as text (its size was capped when it was written)."""
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return None


def _public(sub: Submission, *, owner_view: bool) -> dict[str, Any]:
    """What anyone may see of a submission; its reason only to its owner and admins."""
    d = sub.as_dict()
    if not owner_view:
        d.pop("reason", None)
    return d


async def read_form(
    request: Request, upload: Upload, small_fields: tuple[str, ...] = ("name",)
) -> tuple[Upload, dict[str, str]]:
    """The multipart body read as it arrives: the field `archive` into `upload`,
    the short text `small_fields` if sent; anything else, or too much, is refused at once."""
    ctype, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if ctype != b"multipart/form-data" or not boundary:
        upload.discard()
        raise ApiError(415, "send multipart/form-data with the archive in the field `archive`")
    cap = upload.limits.max_upload_bytes + FORM_OVERHEAD
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        upload.discard()
        mib = upload.limits.max_upload_bytes / (1 << 20)
        raise ApiError(413, f"the upload is larger than the arena takes ({mib:g} MiB)")
    form = _Form(upload, small_fields)
    parser = MultipartParser(boundary, form.callbacks())
    seen = 0
    try:
        async for chunk in request.stream():
            seen += len(chunk)
            if seen > cap:
                raise SubmissionRefused("the upload is larger than the arena takes", status=413)
            parser.write(chunk)
        parser.finalize()
    except BaseException:
        upload.discard()
        raise
    if not form.got_archive:
        upload.discard()
        raise ApiError(400, "no field `archive` in the form: send the bot's .zip, .tar or .tar.gz as `archive`")
    return upload, form.small


class _Form:
    """Callbacks of the multipart parser: which field a part is, where its bytes go."""

    def __init__(self, upload: Upload, small_fields: tuple[str, ...]) -> None:
        self.upload = upload
        self.small_fields = small_fields
        self.small: dict[str, str] = {}  # the short text fields, by name
        self.got_archive = False
        self._header = b""
        self._field: str | None = None
        self._text = bytearray()

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_header_field": self._on_header_field,
            "on_header_value": self._on_header_value,
            "on_headers_finished": self._on_headers_finished,
            "on_part_data": self._on_part_data,
            "on_part_end": self._on_part_end,
        }

    def _on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._header = data[start:end].lower()

    def _on_header_value(self, data: bytes, start: int, end: int) -> None:
        if self._header == b"content-disposition":
            _kind, params = parse_options_header(data[start:end])
            self._field = params.get(b"name", b"").decode("utf-8", "replace")

    def _on_headers_finished(self) -> None:
        if self._field != "archive" and self._field not in self.small_fields:
            raise SubmissionRefused(f"unknown form field {self._field!r}: send `archive` and, if you like, `name`")
        if self._field == "archive" and self.got_archive:
            raise SubmissionRefused("two fields `archive`: send one archive per submission")
        if self._field in self.small:
            raise SubmissionRefused(f"two fields `{self._field}`: send each once")

    def _on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._field == "archive":
            self.got_archive = True
            self.upload.write(data[start:end])
        else:
            self._text += data[start:end]
            if len(self._text) > MAX_NAME_FIELD:
                raise SubmissionRefused(f"the field `{self._field}` is too long")

    def _on_part_end(self) -> None:
        if self._field == "archive":
            self.got_archive = True
        elif self._field is not None:
            self.small[self._field] = self._text.decode("utf-8", "replace").strip()
            self._text = bytearray()
        self._field = None


def _guarded(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Expected failures become `{"error": ...}` answers; nothing else leaks."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except ApiError as exc:
            return _error(exc.status, str(exc))
        except NotFound as exc:
            return _error(404, str(exc))
        except BadQuery as exc:
            return _error(400, str(exc))
        except SubmissionRefused as exc:
            return _error(exc.status, str(exc))
        except ResultsError as exc:
            return _error(503, str(exc))
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            _log.error("the arena's disk is full (%s %s): the request was refused", request.method, request.url.path)
            return _error(507, "the arena's disk is full: nothing of this request was kept; try again later")

    return run


def api_routes(arena: Arena, store: ArenaStore, on_change: Callable[[], None] = lambda: None) -> list[Route]:
    """The API's routes; `on_change` hears of each new submission and of each host's or
    owner's change to who plays (the pipeline and the matchmaker look again)."""
    api = ArenaApi(arena, store, on_change)
    public = PublicApi(arena, store)
    routes = [
        Route("/api/submissions", _guarded(api.post_submission), methods=["POST"]),
        Route("/api/submissions", _guarded(api.list_submissions), methods=["GET"]),
        Route("/api/submissions/{id:int}", _guarded(api.get_submission), methods=["GET"]),
        Route("/api/submissions/{id:int}/archive", _guarded(api.get_archive), methods=["GET"]),
        Route("/api/leaderboard", _guarded(public.leaderboard), methods=["GET"]),
        Route("/api/bots/{name}", _guarded(public.bot), methods=["GET"]),
        Route("/api/games", _guarded(public.games), methods=["GET"]),
        Route("/api/games/{id:int}/log", _guarded(api.game_log), methods=["GET"]),
        Route("/api/games/{id:int}/stderr/{seat:int}", _guarded(api.game_stderr), methods=["GET"]),
        *host_routes(arena, store, api.user, _guarded, on_change),
    ]
    return routes + final_routes(arena, store, api.user, _guarded)


async def api_error(request: Request, exc: Exception) -> JSONResponse:
    """A route that does not exist, a wrong method, or an unexpected error: one line of JSON."""
    if isinstance(exc, HTTPException):
        what = "no such route" if exc.status_code == 404 else str(exc.detail)
        return _error(exc.status_code, f"{what}: {request.method} {request.url.path} (docs/arena.md lists the API)")
    return _error(500, "the arena failed on this request; its host has the details")


def make_app(
    arena: Arena,
    store: ArenaStore,
    on_change: Callable[[], None] = lambda: None,
    final_host: FinalHost | None = None,
) -> Starlette:
    """The API alone, as an app of its own (its tests; the site mounts the same routes).
    `final_host`: where `POST /api/admin/final` plays the final (a running server)."""
    routes = api_routes(arena, store, on_change)
    app = Starlette(routes=routes, exception_handlers={HTTPException: api_error, Exception: api_error})
    app.state.final_host = final_host
    return app
