"""Clients of the pages a command serves, for the tests: the printed URL is
good once and then a session cookie (referee/web/gate.py), so a test goes in
the way a browser does.

`enter(url)` opens the printed URL with a cookie jar shared by every test of
the process and returns the base URL the pages are under; `get` and `opener`
then carry the cookie. `fetch` is one request exactly as given, for tests of
the gate itself. `signed_in(routes)` is an app driven as plain ASGI (no
server) with a session already open, and `http_scope` a request to it.
"""

from __future__ import annotations

import http.client
import http.cookiejar
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from timing import scaled

from referee.web.gate import Gate
from referee.web.server import web_app

JAR = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(JAR))


def enter(url: str) -> str:
    """Open the printed URL once (its session cookie goes to the jar); the
    URL it sends the browser on to, under which every page is."""
    with opener.open(url, timeout=scaled(30)) as resp:
        assert resp.status == 200, resp.status
        return str(resp.url)


def get(url: str, timeout: float = 30, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Status and body of a GET with the jar's cookies (an error status is returned, not raised)."""
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=scaled(timeout)) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def signed_in(routes: Sequence[Any]) -> tuple[Any, list[tuple[bytes, bytes]]]:
    """An app of `routes` behind the guard and the gate, and the headers of a
    browser that came in through its first URL."""
    gate = Gate()
    key, _session = gate.sessions.open("test", admin=False)
    headers = [(b"host", b"127.0.0.1"), (b"cookie", f"{gate.sessions.cookie}={key}".encode())]
    return web_app(routes, gate, "127.0.0.1"), headers


def http_scope(path: str, headers: list[tuple[bytes, bytes]], method: str = "GET") -> dict[str, Any]:
    """An ASGI HTTP request scope, as hypercorn makes one."""
    route, _, query = path.partition("?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.1"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": route,
        "raw_path": route.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": headers,
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 50000),
    }


def fetch(
    url: str, method: str = "GET", headers: dict[str, str] | None = None, body: bytes | None = None, read: int = -1
) -> tuple[int, dict[str, str], bytes]:
    """One request exactly as given (no cookie jar, no redirect followed):
    status, headers (lower-case names) and the body (its first `read` bytes
    if `read` >= 0: an event stream does not end)."""
    where = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=scaled(30))
    try:
        conn.request(method, where.path + (f"?{where.query}" if where.query else ""), body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read() if read < 0 else resp.read(read)
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()
