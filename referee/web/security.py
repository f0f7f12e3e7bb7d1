"""What every page the referee serves gets, written once: security headers,
the `Host` check, the same-origin check for state-changing requests, and
unexpected errors as one logged line with an id.

The pages load only their own files (`Content-Security-Policy` without
inline script or style, no framing, no referrer), so a string that slipped
past escaping still could not run. The `Host` check keeps a page bound to
127.0.0.1 from being reached through a hostile DNS name that points there
(DNS rebinding). An unexpected error is logged as one line with an id and
answered with that id, never with a traceback, on a page or a terminal.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Iterable

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-src 'self' blob:; child-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOGGED = "_referee_error_id"  # set on an exception once it is logged

_log = logging.getLogger("referee.web")


def allowed_hosts(bind: str, names: Iterable[str] = ()) -> frozenset[str] | None:
    """The `Host` names a server bound to `bind` answers to; None: any (bound to
    every interface with no names given, where only a reverse proxy knows them)."""
    given = {n.lower() for n in names}
    if bind in ("0.0.0.0", "::", "") and not given:
        return None
    return frozenset({*given, *LOOPBACK_NAMES, bind.lower(), f"[{bind.lower()}]"})


def _host_name(scope: Scope) -> str:
    for key, value in scope.get("headers", []):
        if key == b"host":
            host = value.decode("latin-1").strip().lower()
            if host.startswith("["):
                return host[: host.find("]") + 1]
            return host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return ""


class WebGuard:
    """ASGI middleware: refuse a foreign `Host`, add the security headers to
    every answer, and turn an unexpected error into one logged line with an id."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.hosts is not None and _host_name(scope) not in self.hosts:
            response = Response("this server does not answer to that host name\n", 421, media_type="text/plain")
            await response(scope, receive, _with_headers(send))
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await _with_headers(send)(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if getattr(exc, LOGGED, None) is not None and started:
                return  # the app answered it already with its id (`unexpected_error`), and it is logged
            error_id = log_error(exc, scope)
            if started:  # the answer had begun (a stream): it ends here, cut short; the line above says why
                with contextlib.suppress(Exception):  # the client may be gone already
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await error_response(scope, error_id)(scope, receive, _with_headers(send))


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {k.lower() for k, _ in message.get("headers", [])}
            extra = [(k, v) for k, v in HEADERS if k not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending


async def unexpected_error(request: Request, exc: Exception) -> Response:
    """Starlette's handler for any exception: logged once with an id, answered with the id."""
    error_id = log_error(exc, request.scope)
    setattr(exc, LOGGED, error_id)
    return error_response(request.scope, error_id)


def log_error(exc: BaseException, scope: Scope) -> str:
    """Log an unexpected error as one line with a fresh id; return the id."""
    error_id = secrets.token_hex(4)
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" at {tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno}"
    what = " ".join(str(exc).split())[:200]
    _log.error(
        "error %s: %s %s: %s: %s%s",
        error_id,
        scope.get("method", ""),
        scope.get("path", ""),
        type(exc).__name__,
        what,
        where,
    )
    return error_id


def error_response(scope: Scope, error_id: str) -> Response:
    """What the client sees of an unexpected error: its id, nothing else."""
    text = f"the server failed on this request (error {error_id}); its host has the details"
    if scope.get("path", "").startswith("/api/") or b"application/json" in _header(scope, b"accept"):
        return JSONResponse({"error": text}, status_code=500)
    return HTMLResponse(f"<!doctype html><title>Error</title><p>{text}</p>", status_code=500)


def _header(scope: Scope, name: bytes) -> bytes:
    return next((v for k, v in scope.get("headers", []) if k == name), b"")


def same_origin(request: Request) -> bool:
    """A state-changing request comes from a page of this server. A browser says
    so in `Sec-Fetch-Site`; where it does not, its `Origin` must name this
    server's own scheme and host. (Under `Referrer-Policy: no-referrer` a form's
    `Origin` is `null`, so the fetch metadata is what a browser gives.) A client
    that is no browser sends neither; the CSRF token still binds it to a session."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")  # `none`: the person typed it, no page sent it
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    return origin == f"{request.url.scheme}://{request.headers.get('host', '')}"
