"""The door of the pages a command serves, on the real browser seat and the
real dashboard served by the real server (in this process, on 127.0.0.1):
the printed URL opens once and becomes an HttpOnly, SameSite=Strict cookie,
a second time it opens nothing; nothing answers without the cookie; a choice
needs the session's CSRF token and this server's Origin; a foreign Host gets
421; and every answer, whatever its status, carries the security headers."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from timing import scaled
from webclient import fetch

from referee.live.serve import open_dashboard, stream_source
from referee.web.app import SeatApp
from referee.web.server import start_server
from referee.web.session import WebPlayer

CSRF_RE = re.compile(rb'<meta name="csrf-token" content="([A-Za-z0-9_-]+)">')
EVIL = "http://localhost:18777"


@asynccontextmanager
async def serving(kind: str, tmp_path: Path) -> AsyncIterator[tuple[str, WebPlayer | None]]:
    """The printed URL of a seat or a dashboard served until the block ends (and the seat's player)."""
    if kind == "seat":
        player = WebPlayer("a table")
        async with trio.open_nursery() as nursery:
            served = await start_server(nursery, SeatApp(player).routes, open_browser=False)
            try:
                yield served.url, player
            finally:
                served.stop.set()
    else:
        source, public, private = stream_source(tmp_path / "match.live.ndjson", None)
        async with open_dashboard(source, public, private, open_browser=False) as served:
            yield served.url, None


async def ask(url: str, method: str = "GET", headers: dict[str, str] | None = None, **kw: Any) -> Any:
    return await trio.to_thread.run_sync(partial(fetch, url, method, headers, **kw))


def _root(url: str) -> str:
    return url.rsplit("/", 2)[0] + "/"


@pytest.mark.parametrize("kind", ["seat", "dashboard"])
async def test_the_printed_url_opens_once_and_becomes_a_cookie(kind: str, tmp_path: Path) -> None:
    async with serving(kind, tmp_path) as (url, _player):
        root = _root(url)
        assert (await ask(root))[0] == 403  # nothing before the printed URL is opened
        status, headers, _ = await ask(url)
        assert status == 303 and headers["location"] == "../"  # to the pages, without the token
        cookie = headers["set-cookie"]
        name_value, *attributes = [a.strip() for a in cookie.split(";")]
        flags = {a.split("=", 1)[0].lower(): a.partition("=")[2] for a in attributes}
        assert name_value.startswith("chicago_referee_session_")
        assert "httponly" in flags and flags["samesite"].lower() == "strict" and flags["path"] == "/"
        assert "secure" not in flags  # plain http on 127.0.0.1: a Secure cookie would never come back
        token = url.rstrip("/").rsplit("/", 1)[1]
        assert token not in cookie
        session = {"cookie": name_value}
        status, _, page = await ask(root, headers=session)
        assert status == 200 and (b"play.js" in page or b"live.js" in page)

        # The same URL a second time: a page that says so, and no cookie; the browser that came in goes on.
        status, headers, page = await ask(url)
        assert status == 403 and b"good once" in page and "set-cookie" not in headers
        status, headers, _ = await ask(url, headers=session)
        assert status == 303 and headers["location"] == "../" and "set-cookie" not in headers

        # Nothing without the cookie, or with one it did not give.
        forged = {"cookie": name_value.split("=")[0] + "=" + "A" * 43}
        for route in ("", "assets/live.js", "state", "summary", "events", "game/1/page"):
            assert (await ask(root + route))[0] == 403, route
            assert (await ask(root + route, headers=forged))[0] == 403, route
        assert (await ask(root + "nope", headers=session))[0] == 404


async def test_a_choice_needs_the_csrf_token_and_this_origin(tmp_path: Path) -> None:
    async with serving("seat", tmp_path) as (url, player), trio.open_nursery() as nursery:
        assert player is not None
        answers: list[bool] = []

        async def asked() -> None:
            answers.append(await player.again([]))

        nursery.start_soon(asked)  # the seat asks "play again?": a POST /again answers it
        _, headers, _ = await ask(url)
        cookie = headers["set-cookie"].split(";")[0]
        root = _root(url)
        page = (await ask(root, headers={"cookie": cookie}))[2]
        found = CSRF_RE.search(page)
        assert found is not None
        csrf = found.group(1).decode()
        own = root.rstrip("/")
        body = b'{"again": false}'
        refused = [
            {"cookie": cookie, "origin": own},  # no CSRF token
            {"cookie": cookie, "origin": own, "x-csrf-token": csrf[:-1] + ("A" if csrf[-1] != "A" else "B")},
            {"cookie": cookie, "origin": EVIL, "x-csrf-token": csrf},  # another page in the browser
            {"cookie": cookie, "origin": "null", "x-csrf-token": csrf},  # what a no-referrer fetch sends
            {"cookie": cookie, "x-csrf-token": csrf},  # no Origin at all
            {"origin": own, "x-csrf-token": csrf},  # no session
        ]
        for headers in refused:
            status, _, answer = await ask(
                root + "again", "POST", {"content-type": "application/json", **headers}, body=body
            )
            assert status == 403 and b"error" in answer, (headers, status, answer)
            assert player._again is not None and not answers  # nothing was taken
        status, _, answer = await ask(
            root + "again",
            "POST",
            {"content-type": "text/plain", "cookie": cookie, "origin": own, "x-csrf-token": csrf},
            body=body,
        )
        assert status == 200, answer
        with trio.fail_after(scaled(10)):
            while not answers:
                await trio.sleep(0.01)
        assert answers == [False] and player.finished


@pytest.mark.parametrize("kind", ["seat", "dashboard"])
async def test_a_foreign_host_is_421(kind: str, tmp_path: Path) -> None:
    async with serving(kind, tmp_path) as (url, _player):
        port = url.split(":")[2].split("/")[0]
        for host in ("attacker.example", f"attacker.example:{port}", "127.0.0.1.attacker.example", ""):
            status, headers, body = await ask(url, headers={"host": host})
            assert status == 421 and b"host name" in body and "set-cookie" not in headers, host
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            assert (await ask(_root(url), headers={"host": host}))[0] == 403, host  # let through, to the gate


def _check_headers(what: str, status: int, headers: dict[str, str]) -> None:
    csp = headers.get("content-security-policy", "")
    directives = {d.strip().split(" ")[0]: d.strip() for d in csp.split(";")}
    assert directives.get("frame-ancestors") == "frame-ancestors 'none'", what
    assert directives.get("script-src") == "script-src 'self'" and "unsafe" not in csp, what
    assert directives.get("style-src") == "style-src 'self'", what
    assert headers.get("x-content-type-options") == "nosniff", what
    assert headers.get("referrer-policy") == "no-referrer", what
    assert headers.get("x-frame-options") == "DENY", what
    assert status == 421 or "cache-control" in headers, what  # past the Host check, every answer says how to keep it


@pytest.mark.parametrize("kind", ["seat", "dashboard"])
async def test_the_security_headers_are_on_every_answer(kind: str, tmp_path: Path) -> None:
    async with serving(kind, tmp_path) as (url, _player):
        root = _root(url)
        seen: dict[str, int] = {}

        async def check(what: str, *args: Any, **kw: Any) -> dict[str, str]:
            status, headers, _ = await ask(*args, **kw)
            _check_headers(f"{what} ({status})", status, headers)
            seen[what] = status
            return headers

        await check("before the printed URL", root, headers={"accept": "text/html"})
        cookie = (await check("the printed URL", url))["set-cookie"].split(";")[0]
        session = {"cookie": cookie}
        await check("the printed URL again", url)
        await check("a foreign host", root, headers={"host": "attacker.example"})
        page = await check("the page", root, headers=session)
        assert kind != "seat" or "no-store" in page["cache-control"]  # it holds the session's CSRF token
        static = await check("a static file", root + "assets/replay.css", headers=session)
        assert "max-age" in static["cache-control"]
        await check("no such page", root + "nope", headers=session)
        await check("a POST without a token", root + "act", "POST", {**session, "origin": root.rstrip("/")})
        stream = await check("an event stream", root + "events", headers=session, read=1)
        assert stream["content-type"].startswith("text/event-stream") and "no-store" in stream["cache-control"]
        if kind == "seat":
            await check("the state", root + "state", headers=session)
        else:
            await check("the summary", root + "summary", headers=session)
            await check("a game not on the board", root + "game/7/page", headers=session)
            await check("a game id that is no number", root + "game/x/data", headers=session)
        assert {303, 403, 421, 200, 404} <= set(seen.values()), seen
