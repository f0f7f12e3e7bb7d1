"""Shared by the live tests: a real match that writes the live stream, and
the cards a piece of page data shows."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import trio
from paths import RANDOM_BOT, ROOT, SAMPLE_BOTS, TEST_BOTS
from timing import scaled
from webclient import get, http_scope, signed_in

from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.live.serve import match_writer
from referee.live.stream import stream_paths
from referee.play.game_spec import GameRecord
from referee.play.match import MatchConfig, run_match
from referee.seats.bot_command import BotSpec, resolve_command

GAME = get_game("chicago")
RULES = build_rules(GAME, None, {"target_score": 15})
CARD_RANKS, CARD_SUITS = "23456789TJQKA", "shdc"


def sample_bot(name: str) -> BotSpec:
    return resolve_command([str(SAMPLE_BOTS / f"{name}.py")], name=name.replace("_bot", ""))


def misbehaving_bot(name: str, *options: str) -> BotSpec:
    return resolve_command([str(TEST_BOTS / f"{name}.py"), f"live-{name}", *options], name=name)


def play_streamed_match(folder: Path, bots: list[BotSpec], games: int = 2, seed: int = 5) -> list[GameRecord]:
    """A real match (real bot processes) whose games write the stream and logs in `folder`."""
    live = match_writer(folder, name="test", game=GAME.name, bots=[b.name for b in bots], scheduled=games)
    config = MatchConfig(
        game=GAME,
        rules=RULES,
        bots=bots,
        games=games,
        seed=seed,
        time_control=TimeControl(decision_ms=2000, startup_ms=10000),
        log_dir=folder,
        watch_games=live.watch_games,
    )
    records: list[GameRecord] = []

    async def bounded() -> None:
        with trio.fail_after(scaled(120)):
            await run_match(config, records.append)

    try:
        trio.run(bounded)
    finally:
        live.close("completed")
    return records


def stream_lines(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    public, private = stream_paths(folder / "match")
    return (
        [json.loads(x) for x in public.read_text().splitlines()],
        [json.loads(x) for x in private.read_text().splitlines()],
    )


def is_card(text: Any) -> bool:
    return isinstance(text, str) and len(text) == 2 and text[0] in CARD_RANKS and text[1] in CARD_SUITS


def cards_in(value: Any) -> set[str]:
    """Every card a JSON value names, the replay page's packed lists ("~AsKd") unpacked."""
    found: set[str] = set()
    if isinstance(value, str):
        if value.startswith("~") and not value.startswith("~~"):
            found.update(value[i : i + 2] for i in range(1, len(value), 2) if is_card(value[i : i + 2]))
        elif is_card(value):
            found.add(value)
    elif isinstance(value, list):
        for v in value:
            found |= cards_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            found |= cards_in(v)
    return found


URL_RE = re.compile(r"http://127\.0\.0\.1:(\d+)(/[A-Za-z0-9_-]+/)")


