"""Benchmark (not a test): what a live dashboard with 20 viewers costs a
tournament's throughput.

The same small round robin of trivial bots (`first_legal_bot.py`, 2 seats,
to 30 points, unsandboxed) is played by the real `tournament` command in a
subprocess, alternately alone and with `chicago-referee serve` on its
config (another process, started first) and 20 viewers: 10 dashboards and
10 live tables. The tournament writes its live stream in both cases (it
always does). Prints games/s per run, the ratio of the medians (the cost of
serving, target under 5 %), the load average before each run, and the CPU
time each party used: `serve`, the viewers, the tournament with its bots.
The last line puts serve's and the viewers' CPU beside the tournament's: when
the tournament keeps every core busy, what they take is what it loses, so
that share is the cost without the noise of other work on the machine.

The viewers make the requests the browser pages make and read the answers
raw, as a browser's network code does; what a browser then draws is its own
machine's work, not this one's. A dashboard loads its page and files once and
reads `summary/events`. A live table is the dashboard's "follow" table (the
projector's: one game in progress after another): it loads its page and files
once and reads `game/follow/moves` (its `over` carries the finished game's
data from its log once its deal set is over; when it cannot, the table loads
the game's data, as the browser does). With games this short (a few tenths of a second, two at a time) each
table follows several games a second, a harsher load than real games give.
The viewers are threads of this process; on a small machine they compete
with the tournament for the same cores, so the ratio is an upper bound.

Run: python tests/benchmarks/bench_live.py [GAMES] [ROUNDS]   (default 48 2)
"""

from __future__ import annotations

import http.client
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from math import comb
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "sample_bots" / "python" / "first_legal_bot.py"
N_BOTS = 4
VIEWERS = 20


