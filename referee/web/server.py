"""Serve an ASGI app on the running Trio loop, reachable only with a token.

One start-up for every page the referee serves (the human seat now, a
dashboard later): bind 127.0.0.1 unless `host` says otherwise, port 0 picks a
free port, every URL carries an unguessable token, the URL goes to a callback
(the CLI prints it) and a browser is opened unless asked not to.
"""

from __future__ import annotations

import logging
import secrets
import webbrowser
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from referee.errors import ConfigError

ASGIApp = Callable[
    [dict[str, Any], Callable[[], Awaitable[dict[str, Any]]], Callable[[dict[str, Any]], Awaitable[None]]],
    Awaitable[None],
]


@dataclass
class Served:
    """A running server: its base URL (with the token) and how to stop it."""

    url: str
    token: str
    stop: trio.Event


def new_token() -> str:
    """192 random bits, URL-safe: the only key to a seat's page."""
    return secrets.token_urlsafe(24)


def _config(host: str, port: int) -> Config:
    config = Config()
    where = f"[{host}]" if ":" in host and not host.startswith("[") else host
    config.bind = [f"{where}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("referee.web")  # quiet unless the caller configures logging
    config.graceful_timeout = 1.0
    return config


async def start_server(
    nursery: trio.Nursery,
    make_app: Callable[[str], ASGIApp],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    on_url: Callable[[str], None] | None = None,
) -> Served:
    """Serve `make_app(token)` in `nursery` until `served.stop` is set."""
    token = new_token()
    stop = trio.Event()
    try:
        binds: list[str] = await nursery.start(
            partial(
                serve,
                make_app(token),  # type: ignore[arg-type]
                _config(host, port),
                shutdown_trigger=stop.wait,
            )
        )
    except OSError as exc:
        raise ConfigError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc}; choose another --host or --port"
        ) from exc
    base = next((b for b in binds if b.startswith("http://")), binds[0])
    served = Served(url=f"{base}/{token}/", token=token, stop=stop)
    if on_url is not None:
        on_url(served.url)
    if open_browser:
        nursery.start_soon(partial(trio.to_thread.run_sync, webbrowser.open, served.url, abandon_on_cancel=True))
    return served


# ------------------------------------------------------------------ ASGI pieces both web apps share

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
HEADERS = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]
"""Sent with every answer: pages hold a game's state, never to be cached or sniffed."""


CACHED_HEADERS = [(b"cache-control", b"private, max-age=3600"), *HEADERS[1:]]
"""For files that hold no state (a page's script and style): a browser keeps them."""


async def respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: str = "application/json",
    gzipped: bool = False,
    cached: bool = False,
) -> None:
    headers = [(b"content-type", content_type.encode() + b"; charset=utf-8"), *(CACHED_HEADERS if cached else HEADERS)]
    if gzipped:
        headers.append((b"content-encoding", b"gzip"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def event_stream(receive: Receive, send: Send, body: Callable[[Send], Awaitable[None]]) -> None:
    """A server-sent event stream: `body` writes its events until it ends or
    the viewer goes away, whichever comes first."""
    headers = [(b"content-type", b"text/event-stream; charset=utf-8"), *HEADERS]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    async with trio.open_nursery() as nursery:

        async def watch_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            nursery.cancel_scope.cancel()

        nursery.start_soon(watch_disconnect)
        await body(send)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        nursery.cancel_scope.cancel()


async def answer_lifespan(receive: Receive, send: Send) -> None:
    """The ASGI lifespan protocol, for an app with nothing to start or stop."""
    while True:
        msg = await receive()
        if msg["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif msg["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
