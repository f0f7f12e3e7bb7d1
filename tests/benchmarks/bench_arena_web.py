"""Benchmark (not a test): do the arena's pages cost its games any pace?

A real `arena serve` (in process: its games share the server's Trio loop
with the pages, the worst case) plays a field of N copies of the random
sample bot. The run alternates windows of W seconds: quiet, loaded, quiet,
loaded, quiet. In a loaded window 300 viewers hold event streams open and
read them (two in three the live leaderboard's, the others the live
dashboard's under `/live/`: its summary, or the table that follows one game
after another), and 500 requests for games' pages are made by 8 threads:
four in five a finished game's page (`/games/ID`, the replay rendered from
the log, each a different game where there are enough), the others a live
table's page (`/live/game/ID/page`) of a game playing or just finished.
The spectators stand for browsers on other machines: the benchmark's own
threads run at idle priority (`SCHED_IDLE`), so they take no core the
server wants. The games' pace is their
decisions per second, summed from the logs (`result.decisions`) of the
games that ended in each window. It prints each window and the loaded
windows' pace as a share of the quiet ones'.

Run: python tests/benchmarks/bench_arena_web.py [N] [W]   (defaults 6 and 30)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

from referee.arena.archives import ArchiveLimits, pack_folder  # noqa: E402
from referee.arena.client import multipart, request  # noqa: E402
from referee.seats.sandbox import probe_host  # noqa: E402

VIEWERS = 300
PAGES = 500
PAGE_THREADS = 8
RANDOM_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"
CONFIG = """\
name = "bench-web"
game = "chicago"
table_size = 2
concurrency = 8
time_control = "decision=1s,startup=10s"

[rules]
options = { target_score = 20 }

[uploads]
submissions_per_hour = 1000
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
        check=False,
    )


STREAMS = ["/events/leaderboard", "/events/leaderboard", "/live/summary/events"] * 3 + ["/live/game/follow/moves"] * 3


def viewer(host: str, port: int, path: str, stop: threading.Event, received: list[int]) -> None:
    """One browser tab: an event stream, read until told to stop."""
    try:
        with socket.create_connection((host, port), timeout=30) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode())
            s.settimeout(2.0)
            first = True
            while not stop.is_set():
                try:
                    data = s.recv(65536)
                except TimeoutError:
                    continue
                if not data:
                    return
                if first and data.startswith(b"HTTP/1.1 503"):  # as many streams open as it serves
                    received[1] += 1
                    return
                first = False
                received[0] += len(data)
    except OSError:
        received[1] += 1


def live_ids(base: str) -> list[int]:
    """The games the live dashboard shows now (playing, and the last finished)."""
    with urllib.request.urlopen(f"{base}/live/summary", timeout=30) as resp:
        summary = json.loads(resp.read())
    return [g["game_id"] for g in summary["running"] + summary["recent"]]


