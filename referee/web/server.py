"""Serve a command's pages on the running Trio loop: one start-up for the
browser seat and the dashboard.

`web_app` makes one Starlette app of a page set's routes behind the shared
guard (`security.WebGuard`: the `Host` check, the security headers, errors as
one line with an id) and the gate (`gate.Gate`: the token good once, then the
session cookie); `start_server` serves it with hypercorn's Trio worker,
127.0.0.1 unless told otherwise, port 0 for a free one, and hands the first
URL to a callback (the CLI prints it) and to a browser unless asked not to.

Event streams (`EventStreams`) are capped per server, and a client that
stops reading is dropped by the kernel after `STALLED_CLIENT_S`
(`TCP_USER_TIMEOUT` on the listening socket, inherited by every connection):
hypercorn writes with its cancellation shielded, so nothing in the process
could end such a write, and shutdown would wait for the client.
"""

from __future__ import annotations

import logging
import socket
import webbrowser
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import trio
from hypercorn.config import Config, Sockets
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from referee.errors import ConfigError
from referee.web.gate import Gate
from referee.web.security import WebGuard, allowed_hosts

ASSETS = Path(__file__).resolve().parents[1] / "assets"
STALLED_CLIENT_S = 5.0
MAX_STREAMS = 64
CACHED = "private, max-age=3600"  # a page's script and style hold no state: a browser keeps them


@dataclass
class Served:
    """A running server: its first URL (with the token) and how to stop it."""

    url: str
    token: str
    stop: trio.Event


class _Config(Config):
    """hypercorn's config, with listening sockets that drop a client which stopped reading."""

    def create_sockets(self) -> Sockets:
        sockets = super().create_sockets()
        if hasattr(socket, "TCP_USER_TIMEOUT"):  # Linux: unacknowledged data (a zero window too) this long ends it
            for sock in sockets.insecure_sockets:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, int(STALLED_CLIENT_S * 1000))
        return sockets


def _config(host: str, port: int) -> Config:
    config = _Config()
    where = f"[{host}]" if ":" in host and not host.startswith("[") else host
    config.bind = [f"{where}:{port}"]
    config.accesslog = None  # a request line is nobody's business on the terminal
    config.errorlog = logging.getLogger("referee.web")
    config.graceful_timeout = 1.0
    return config


class _Assets(StaticFiles):
    """The files of `referee/assets`, which a browser may keep for an hour."""

    def file_response(self, *args: object, **kwargs: object) -> Response:
        response = super().file_response(*args, **kwargs)  # type: ignore[arg-type]
        response.headers["cache-control"] = CACHED
        return response


def assets_mount() -> Mount:
    """`/assets/NAME`: the pages' static files (StaticFiles refuses any path outside the folder)."""
    return Mount("/assets", app=_Assets(directory=ASSETS), name="assets")


def web_app(routes: Sequence[BaseRoute], gate: Gate, host: str) -> Starlette:
    """A page set's routes behind the guard and the gate."""
    return Starlette(
        routes=list(routes),
        middleware=[Middleware(WebGuard, hosts=allowed_hosts(host)), Middleware(gate.middleware)],
    )


async def start_server(
    nursery: trio.Nursery,
    routes: Sequence[BaseRoute],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    on_url: Callable[[str], None] | None = None,
) -> Served:
    """Serve `routes` in `nursery` until `served.stop` is set."""
    gate = Gate()
    stop = trio.Event()
    try:
        binds: list[str] = await nursery.start(
            partial(serve, web_app(routes, gate, host), _config(host, port), shutdown_trigger=stop.wait)  # type: ignore[arg-type]
        )
    except OSError as exc:
        raise ConfigError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc}; choose another --host or --port"
        ) from exc
    base = next((b for b in binds if b.startswith("http://")), binds[0])
    served = Served(url=base + gate.entry_path, token=gate.token, stop=stop)
    if on_url is not None:
        on_url(served.url)
    if open_browser:
        nursery.start_soon(partial(trio.to_thread.run_sync, webbrowser.open, served.url, abandon_on_cancel=True))
    return served


# ------------------------------------------------------------------ event streams


class EventStreams:
    """The server-sent event streams of one server, at most `cap` at once:
    many viewers must not slow the games they watch."""

    def __init__(self, cap: int = MAX_STREAMS) -> None:
        self.cap = cap
        self.open = 0

    def response(self, body: AsyncIterator[bytes]) -> Response:
        """`body`'s events as a stream (never cached), or a 503 when `cap` are open."""
        return _EventStream(self, body)


class _EventStream(StreamingResponse):
    def __init__(self, streams: EventStreams, body: AsyncIterator[bytes]) -> None:
        super().__init__(body, media_type="text/event-stream", headers={"cache-control": "no-store"})
        self.streams = streams

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        streams = self.streams
        if streams.open >= streams.cap:
            await self.body_iterator.aclose()  # type: ignore[attr-defined]
            text = f"this server has {streams.cap} event streams open, as many as it serves: close a page and reload\n"
            await PlainTextResponse(text, 503)(scope, receive, send)
            return
        streams.open += 1
        try:
            await super().__call__(scope, receive, send)
        finally:
            streams.open -= 1
            await self.body_iterator.aclose()  # type: ignore[attr-defined]
