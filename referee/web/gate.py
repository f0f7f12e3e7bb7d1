"""The one door into the pages a command serves (`play --web`, a dashboard):
a token in the first URL, good once, then a session cookie.

The command prints `http://HOST:PORT/TOKEN/` and opens it. The first request
for that URL opens a session: its key goes to the browser in an `HttpOnly`,
`SameSite=Strict` cookie, and the browser is sent on to the same pages
without the token. The token is then spent: the same URL opens nothing a
second time, so a URL seen in `ps` (a browser started with it), in a
terminal's scrollback or in the browser's history is worth nothing. (Jupyter's
servers do the same.) Every other path needs the cookie; a request that
changes something (the seat's choices) also needs the session's CSRF token
in the `X-CSRF-Token` header and an `Origin` of this server, so no other page
in the browser can make it, even one that learned the token.
"""

from __future__ import annotations

import secrets

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.web.security import UNSAFE_METHODS, same_origin
from referee.web.sessions import COOKIE, Session, Sessions, csrf_ok, set_cookie

SESSION_TTL_S = 24 * 3600.0  # the command runs for hours at most; its sessions end with it anyway
MAX_SESSIONS = 64
CSRF_HEADER = "x-csrf-token"
SESSION_SCOPE_KEY = "referee.session"

_SPENT = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>This link was good once</title></head><body><main>
<h1>This link was good once</h1>
<p>It opened the page in the browser it was first used in; it opens nothing a second time.
Go back to that browser window, or stop the command and start it again for a new link.</p>
</main></body></html>
"""
_NO_SESSION = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Open the printed link</title></head><body><main>
<h1>Open the link the command printed</h1>
<p>This page opens from the link (with its token) that the command printed when it started, in the browser
that first opens it. Without it, this server shows nothing.</p>
</main></body></html>
"""


def new_token() -> str:
    """192 random bits, URL-safe: the key in the first URL."""
    return secrets.token_urlsafe(24)


def session_of(request: Request) -> Session:
    """The session the gate let this request in with."""
    session: Session = request.scope[SESSION_SCOPE_KEY]
    return session


class Gate:
    """The token good once, and the sessions it opened; `Gate.middleware`
    keeps every other path behind them."""

    def __init__(self, token: str | None = None, *, secure: bool = False) -> None:
        self.token = token or new_token()
        self.secure = secure
        # A name of its own: cookies do not tell ports apart, and a seat and a dashboard may run at once.
        self.sessions = Sessions(MAX_SESSIONS, SESSION_TTL_S, cookie=f"{COOKIE}_{secrets.token_hex(4)}")
        self.spent = False

    @property
    def entry_path(self) -> str:
        return f"/{self.token}/"

    def enter(self, request: Request) -> Response:
        """The first URL: a session and its cookie the first time, then nothing."""
        if self.spent:
            if self.sessions.of(request) is not None:  # the browser that came in first: back to the pages
                return RedirectResponse("../", 303)
            return HTMLResponse(_SPENT, 403)
        self.spent = True
        key, _session = self.sessions.open("browser", admin=False)
        response = RedirectResponse("../", 303)  # the pages, without the token
        set_cookie(response, key, secure=self.secure, ttl_s=SESSION_TTL_S, name=self.sessions.cookie)
        return response

    def refusal(self, request: Request) -> Response | None:
        """Why this request may not go on (a 403 answer), or None to let it in."""
        session = self.sessions.of(request)
        if session is None:
            if "text/html" in request.headers.get("accept", ""):
                return HTMLResponse(_NO_SESSION, 403)
            return _refused(request, "no session: open the link the command printed")
        request.scope[SESSION_SCOPE_KEY] = session
        if request.method in UNSAFE_METHODS:
            if request.headers.get("origin") is None or not same_origin(request):
                return _refused(request, "refused: this request did not come from this server's page")
            if not csrf_ok(session, request.headers.get(CSRF_HEADER)):
                return _refused(request, "refused: the page's CSRF token is missing or wrong; reload the page")
        return None

    def middleware(self, app: ASGIApp) -> ASGIApp:
        return _GateMiddleware(app, self)


def _refused(request: Request, message: str) -> Response:
    if request.method in UNSAFE_METHODS or "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"error": message}, 403)
    return PlainTextResponse(message + "\n", 403)


class _GateMiddleware:
    """Everything but the first URL needs the session (and a state change its
    CSRF token and this server's origin); an answer that does not say how a
    browser may keep it is `no-store`: it holds a game's state."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        response = self.gate.enter(request) if scope["path"] == self.gate.entry_path else self.gate.refusal(request)
        if response is not None:
            response.headers["cache-control"] = "no-store"
            await response(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                if not any(k.lower() == b"cache-control" for k, _ in headers):
                    message = {**message, "headers": [*headers, (b"cache-control", b"no-store")]}
            await send(message)

        await self.app(scope, receive, sending)
