"""Benchmark (not a test): what spectators who ask too much cost a match.

One real `match --serve` of two trivial bots (`first_legal_bot.py` against
`random_bot.py`, Chicago to 52, two games at a time, logs kept) runs for the
whole benchmark; its dashboard is attacked in windows that alternate with
quiet ones, so the machine's drift falls on both:

* quiet;
* pages: 500 requests for finished games' replay pages (gzipped, as
  browsers ask), by 4 threads cycling over more finished games than the
  dashboard caches, so each is rendered from its log;
* quiet;
* streams: 300 event-stream viewers (half the raw `events`, half the follow
  table's `game/follow/moves`), each reading and throwing the data away; one
  the dashboard refuses (it serves 64 at once) gives up, as a browser's
  `EventSource` does after a 503, and one whose stream ends comes back a
  second later;
* quiet.

Decisions per second in each window come from the `decision` records of the
match's own live stream (`t` stamps), as the security review measured them.
Also printed: how many page requests were answered and how fast, how many
streams were open and how many refused, and any `timeout` failure of the
bots (a stalled game loop makes the bots forfeit; there should be none).

The spectators stand for browsers on other machines: once the match has
started, the benchmark's own threads run at idle priority (`SCHED_IDLE`),
so what the windows measure is what serving them costs the match, not what
300 clients' own CPU takes from 2 cores they would not share.

Run: python tests/benchmarks/bench_web_load.py [WINDOW_S]   (default 12)
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
BOTS = [ROOT / "sample_bots" / "python" / "first_legal_bot.py", ROOT / "sample_bots" / "python" / "random_bot.py"]
PAGE_REQUESTS = 500
PAGE_THREADS = 4
VIEWERS = 300
WARM_GAMES = 80  # finished before the first window: more than the dashboard's 64 cached pages


class Site:
    """The dashboard as one browser sees it: its address, where its pages are
    and its session cookie. (A referee from before the session cookie kept
    its pages under the token, and the benchmark can measure it too.)"""

    def __init__(self, url: str) -> None:
        u = urlsplit(url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        conn = self.conn()
        conn.request("GET", u.path)  # the printed URL, once: it gives the session cookie
        resp = conn.getresponse()
        resp.read()
        conn.close()
        self.cookie = (resp.getheader("set-cookie") or "").split(";")[0]
        self.prefix = "/" if resp.status == 303 else u.path
        if resp.status not in (200, 303):
            raise SystemExit(f"the printed URL did not let us in: {resp.status}")

    def headers(self, **more: str) -> dict[str, str]:
        return {**more, "cookie": self.cookie} if self.cookie else more

    def conn(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=60)

    def get(self, path: str, conn: http.client.HTTPConnection | None = None) -> tuple[int, bytes]:
        c = conn or self.conn()
        c.request("GET", self.prefix + path, headers=self.headers(**{"accept-encoding": "gzip"}))
        resp = c.getresponse()
        body = resp.read()
        if conn is None:
            c.close()
        return resp.status, body


def page_attack(site: Site, ids: list[int], stop: threading.Event) -> dict[str, float]:
    """`PAGE_REQUESTS` replay pages of finished games, by `PAGE_THREADS` threads."""
    took: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    next_one = [0]

    def work() -> None:
        conn = site.conn()
        while not stop.is_set():
            with lock:
                k = next_one[0]
                next_one[0] += 1
            if k >= PAGE_REQUESTS:
                break
            began = time.monotonic()
            status, _ = site.get(f"game/{ids[k % len(ids)]}/page", conn)
            with lock:
                took.append(time.monotonic() - began)
                statuses[status] = statuses.get(status, 0) + 1
        conn.close()

    threads = [threading.Thread(target=work, daemon=True) for _ in range(PAGE_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "answered": len(took),
        "ok": statuses.get(200, 0),
        "median_ms": 1000 * statistics.median(took) if took else 0.0,
        "max_ms": 1000 * max(took) if took else 0.0,
    }


def stream_attack(site: Site, stop: threading.Event) -> dict[str, int]:
    """`VIEWERS` stream readers until `stop`; a refused one gives up."""
    counts = {"open": 0, "most_open": 0, "refused": 0, "bytes": 0}
    lock = threading.Lock()

    def view(k: int) -> None:
        path = site.prefix + ("events" if k % 2 else "game/follow/moves")
        while not stop.is_set():
            c = site.conn()
            try:
                c.request("GET", path, headers=site.headers())
                resp = c.getresponse()
                if resp.status != 200:
                    resp.read()
                    with lock:
                        counts["refused"] += 1
                    return
                with lock:
                    counts["open"] += 1
                    counts["most_open"] = max(counts["most_open"], counts["open"])
                try:
                    while not stop.is_set():
                        chunk = resp.read1(65536)
                        if not chunk:
                            break
                        with lock:
                            counts["bytes"] += len(chunk)
                finally:
                    with lock:
                        counts["open"] -= 1
            except (OSError, http.client.HTTPException):
                stop.wait(1.0)
            finally:
                c.close()

    threads = [threading.Thread(target=view, args=(k,), daemon=True) for k in range(VIEWERS)]
    for t in threads:
        t.start()
    stop.wait()
    for t in threads:
        t.join(timeout=5)
    return counts


def rates(stream: Path, windows: list[tuple[str, float, float]]) -> list[tuple[str, float, int]]:
    """Decisions per second and bot timeouts in each window, from the match's live stream."""
    stamps: list[float] = []
    timeouts: list[float] = []
    for line in stream.read_bytes().splitlines():
        if b'"decision"' in line or b'"failure"' in line:
            rec = json.loads(line)
            if rec["type"] == "decision":
                stamps.append(rec["t"])
            elif rec["type"] == "failure" and rec.get("reason") == "timeout":
                timeouts.append(rec["t"])
    return [
        (name, sum(a <= t < b for t in stamps) / (b - a), sum(a <= t < b for t in timeouts)) for name, a, b in windows
    ]


