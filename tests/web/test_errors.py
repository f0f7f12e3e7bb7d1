"""What a client sees of an error, and what the host sees, on the real server
in this process: an unexpected error in a route is one log line with an id
and a 500 page with that id (no traceback, no detail, on the page or in the
log); one in the middle of an event stream ends the stream the same way;
hostile requests that once got a 500 (a JSON body nested 5,000 deep, a game
id of 300 digits) get a plain 400 or 404."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
from webclient import fetch

from referee.live.serve import open_dashboard, stream_source
from referee.live.source import LiveSource
from referee.web.app import SeatApp
from referee.web.server import start_server
from referee.web.session import WebPlayer

SECRET = "the secret detail at /home/ann/bots"


async def ask(url: str, method: str = "GET", headers: dict[str, str] | None = None, **kw: Any) -> Any:
    return await trio.to_thread.run_sync(partial(fetch, url, method, headers, **kw))


@asynccontextmanager
async def signed_in(url: str) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """The pages' root and the session's headers, after opening the printed URL."""
    _, headers, _ = await ask(url)
    yield url.rsplit("/", 2)[0] + "/", {"cookie": headers["set-cookie"].split(";")[0]}


@asynccontextmanager
async def dashboard(folder: Path) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """A dashboard of an empty match stream in `folder`, served and signed in to."""
    source, public, private = stream_source(folder / "match.live.ndjson", None)
    async with open_dashboard(source, public, private, open_browser=False) as served, signed_in(served.url) as inside:
        yield inside


def _lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("referee.web") and r.levelno >= logging.WARNING]


async def test_an_error_in_a_route_is_one_line_with_an_id(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: LiveSource) -> bytes:
        raise RuntimeError(SECRET)

    monkeypatch.setattr(LiveSource, "summary_bytes", broken)
    caplog.set_level(logging.INFO)
    async with dashboard(tmp_path) as (root, session):
        status, headers, page = await ask(root + "summary", headers={**session, "accept": "text/html"})
        assert (await ask(root + "game/1/page", headers=session))[0] == 404  # the server goes on
    assert status == 500 and headers["content-type"].startswith("text/html")
    found = re.search(rb"error ([0-9a-f]{8})", page)
    assert found, page
    error_id = found.group(1).decode()
    text = page.decode()
    assert "Traceback" not in text and "secret" not in text and "RuntimeError" not in text
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    lines = _lines(caplog)
    assert len(lines) == 1, [r.getMessage() for r in lines]
    line = lines[0].getMessage()
    assert f"error {error_id}" in line and "GET /summary" in line and "RuntimeError" in line
    assert "\n" not in line and lines[0].exc_info is None and "Traceback" not in caplog.text


async def test_an_error_in_a_stream_ends_it_with_one_line(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    player = WebPlayer("a table")
    snapshot = WebPlayer.snapshot

    def once(self: WebPlayer) -> dict[str, Any]:
        if self.version > 0:
            raise RuntimeError(SECRET)
        return snapshot(self)

    monkeypatch.setattr(WebPlayer, "snapshot", once)
    caplog.set_level(logging.INFO)
    async with trio.open_nursery() as nursery:
        served = await start_server(nursery, SeatApp(player).routes, open_browser=False)
        async with signed_in(served.url) as (root, session):

            async def change_soon() -> None:
                await trio.sleep(0.5)
                player._publish()  # the second snapshot fails

            nursery.start_soon(change_soon)
            status, _, body = await ask(root + "events", headers=session)  # the server ends it
        served.stop.set()
    assert status == 200 and body.count(b"event: state") == 1 and b"secret" not in body
    lines = _lines(caplog)
    assert len(lines) == 1 and "GET /events" in lines[0].getMessage() and lines[0].exc_info is None
    assert "Traceback" not in caplog.text


async def test_hostile_requests_get_a_plain_answer(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    player = WebPlayer("a table")
    nested = b'{"id": 1, "action": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    async with trio.open_nursery() as nursery:
        served = await start_server(nursery, SeatApp(player).routes, open_browser=False)
        async with signed_in(served.url) as (root, session):
            page = (await ask(root, headers=session))[2]
            found = re.search(rb'name="csrf-token" content="([^"]+)"', page)
            assert found
            choice = {**session, "origin": root.rstrip("/"), "x-csrf-token": found.group(1).decode()}
            status, _, body = await ask(root + "act", "POST", choice, body=nested)
            assert status == 400 and b"small JSON object" in body
            status, _, body = await ask(root + "act", "POST", choice, body=b"x" * (1 << 20))
            assert status == 400
        served.stop.set()
    async with dashboard(tmp_path) as (root, session):
        for game in ("9" * 300, "9" * 5000, "-1", "+1", "1_0", "%D9%A3", "0x1", "0", "%201%20"):  # %D9%A3: an Arabic 3
            status, _, _ = await ask(root + f"game/{game}/page", headers=session)
            assert status == 404, game
    assert _lines(caplog) == []
