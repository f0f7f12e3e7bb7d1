"""Benchmark (not a test): a real `arena serve` playing a field of bots of known strength.

N bots are made whose strength order is known: bot i plays the built-in
greedy heuristic (`referee.bots.greedy.choose`) with probability
p = i / (N - 1) and a uniformly random legal action otherwise, seeded per
decision from the game's seed, so it is deterministic. One user per bot is
added with `arena user add --json`, the bots are submitted through the HTTP
API, built and gated (the referee's `check`) by an `arena serve` subprocess
with `--workers W`, and played for T seconds after the last one became
active. Short games (`target_score = 20`), 2 seats, `concurrency = 0` (8
games per worker, as `tournament --workers` plays). Everything is read back
from the API, and the server's resident memory from /proc. It prints:

- the gate: seconds from a submission to `active`, median and max;
- seconds from `active` to the end of each bot's first game, median and max
  (the API gives a game's end, not its start; the first bot to pass the gate
  also waits for a second one);
- games per bot in the timed window and over the whole run (from
  `GET /api/games?bot=NAME`): min, max, max / min;
- Spearman's rho of the leaderboard (mu - 3 sigma), of the MLE Elo refit
  (`mle_elo`, refitted once a minute, so up to a minute behind) and of mu
  against the known strength order, and of the online rating against the MLE
  Elo;
- games/s in the timed window, units played, the distinct pairs that met out
  of N (N - 1) / 2, and the games with a failure (a timeout, a crash);
- how busy the machine was in the window (/proc/stat: every process, the
  sandboxed bots included), and the CPU per game that makes;
- games/s in the window as a share of the CPU-bound limit: cores / the CPU
  seconds a game of this field costs (bots, sandbox and referee), measured
  the same way once the arena is stopped, by a `tournament` of
  REFERENCE_BOTS bots of the field (evenly spaced in strength) played in
  process, sandboxed, on the same rules and clock (bench_scale.py's method);
- the resident memory (VmRSS) of the server process, of its worker processes,
  and of everything else below it (the bots and their bubblewrap), sampled
  every 5 s in the window: the peak of each sum and the value at the end;
- anything the server wrote to stderr besides its progress line.

Run: python tests/benchmarks/bench_arena.py [N] [T] [W]
     e.g. python tests/benchmarks/bench_arena.py 40 300 2   (the defaults)
     a quick look: python tests/benchmarks/bench_arena.py 6 40 1
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime
from itertools import combinations
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout and the shared simulation's helpers

from arena_sim import spearman  # noqa: E402

from referee.arena.archives import ArchiveLimits, pack_folder  # noqa: E402
from referee.arena.client import multipart, request  # noqa: E402
from referee.seats.sandbox import probe_host  # noqa: E402
from referee.tournament.config import default_concurrency  # noqa: E402
from referee.tournament.executors import Placement  # noqa: E402

TABLE_SIZE = 2
SAMPLE_EVERY_S = 5.0
PROGRESS = "waiting "  # how the server's progress line starts (`arena serve`)
GATE_TIMEOUT_S = 1800.0  # every bot built and checked within this, or the run stops
REFERENCE_BOTS = 8  # the in-process tournament that measures a game's CPU: its bots
REFERENCE_DEAL_SETS = 4  # per pair: 8 bots, 28 pairs, 2 rotations -> 224 games

CONFIG = f"""\
name = "bench"
game = "chicago"
table_size = {TABLE_SIZE}
concurrency = 0                # 8 games per worker, as `tournament --workers` plays
time_control = "decision=1s,startup=10s"

[rules]
options = {{ target_score = 20 }}   # short games: many units in the window