def write_config(folder: Path, games: int) -> Path:
    per_set = comb(N_BOTS, 2) * 2
    lines = [
        'name = "bench-live"',
        "seed = 1",
        "table_size = 2",
        f"deal_sets = {max(1, -(-games // per_set))}",
        "concurrency = 2",
        'time_control = "decision=1s,startup=10s"',
        "sandbox = false",
        "[rules]",
        "options = { target_score = 30 }",
    ]
    for i in range(N_BOTS):
        lines += ["[[bots]]", f'name = "trivial{i}"', f'command = "{BOT}"']
    path = folder / "bench.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "referee.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def enter(url: str) -> str:
    """Open the printed URL once, as the browser does: the session cookie it gives."""
    u = urlsplit(url)
    c = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port or 80, timeout=10)
    c.request("GET", u.path)
    resp = c.getresponse()
    resp.read()
    c.close()
    return (resp.getheader("set-cookie") or "").split(";")[0]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Viewer(threading.Thread):
    """One browser page's traffic: a dashboard, or a live table that follows
    one game in progress after another."""

    def __init__(self, base: str, cookie: str, table: bool, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        u = urlsplit(base)
        self.host, self.port, self.prefix = u.hostname or "127.0.0.1", u.port or 80, "/"
        self.cookie = cookie  # the one browser's session: its pages are tabs of it
        self.table, self.stop, self.bytes, self.games = table, stop, 0, 0
        self.kept: http.client.HTTPConnection | None = None

    def _conn(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=10)

    @property
    def _headers(self) -> dict[str, str]:
        return {"accept-encoding": "gzip", "cookie": self.cookie}

    def _get(self, route: str) -> bytes:
        """One GET on the page's kept-alive connection (browsers reuse theirs)."""
        if self.kept is None:
            self.kept = self._conn()
        try:
            self.kept.request("GET", self.prefix + route, headers=self._headers)  # as browsers do
            body = self.kept.getresponse().read()
        except (OSError, http.client.HTTPException):
            self.kept.close()  # the server closed it: once more on a new one
            self.kept = self._conn()
            self.kept.request("GET", self.prefix + route, headers=self._headers)
            body = self.kept.getresponse().read()
        self.bytes += len(body)
        return body

    def _stream(self, route: str, on_over: Callable[[bytes], None] | None = None) -> None:
        """Read a server-sent event stream raw, as a browser's network code does;
        `on_over` gets the data of every `over` event (a game finished)."""
        c = self._conn()
        try:
            c.request("GET", self.prefix + route, headers={"cookie": self.cookie})
            resp = c.getresponse()
            over = False
            while not self.stop.is_set():
                line = resp.fp.readline()
                if not line:
                    return
                self.bytes += len(line)
                if on_over is not None and over and line.startswith(b"data: "):
                    on_over(line[6:])
                over = line == b"event: over\n"
        except (OSError, http.client.HTTPException):
            return
        finally:
            c.close()

    def _finished(self, data: bytes) -> None:
        if b'"data":' not in data:  # its log is not shown yet (or not known in time): the browser loads its data
            self._get(f"game/{json.loads(data)['game_id']}/data")
        self.games += 1

    def run(self) -> None:
        page = "game/follow" if self.table else ""
        self._get(page)
        for name in ["live.js", "live.css"] + (["replay-shell.html"] if self.table else []):
            self._get("assets/" + name)  # once: the browser keeps them (they are sent cacheable)
        while not self.stop.is_set():  # the browser reconnects a stream that ends
            if self.table:
                self._stream("game/follow/moves", self._finished)
            else:
                self._stream("summary/events")


def one_run(folder: Path, games: int, served: bool) -> dict[str, float]:
    """One tournament in a new folder; with `served`, the dashboard and its
    viewers are up before it starts (as on a projector), so only their
    running cost falls inside the measured time, not serve's start-up."""
    folder.mkdir()
    config = write_config(folder, games)
    serve = None
    stop = threading.Event()
    viewers: list[Viewer] = []
    try:
        if served:
            serve = cli("serve", str(config), "--no-open")
            assert serve.stdout is not None
            url = serve.stdout.readline().split()[-1]  # "live dashboard: URL", good once
            cookie = enter(url)
            viewers = [Viewer(url, cookie, table=i % 2 == 1, stop=stop) for i in range(VIEWERS)]
            for v in viewers:
                v.start()
            time.sleep(1.0)
        load = os.getloadavg()[0]
        cpu0 = cpu_seconds(serve.pid) if serve is not None else 0.0
        own0, kids0 = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
        tour = cli("tournament", str(config))
        _, err = tour.communicate(timeout=1800)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the tournament and its bots: it waited for them
        viewers_cpu = time.process_time() - own0
        if tour.returncode != 0:
            raise SystemExit(f"tournament failed: {err[-2000:]}")
        line = next(x for x in err.splitlines() if " games played in " in x)  # "completed: N games played in S s; ..."
        games, seconds = int(line.split()[1]), float(line.split(" played in ")[1].split()[0])
        cpu = cpu_seconds(serve.pid) - cpu0 if serve is not None else 0.0
        alive = sum(v.is_alive() for v in viewers)
        if alive != len(viewers):
            raise SystemExit(f"only {alive} of {len(viewers)} viewers lasted the run")
        return {
            "games": games,
            "seconds": seconds,
            "games_per_s": games / seconds,
            "serve_cpu_s": cpu,
            "viewers_cpu_s": viewers_cpu,
            "tournament_cpu_s": kids.ru_utime + kids.ru_stime - kids0.ru_utime - kids0.ru_stime,
            "load": load,
            "tables": sum(v.games for v in viewers),
            "kib": sum(v.bytes for v in viewers) / 1024,
        }
    finally:
        stop.set()
        if serve is not None:
            serve.terminate()
            serve.wait(30)


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 48
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        alone: list[float] = []
        watched: list[float] = []
        shares: list[float] = []  # serve's and the viewers' CPU over the tournament's, in served runs
        for r in range(rounds):
            for served in (False, True) if r % 2 == 0 else (True, False):  # ABBA: drift falls on both
                res = one_run(folder / f"r{r}-{'served' if served else 'alone'}", games, served)
                (watched if served else alone).append(res["games_per_s"])
                if served:
                    shares.append((res["serve_cpu_s"] + res["viewers_cpu_s"]) / res["tournament_cpu_s"])
                extra = (
                    (
                        f"; CPU serve {res['serve_cpu_s']:.2f} s, viewers {res['viewers_cpu_s']:.2f} s; "
                        f"{res['tables']:.0f} games followed to the end, "
                        f"{res['kib']:.0f} KiB to viewers"
                    )
                    if served
                    else ""
                )
                print(
                    f"round {r + 1} {'with serve + 20 viewers' if served else 'alone':>24}: "
                    f"{res['games']:.0f} games in {res['seconds']:.2f} s = {res['games_per_s']:.2f} games/s "
                    f"(load {res['load']:.2f} before; CPU tournament with bots {res['tournament_cpu_s']:.2f} s"
                    f"{extra})",
                    flush=True,
                )
        a, w = statistics.median(alone), statistics.median(watched)
        print(
            f"median games/s: alone {a:.2f}, with serve + {VIEWERS} viewers {w:.2f}; "
            f"cost {100 * (1 - w / a):+.1f} % of throughput (cpu cores: {os.cpu_count()})"
        )
        share = statistics.median(shares)
        print(
            f"serve and the viewers used {100 * share:.1f} % of the CPU time the tournament (with its bots) "
            f"used (median): on a machine the tournament keeps busy, about {100 * share / (1 + share):.1f} % "
            f"of its throughput"
        )


if __name__ == "__main__":
    main()