def main() -> None:
    window = float(sys.argv[1]) if len(sys.argv) > 1 else 12.0
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "logs"
        match = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "match", *map(str, BOTS), "--games", "100000", "-j", "2"]
            + ["--log-dir", str(logs), "--serve", "--no-open"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert match.stderr is not None
            url = next(line.split()[-1] for line in match.stderr if line.startswith("live dashboard:"))
            threading.Thread(target=match.stderr.read, daemon=True).start()  # its progress lines, drained
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # this thread, and those it starts
            site = Site(url)
            began = time.monotonic()
            while True:
                finished = json.loads(site.get("summary")[1])["progress"]["finished"]
                if finished >= WARM_GAMES or time.monotonic() - began > 120:
                    break
                time.sleep(0.5)
            ids = list(range(1, finished + 1))
            windows: list[tuple[str, float, float]] = []
            pages: dict[str, float] = {}
            streams: dict[str, int] = {}
            for name in ("quiet", "pages", "quiet", "streams", "quiet"):
                stop = threading.Event()
                start = time.time()
                if name == "pages":
                    timer = threading.Timer(window, stop.set)
                    timer.start()
                    pages = page_attack(site, ids, stop)
                    stop.wait()
                elif name == "streams":
                    threading.Timer(window, stop.set).start()
                    streams = stream_attack(site, stop)
                else:
                    time.sleep(window)
                windows.append((name, start, time.time()))
            time.sleep(1.0)  # the stream's last decisions of the last window are written
        finally:
            match.terminate()
            match.wait(60)
        for name, rate, timeouts in rates(logs / "match.live.ndjson", windows):
            print(f"{name:>8}: {rate:8.0f} decisions/s  bot timeouts: {timeouts}")
        print(
            f"pages: {pages['answered']:.0f} of {PAGE_REQUESTS} answered within the window ({pages['ok']:.0f} with "
            f"200) over {len(ids)} finished games; median {pages['median_ms']:.0f} ms, max {pages['max_ms']:.0f} ms"
        )
        print(
            f"streams: {VIEWERS} viewers, at most {streams['most_open']} open at once, {streams['refused']} refusals "
            f"(503), {streams['bytes'] / 2**20:.1f} MiB read"
        )


if __name__ == "__main__":
    main()