[uploads]
submissions_per_hour = 1000
"""

BOT = '''\
"""Bench bot: greedy with probability P, else a uniformly random legal action."""

import random

from protocol.bot import run_bot
from protocol.chicago import ChicagoRules
from referee.bots.greedy import choose

P = {p!r}
game = {{"rules": None, "seed": 0, "decision": 0}}


def on_game_start(msg):
    game["rules"] = msg.rules if isinstance(msg.rules, ChicagoRules) else None
    game["seed"] = msg.seed
    game["decision"] = 0


def policy(view, legal):
    game["decision"] += 1
    rng = random.Random(f"{{game['seed']}}:{{game['decision']}}")  # seeded per decision
    if rng.random() < P:
        return choose(view, legal, game["rules"])
    return rng.choice(legal)


run_bot(policy, name="{name}", version="1", on_game_start=on_game_start)
'''


REFERENCE = """\
name = "reference"
game = "chicago"
seed = 7
format = "round-robin"
table_size = {table_size}
deal_sets = {deal_sets}
concurrency = 0
time_control = "decision=1s,startup=10s"
sandbox = true

[rules]
options = {{ target_score = 20 }}
"""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env=_env(),
        check=False,
    )


def _env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "NO_COLOR": "1",
        "COLUMNS": "1000",  # the progress line in one line (rich wraps at 80 when stderr is not a terminal)
        "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else ""),
    }


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


class Server:
    """`arena serve` in its own process group; its stdout drained, its stderr in a file."""

    def __init__(self, folder: Path, workers: int, stderr: Path) -> None:
        self.stderr = stderr
        with stderr.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "referee.cli", "arena", "serve", str(folder), "--port", "0"]
                + ["--workers", str(workers)],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                cwd=ROOT,
                env=_env(),
                start_new_session=True,
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the first line is the address
        if " at http://" not in line:
            self.kill()
            raise SystemExit(f"arena serve did not start: {line!r}\n{stderr.read_text()[-2000:]}")
        self.base = line.split(" at ", 1)[1].split()[0].rstrip("/")
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the server's process group. Its workers run in sessions of their
        own and stop when their stdin closes (cancelling their games, killing
        their bots): wait for that, and SIGKILL any that lingers."""
        workers = [p for p in _children(self.proc.pid) if _is_worker(p)]
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(30)
        killed = time.monotonic()
        while any(map(_running, workers)) and time.monotonic() < killed + 20:
            time.sleep(0.1)
        for pid in filter(_running, workers):
            print(f"worker {pid} still running 20 s after the server was killed: killing it")
            os.kill(pid, signal.SIGKILL)
        if workers:
            print(f"server killed; its workers had exited {time.monotonic() - killed:.1f} s later")


def get(base: str, path: str, token: str | None = None) -> Any:
    return request(base, path, token=token)[1]


def all_games(base: str, bot: str | None = None) -> list[dict[str, Any]]:
    """Every finished game (of `bot`, if given), paged through `GET /api/games`."""
    games: list[dict[str, Any]] = []
    after = 0
    while True:
        query = f"after={after}&limit=100" + (f"&bot={bot}" if bot else "")
        page = get(base, f"/api/games?{query}")
        games += page["games"]
        if page["next_after"] is None:
            return games
        after = page["next_after"]


# ------------------------------------------------------------------ memory