def pages(base: str, ids: list[int], live: list[int], count: int, stop: threading.Event, times: list[float]) -> None:
    lock = threading.Lock()
    todo = iter(range(count))

    def work() -> None:
        while not stop.is_set():
            with lock:
                k = next(todo, None)
            if k is None:
                return
            t0 = time.perf_counter()
            path = f"/live/game/{live[k % len(live)]}/page" if live and k % 5 == 4 else f"/games/{ids[k % len(ids)]}"
            try:
                with urllib.request.urlopen(base + path, timeout=120) as resp:
                    resp.read()
            except urllib.error.HTTPError as exc:  # a live page may be busy (503) or its game gone from the board (404)
                exc.read()
            times.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(PAGE_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def decisions_between(folder: Path, start: float, end: float) -> tuple[int, int]:
    """(games, decisions) of the games recorded in [start, end)."""
    with sqlite3.connect(folder / "arena.db") as conn:
        rows = conn.execute("SELECT log_name, finished FROM games").fetchall()
    games = decisions = 0
    for name, finished in rows:
        if start <= datetime.fromisoformat(finished).timestamp() < end:
            last = (folder / "logs" / name).read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            decisions += int(json.loads(last).get("decisions", 0))
            games += 1
    return games, decisions


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    window = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
    problems = probe_host().problems()
    if problems:
        print("skipped: the arena sandboxes its bots and this machine cannot: " + "; ".join(problems))
        return
    with tempfile.TemporaryDirectory(prefix="bench-arena-web-") as tmp_name:
        tmp = Path(tmp_name)
        folder = tmp / "arena"
        cli("arena", "init", str(folder))
        (folder / "arena.toml").write_text(CONFIG)
        tokens = {}
        for i in range(n):
            name = f"bot{i}"
            tokens[name] = json.loads(cli("arena", "user", "add", str(folder), name, "--json").stdout)["token"]
            (tmp / name).mkdir()
            (tmp / name / "main.py").write_text(RANDOM_BOT.read_text() + f"# {name}\n")
        proc = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "arena", "serve", str(folder), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            start_new_session=True,
        )
        assert proc.stdout is not None
        base = proc.stdout.readline().split(" at ", 1)[1].split()[0].rstrip("/")
        host, port = base.removeprefix("http://").rsplit(":", 1)
        try:
            for name, token in tokens.items():
                body, ctype = multipart(pack_folder(tmp / name, ArchiveLimits()), name)
                request(base, "/api/submissions", token=token, body=body, content_type=ctype)
            while len(request(base, "/api/leaderboard")[1]["bots"]) < n:
                time.sleep(1)
            time.sleep(10)  # some finished games to ask for
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # this thread, and the viewers it starts
            print(
                f"arena serve in process, {n} random bots, {os.cpu_count()} cores, windows of {window:.0f} s; "
                f"loaded: {VIEWERS} event-stream viewers and {PAGES} game pages from {PAGE_THREADS} threads"
            )
            quiet, loaded = [], []
            for k, kind in enumerate(["quiet", "loaded", "quiet", "loaded", "quiet"]):
                start = time.time()
                stop = threading.Event()
                note = ""
                if kind == "loaded":
                    with sqlite3.connect(folder / "arena.db") as conn:
                        ids = [
                            r[0]
                            for r in conn.execute(
                                "SELECT g.id FROM games g JOIN units u ON u.id = g.unit WHERE u.status = 'done'"
                            )
                        ]
                    received = [0, 0]
                    where = [(host, int(port), STREAMS[i % len(STREAMS)], stop, received) for i in range(VIEWERS)]
                    tabs = [threading.Thread(target=viewer, args=args, daemon=True) for args in where]
                    for t in tabs:
                        t.start()
                    times: list[float] = []
                    pages(base, ids, live_ids(base), PAGES, stop, times)
                    remaining = start + window - time.time()
                    time.sleep(max(0.0, remaining))
                    stop.set()
                    times.sort()
                    note = (
                        f"; {len(times)} pages of {len(set(ids[:PAGES]))} games, p50 "
                        f"{times[len(times) // 2] * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms"
                        f"{'' if remaining > 0 else ' (the pages outlasted the window)'}; streams read "
                        f"{received[0] / 1e6:.1f} MB, {received[1]} refused or failed"
                    )
                else:
                    time.sleep(window)
                end = time.time()
                time.sleep(3)  # games that ended just before `end` are in the database
                games, decisions = decisions_between(folder, start, end)
                rate = decisions / (end - start)
                (loaded if kind == "loaded" else quiet).append(rate)
                print(f"window {k + 1} ({kind}): {games} games, {rate:,.0f} decisions/s{note}", flush=True)
            share = (sum(loaded) / len(loaded)) / (sum(quiet) / len(quiet))
            print(f"loaded pace / quiet pace: {share:.3f}")
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


if __name__ == "__main__":
    main()
