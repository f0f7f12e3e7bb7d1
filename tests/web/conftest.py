"""A browser seat served by the real command (`chicago-referee play --web`) in
a subprocess, bounded in time, and a client for its event stream. The client
goes in as a browser does: the printed URL once (a session cookie), then the
page's CSRF token and its own origin with every choice."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from paths import ROOT
from timing import scaled

URL_RE = re.compile(r"http://127\.0\.0\.1:(\d+)(/[A-Za-z0-9_-]+/)")
LIMIT_S = scaled(240)  # a whole served game; far more than it needs


CSRF_RE = re.compile(rb'<meta name="csrf-token" content="([A-Za-z0-9_-]+)">')


@dataclass
class WebTable:
    proc: subprocess.Popen[str]
    port: int
    token_path: str  # "/TOKEN/", good once
    log_dir: Path
    stdout: list[str] = field(default_factory=list)
    cookie: str = ""  # "name=value" of the session, once `enter` went in
    csrf: str = ""
    base: str = "/"

    @property
    def url(self) -> str:
        """The printed URL (a browser may open it once)."""
        return f"http://127.0.0.1:{self.port}{self.token_path}"

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def enter(self) -> None:
        """Go in through the printed URL: the session cookie, then the page's CSRF token."""
        status, headers, _ = self.raw("GET", self.token_path)
        assert status == 303 and headers.get("location") == "../", (status, headers)
        self.cookie = headers["set-cookie"].split(";", 1)[0]
        status, _, page = self.raw("GET", "/", headers={"cookie": self.cookie})
        found = CSRF_RE.search(page)
        assert status == 200 and found, status
        self.csrf = found.group(1).decode()

    def raw(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> Any:
        """(status, headers, body) of one request, with no cookie or token but those in `headers`."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=scaled(30))
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def session_headers(self) -> dict[str, str]:
        if not self.cookie:
            self.enter()
        return {"cookie": self.cookie}

    def request(self, method: str, route: str, body: Any = None) -> tuple[int, Any]:
        """A request as the page makes it: the session cookie, and with a POST the CSRF token and the origin."""
        headers = {"content-type": "application/json", **self.session_headers()}
        if method == "POST":
            headers.update({"x-csrf-token": self.csrf, "origin": self.origin})
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=scaled(30))
        try:
            data = None if body is None else json.dumps(body)
            conn.request(method, self.base + route if not route.startswith("/") else route, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            kind = resp.getheader("content-type", "")
            return resp.status, json.loads(raw) if kind.startswith("application/json") else raw
        finally:
            conn.close()

    def finish(self) -> str:
        """Wait for the command to end; its whole stdout."""
        out, _ = self.proc.communicate(timeout=scaled(60))
        return "".join(self.stdout) + out


def start_web_table(tmp_path: Path, *args: str) -> WebTable:
    log_dir = tmp_path / "logs"
    cmd = [
        sys.executable,
        "-m",
        "referee.cli",
        "play",
        "--web",
        "--port",
        "0",
        "--no-open",
        "--log-dir",
        str(log_dir),
        *args,
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL
    )
    lines: list[str] = []
    deadline = time.monotonic() + scaled(60)
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = URL_RE.search(line)
        if m:
            return WebTable(proc=proc, port=int(m.group(1)), token_path=m.group(2), log_dir=log_dir, stdout=lines)
    proc.kill()
    _, err = proc.communicate(timeout=scaled(10))
    raise AssertionError(f"no URL printed: {''.join(lines)!r} {err!r}")


@pytest.fixture
def web_table(tmp_path: Path) -> Iterator[Any]:
    started: list[WebTable] = []

    def start(*args: str) -> WebTable:
        t = start_web_table(tmp_path, *args)
        started.append(t)
        return t

    yield start
    for t in started:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.wait(timeout=scaled(10))


class EventStream:
    """Reads a seat's server-sent events in a thread; every payload kept raw."""

    def __init__(self, table: WebTable) -> None:
        self.raw: list[str] = []
        self.states: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        u = urlsplit(table.url)
        self._conn = http.client.HTTPConnection(u.hostname, u.port, timeout=LIMIT_S)
        self._conn.request("GET", table.base + "events", headers=table.session_headers())
        self._resp = self._conn.getresponse()
        assert self._resp.status == 200
        assert self._resp.getheader("content-type", "").startswith("text/event-stream")
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for line in self._resp:
                text = line.decode()
                if text.startswith("data: "):
                    payload = text[6:].strip()
                    with self._cond:
                        self.raw.append(payload)
                        self.states.append(json.loads(payload))
                        self._cond.notify_all()
        except (OSError, ValueError, http.client.HTTPException):
            pass

    def wait_for(self, pred: Any, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + scaled(timeout)
        with self._cond:
            while True:
                for st in reversed(self.states):
                    if pred(st):
                        return st
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no such state within {scaled(timeout)} s; last: {self.states[-1:]}")
                self._cond.wait(left)

    def close(self) -> None:
        self._conn.close()