def _ppids() -> dict[int, int]:
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        out[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state
    return out


def _children(pid: int) -> list[int]:
    return [p for p, parent in _ppids().items() if parent == pid]


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0  # gone, or a zombie


def _is_worker(pid: int) -> bool:
    try:
        return b"referee.tournament.pool_worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def memory_kib(server: int) -> tuple[int, int, int, int]:
    """VmRSS of (the server, its worker processes, every other descendant), and the workers' count."""
    children: dict[int, list[int]] = {}
    for pid, ppid in _ppids().items():
        children.setdefault(ppid, []).append(pid)
    workers = [p for p in children.get(server, []) if _is_worker(p)]
    below, todo = [], list(children.get(server, []))
    while todo:
        pid = todo.pop()
        below.append(pid)
        todo += children.get(pid, [])
    others = [p for p in below if p not in workers]
    return _rss_kib(server), sum(map(_rss_kib, workers)), sum(map(_rss_kib, others)), len(workers)


# ------------------------------------------------------------------ the run


def make_field(tmp: Path, n: int) -> dict[str, float]:
    """Bot folders bench00 ... with p = i / (n - 1): the name sorts in strength order."""
    strengths = {}
    for i in range(n):
        name = f"bench{i:02d}"
        p = i / (n - 1)
        folder = tmp / "bots" / name
        folder.mkdir(parents=True)
        (folder / "main.py").write_text(BOT.format(p=p, name=name))
        strengths[name] = p
    return strengths


def submit_all(base: str, tmp: Path, tokens: dict[str, str]) -> dict[str, int]:
    ids = {}
    for name, token in tokens.items():
        archive = pack_folder(tmp / "bots" / name, ArchiveLimits())
        body, ctype = multipart(archive, name)
        _status, sub = request(base, "/api/submissions", token=token, body=body, content_type=ctype)
        ids[name] = sub["id"]
    return ids


def follow(server: Server, ids: dict[str, int], tokens: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Each submission's final state (active or failed), as its owner sees it."""
    final: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + GATE_TIMEOUT_S
    while len(final) < len(ids):
        if not server.alive():
            raise SystemExit(f"arena serve stopped:\n{server.stderr.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            raise SystemExit(f"not every bot was built and checked within {GATE_TIMEOUT_S:.0f} s")
        for name, sub_id in ids.items():
            if name not in final:
                sub = get(server.base, f"/api/submissions/{sub_id}", tokens[name])
                if sub["status"] in ("active", "failed"):
                    final[name] = sub
        time.sleep(2.0)
    return final


def cpu_per_game(tmp: Path, names: list[str]) -> tuple[float, int]:
    """CPU seconds per game (the machine's busy time) of a sandboxed
    in-process `tournament` between `names`, and its games."""
    folder = tmp / "reference"
    folder.mkdir()
    lines = [REFERENCE.format(table_size=TABLE_SIZE, deal_sets=REFERENCE_DEAL_SETS)]
    for name in names:
        lines.append(f'[[bots]]\nname = "{name}"\ncommand = "python3 main.py"\ndir = "{tmp / "bots" / name}"\n')
    config = folder / "reference.toml"
    config.write_text("\n".join(lines))
    before = busy_cpu_s()
    done = cli("tournament", str(config), "--db", str(folder / "reference.db"))
    cpu = busy_cpu_s() - before
    if done.returncode != 0:
        raise SystemExit(f"the reference tournament failed: {done.stderr[-2000:]}")
    with sqlite3.connect(folder / "reference.db") as conn:
        games = int(conn.execute("SELECT count(*) FROM games").fetchone()[0])
    return cpu / games, games


def busy_cpu_s() -> float:
    """CPU seconds the whole machine has been busy (/proc/stat): a sandboxed bot is
    no child the referee reaps, so only the machine's count holds every bot's CPU."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def spread(counts: list[int]) -> str:
    if not counts:
        return "none"
    low, high = min(counts), max(counts)
    ratio = f"{high / low:.2f}" if low else "inf"
    return f"min {low}, max {high}, max / min {ratio}"


def rho(xs: list[float], ys: list[float]) -> str:
    try:
        return f"{spearman(xs, ys):.3f}"
    except statistics.StatisticsError:  # one side constant: no correlation to speak of
        return "undefined"


def seconds(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.1f} s, max {max(xs):.1f} s" if xs else "none"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    window = float(sys.argv[2]) if len(sys.argv) > 2 else 300.0
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    if n < 3:
        raise SystemExit("N must be at least 3 (a rank correlation needs them)")
    problems = probe_host().problems()
    if problems:
        print("skipped: the arena always sandboxes its bots, and this machine cannot: " + "; ".join(problems))
        return
    slots = Placement(workers=workers).default_concurrency() if workers else default_concurrency()
    print(
        f"arena: {n} bots of known strength (greedy with p = i/{n - 1}, else random), {TABLE_SIZE} seats, "
        f"target_score 20, --workers {workers} (concurrency 0: {slots} games, "
        f"{max(1, slots // TABLE_SIZE)} units at once), {window:.0f} s after the last became active, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-arena-") as tmp_name:
        tmp = Path(tmp_name)
        folder = tmp / "arena"
        made = cli("arena", "init", str(folder))
        if made.returncode != 0:
            raise SystemExit(made.stderr)
        (folder / "arena.toml").write_text(CONFIG)
        strengths = make_field(tmp, n)
        tokens = {}
        for name in strengths:
            added = cli("arena", "user", "add", str(folder), name, "--json")
            if added.returncode != 0:
                raise SystemExit(added.stderr)
            tokens[name] = json.loads(added.stdout)["token"]
        server = Server(folder, workers, tmp / "serve.err")
        try:
            rate = run(server, tmp, strengths, tokens, window)
        finally:
            server.kill()
            said = [line for line in server.stderr.read_text().splitlines() if not line.startswith(PROGRESS)]
            for line in said[:10]:
                print(f"server stderr: {line}")
            if len(said) > 10:
                print(f"server stderr: ... {len(said) - 10} more lines")
        names = sorted(strengths)
        k = min(REFERENCE_BOTS, len(names))
        picked = [names[round(i * (len(names) - 1) / (k - 1))] for i in range(k)]
        per_game, played = cpu_per_game(tmp, picked)
        cores = os.cpu_count() or 1
        limit = cores / per_game
        print(
            f"CPU-bound limit: {cores} cores / {per_game * 1000:.0f} ms CPU per game (a sandboxed in-process "
            f"tournament of {played} games between {k} of the field) = {limit:.2f} games/s; "
            f"the arena's window: {rate:.2f} games/s = {rate / limit:.2f} of the limit"
        )


def run(server: Server, tmp: Path, strengths: dict[str, float], tokens: dict[str, str], window: float) -> float:
    """Submit, gate and play the field for `window` s; print what was seen; return the window's games/s."""
    n = len(strengths)
    t0 = time.monotonic()
    ids = submit_all(server.base, tmp, tokens)
    final = follow(server, ids, tokens)
    failed = {k: v for k, v in final.items() if v["status"] == "failed"}
    active = {k: v for k, v in final.items() if v["status"] == "active"}
    for name, sub in sorted(failed.items()):
        print(f"  {name} failed the gate: {sub.get('reason', '?')}")
    if len(active) < 3:
        raise SystemExit(f"only {len(active)} bots passed the gate: nothing to measure")
    since = {k: epoch(v["active_since"]) for k, v in active.items()}
    gate = [since[k] - epoch(v["created"]) for k, v in active.items()]
    start = max(since.values())
    end = start + window
    print(f"all {n} submitted and through the gate in {time.monotonic() - t0:.0f} s ({len(active)} active)", flush=True)

    busy_at_start = busy_cpu_s()
    peaks = [0, 0, 0, 0]  # KiB: the server, its workers, the two together, everything else below it
    last = [0, 0, 0, 0]
    workers = 0
    while time.time() < end:
        if not server.alive():
            raise SystemExit(f"arena serve stopped:\n{server.stderr.read_text()[-2000:]}")
        own, pool, others, workers = memory_kib(server.proc.pid)
        last = [own, pool, own + pool, others]
        peaks = [max(a, b) for a, b in zip(peaks, last, strict=True)]
        time.sleep(max(0.0, min(SAMPLE_EVERY_S, end - time.time())))
    busy = busy_cpu_s() - busy_at_start
    board = get(server.base, "/api/leaderboard")
    games = [g for g in all_games(server.base) if epoch(g["finished"]) <= end]
    seen = {g["id"] for g in games}  # a unit that closes meanwhile shows games the list above did not
    per_bot = {name: [g for g in all_games(server.base, name) if g["id"] in seen] for name in active}
    report(strengths, active, since, gate, start, end, board, games, per_bot)
    print_memory(peaks, last, workers)
    cores = os.cpu_count() or 1
    played = sum(epoch(g["finished"]) > start for g in games)
    print(
        f"the machine in the window: busy {busy / (cores * window):.0%} of {cores} cores, "
        f"{busy / max(1, played) * 1000:.0f} ms CPU per game"
    )
    return played / (end - start)


def report(
    strengths: dict[str, float],
    active: dict[str, dict[str, Any]],
    since: dict[str, float],
    gate: list[float],
    start: float,
    end: float,
    board: dict[str, Any],
    games: list[dict[str, Any]],
    per_bot: dict[str, list[dict[str, Any]]],
) -> None:
    n = len(active)
    bot_of = {f"{name}.v1": name for name in active}
    print(f"gate (submitted -> active): {seconds(gate)}")

    first = {}
    for name, played in per_bot.items():
        if played:
            first[name] = min(epoch(g["finished"]) for g in played) - since[name]
    order = sorted(since, key=lambda k: since[k])
    late = max(first, key=lambda k: first[k]) if first else None
    print(
        f"active -> end of its first game: {seconds(list(first.values()))}"
        + (f" (the max: {late}, {order.index(late) + 1} of {n} to become active)" if late else "")
        + (f"; {n - len(first)} bots played no game" if len(first) < n else "")
    )

    in_window = {name: sum(start < epoch(g["finished"]) <= end for g in played) for name, played in per_bot.items()}
    print(f"games per bot in the window: {spread(list(in_window.values()))}")
    print(f"games per bot over the run:  {spread([len(p) for p in per_bot.values()])}")
    seat_count = Counter(bot_of[s] for g in games for s in g["seats"] if s in bot_of)
    if any(seat_count[k] != len(v) for k, v in per_bot.items()):
        print("  (!) the games' seats and the per-bot pages disagree:", dict(seat_count))

    entries = [e for e in board["bots"] if e["bot"] in active]
    keys = [e["bot"] for e in entries]
    known = [strengths[k] for k in keys]
    ordinal = [e["rating"]["ordinal"] for e in entries]
    mu = [e["rating"]["mu"] for e in entries]
    print(f"Spearman vs the known order: leaderboard (mu - 3 sigma) {rho(ordinal, known)}, mu {rho(mu, known)}")
    fitted = [e for e in entries if e["mle_elo"] is not None]
    if len(fitted) >= 3:
        elo = [e["mle_elo"]["elo"] for e in fitted]
        when = max(e["mle_elo"]["fitted"] for e in fitted)
        print(
            f"Spearman, MLE Elo ({len(fitted)} bots, fitted {end - epoch(when):.0f} s before the end): "
            f"vs the known order {rho(elo, [strengths[e['bot']] for e in fitted])}, "
            f"vs mu - 3 sigma {rho(elo, [e['rating']['ordinal'] for e in fitted])}, "
            f"vs mu {rho(elo, [e['rating']['mu'] for e in fitted])}"
        )
    else:
        print("MLE Elo: not fitted yet")
    print("leaderboard: " + " ".join(f"{e['bot'].removeprefix('bench')}" for e in entries) + " (best first)")

    window_games = [g for g in games if epoch(g["finished"]) > start]
    rotations = Counter(g["unit"] for g in games)
    done = {u for u, k in rotations.items() if k == TABLE_SIZE}  # every rotation of the unit recorded
    last_game: dict[int, float] = {}
    for g in games:
        last_game[g["unit"]] = max(last_game.get(g["unit"], 0.0), epoch(g["finished"]))
    met = {frozenset(pair) for g in games for pair in combinations([bot_of[s] for s in g["seats"]], 2)}
    failures = Counter(f["reason"] for g in games for f in g["failures"])
    print(
        f"window: {len(window_games)} games in {end - start:.0f} s = {len(window_games) / (end - start):.2f} games/s, "
        f"{sum(start < last_game[u] for u in done)} units"
    )
    print(
        f"whole run: {len(games)} games, {len(done)} units, pairs met {len(met)} of {n * (n - 1) // 2}, "
        f"games with a failure {sum(bool(g['failures']) for g in games)}"
        + (f" ({', '.join(f'{k} {v}' for k, v in sorted(failures.items()))})" if failures else "")
    )


def print_memory(peaks: list[int], last: list[int], workers: int) -> None:
    """VmRSS sums in MiB: the peak of the 5 s samples, the last sample in brackets."""
    shown = [f"{p / 1024:.0f} MiB ({q / 1024:.0f})" for p, q in zip(peaks, last, strict=True)]
    print(
        f"resident memory (VmRSS summed, shared pages counted in each process; peak of {SAMPLE_EVERY_S:.0f} s "
        f"samples, the last in brackets): the server {shown[0]}, its {workers} worker process"
        f"{'es' if workers != 1 else ''} {shown[1]}, together {shown[2]}; "
        f"below them (the bots and their bubblewrap) {shown[3]}"
    )


if __name__ == "__main__":
    main()