def cli(*args: str, **popen: Any) -> subprocess.Popen[str]:
    """The real command in a subprocess, its output in pipes."""
    return subprocess.Popen(
        [sys.executable, "-m", "referee.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def wait_for_url(proc: subprocess.Popen[str], limit_s: float = 60, seen: list[str] | None = None) -> str:
    """The dashboard URL the process prints (stdout or stderr), read by threads
    that go on collecting its output lines into `seen`."""
    found: list[str] = []
    seen = [] if seen is None else seen

    def read(stream: Any) -> None:
        for line in stream:
            seen.append(line)
            m = URL_RE.search(line)
            if m and not found:
                found.append(m.group(0))

    for stream in (proc.stdout, proc.stderr):
        threading.Thread(target=read, args=(stream,), daemon=True).start()
    deadline = time.monotonic() + scaled(limit_s)
    while not found and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert found, f"no dashboard URL within {scaled(limit_s)} s; output: {''.join(seen)[-2000:]}"
    return found[0]


def get_json(url: str) -> Any:
    status, body = get(url)
    assert status == 200, (url, status, body[:200])
    return json.loads(body)


def stop(proc: subprocess.Popen[str], limit_s: float = 30) -> int:
    """Ctrl-C, then a kill if it does not end in time; its exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(scaled(limit_s))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(scaled(limit_s))
    return proc.returncode


def slow_tournament(folder: Path, delay_s: float = 0.04, deal_sets: int = 1, concurrency: int = 2) -> Path:
    """A small round robin of three unsandboxed bots, two of them slowed to `delay_s`
    a decision, to 15 points: games last a few seconds, so there is time to watch one."""
    slow = TEST_BOTS / "reader_delay.py"
    text = f"""name = "live-test"
game = "chicago"
seed = 41
format = "round-robin"
table_size = 2
deal_sets = {deal_sets}
concurrency = {concurrency}
time_control = "decision=2s,startup=20s"
sandbox = false
[rules]
preset = "gamerules"
options = {{ target_score = 15 }}
[[bots]]
name = "slow-first"
command = {json.dumps(f"{slow} live-slow-a delay={delay_s} requests=1000000")}
[[bots]]
name = "slow-second"
command = {json.dumps(f"{slow} live-slow-b delay={delay_s} requests=1000000")}
[[bots]]
name = "random"
command = {json.dumps(str(RANDOM_BOT))}
"""
    path = folder / "live-test.toml"
    path.write_text(text)
    return path


# ------------------------------------------------------------ the dashboard's streams, driven as plain ASGI


def stamp(line: bytes) -> float:
    return float(json.loads(line)["t"])


def sse_events(body: bytes) -> list[tuple[str, bytes]]:
    """(event, data) of every server-sent event in `body` (comments left out)."""
    out = []
    for block in body.split(b"\n\n"):
        name, data = "message", b""
        for line in block.split(b"\n"):
            if line.startswith(b"event: "):
                name = line[7:].decode()
            elif line.startswith(b"data: "):
                data = line[6:]
        if data:
            out.append((name, data))
    return out


async def drive_streams(
    lines: tuple[list[bytes], list[bytes]], delay: float | None, paths: list[str], moments: list[float], **source: Any
) -> list[tuple[float, list[bytes]]]:
    """Viewers of `paths` on a dashboard whose board reads the stream as it
    stood at each of `moments` in turn (its clock at that moment), one beat
    apart on trio's clock (run it on the autojump clock): for each moment, the
    bytes each viewer was sent meanwhile. `source` goes to the `LiveSource`."""
    from referee.live.app import MIN_GAP_S, Dashboard
    from referee.live.board import LiveBoard
    from referee.live.source import LiveSource

    now = [moments[0]]
    board = LiveBoard(delay, clock=lambda: now[0])
    app, headers = signed_in(Dashboard(LiveSource(board=board, title="test", **source)).routes)
    got = [bytearray() for _ in paths]
    gone = trio.Event()
    public, private = lines
    stamped = sorted([(stamp(x), 0, x) for x in public] + [(stamp(x), 1, x) for x in private])

    async def view(k: int) -> None:
        async def receive() -> dict[str, Any]:
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                got[k].extend(message["body"])

        await app(http_scope("/" + paths[k], headers), receive, send)

    def ready(path: str) -> bool:  # a game's own table is opened once its game is on the board
        parts = path.split("/")
        return not parts[1].isdigit() or board.game(int(parts[1])) is not None

    seen: list[tuple[float, list[bytes]]] = []
    waiting = list(range(len(paths)))
    async with trio.open_nursery() as nursery:
        n = 0
        for m in moments:
            now[0] = m
            while n < len(stamped) and stamped[n][0] <= m:
                (board.feed_private if stamped[n][1] else board.feed)(stamped[n][2])
                n += 1
            board.bump()
            for k in [k for k in waiting if ready(paths[k])]:
                waiting.remove(k)
                nursery.start_soon(view, k)
            await trio.sleep(MIN_GAP_S * 1.01)  # a beat: every viewer sends what it has
            seen.append((m, [bytes(b) for b in got]))
            for b in got:
                b.clear()
        gone.set()
    return seen
