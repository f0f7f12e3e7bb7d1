"""The terminal seat, through the real command: piped input (`yes 1 | play`)
plays a whole game whose log verifies, and a pseudo-terminal session answers
typed cards, a typo, an illegal card, `?` and a resignation correctly."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from logfiles import read_json_log
from paths import ROOT
from timing import scaled

CLI = [sys.executable, "-m", "referee.cli"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
SYMBOL_SUIT = {"♠": "s", "♥": "h", "♦": "d", "♣": "c"}
SESSION_LIMIT_S = scaled(120)


def test_piped_input_plays_a_whole_game_that_verifies(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    cmd = " ".join([*CLI, "play", "sample_bots/python/random_bot.py", "--seed", "3", "--log-dir", str(logs)])
    run = subprocess.run(
        ["bash", "-c", f"yes 1 | {cmd}"], cwd=ROOT, capture_output=True, text=True, timeout=scaled(180)
    )
    assert run.returncode == 0, run.stderr
    assert "your choice> 1" in run.stdout  # prompts printed, the piped choice echoed
    m = re.search(r"winner: (\S+); final scores: human (\d+), random_bot (\d+)", run.stdout)
    assert m, run.stdout[-2000:]
    header, records = read_json_log(logs / "game-00001.jsonl")
    result = next(r for _, r in records if r["type"] == "result")
    assert [int(m.group(2)), int(m.group(3))] == result["scores"]
    assert m.group(1) == ["human", "random_bot"][result["winner"]]
    assert header.players[0].human and header.players[0].argv == []
    check = subprocess.run(
        [*CLI, "verify", str(logs / "game-00001.jsonl")], cwd=ROOT, capture_output=True, text=True, timeout=scaled(120)
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "1 verified, 0 failed" in check.stdout


@pytest.mark.parametrize(
    ("args", "bots"),
    [
        (["--rule", "target_score=12"], ["pimc"]),
        (["--game", "ghost-euchre", "--rule", "max_hands=3"], ["pimc", "pimc#2"]),
    ],
)
def test_with_no_bot_named_pimc_takes_every_other_seat(tmp_path: Path, args: list[str], bots: list[str]) -> None:
    logs = tmp_path / "logs"
    cmd = " ".join([*CLI, "play", "--seed", "3", *args, "--log-dir", str(logs)])
    run = subprocess.run(
        ["bash", "-c", f"yes 1 | {cmd}"], cwd=ROOT, capture_output=True, text=True, timeout=scaled(300)
    )
    assert run.returncode == 0, run.stderr
    assert "pimc" in run.stderr.split(";")[0], run.stderr  # the first line names the opponent
    header, records = read_json_log(logs / "game-00001.jsonl")
    assert [p.name for p in header.players[1:]] == bots
    assert all(p.argv[-2:] == ["-m", "referee.bots.pimc"] for p in header.players[1:])  # the built-in bot
    result = next(r for _, r in records if r["type"] == "result")
    assert result["failures"] == [] and result["forfeited"] == []  # the search keeps to the default clock


def test_bad_options_are_one_line(tmp_path: Path) -> None:
    run = subprocess.run(
        [*CLI, "play", "sample_bots/python/random_bot.py", "--seat", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "--seat 5 is not a seat of this table: choose 0-1" in run.stderr
    run = subprocess.run(
        [*CLI, "play", "a.py", "b.py", "c.py", "d.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2 and "needs 1 or 2 or 3 bots, got 4" in run.stderr


class Terminal:
    """The command on a pseudo-terminal: type lines, read the screen."""

    def __init__(self, args: list[str]) -> None:
        self.master, slave = os.openpty()
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        self.proc = subprocess.Popen(
            [*CLI, *args], cwd=ROOT, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.screen = ""
        self.deadline = time.monotonic() + SESSION_LIMIT_S

    def read_until(self, marker: str) -> str:
        """Screen text (ANSI removed) up to and including the next `marker`; consumed."""
        while marker not in self.screen:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {marker!r} on the terminal; last output: {self.screen[-1500:]!r}")
            ready, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the command ended and closed the terminal
                    chunk = b""
                if not chunk and self.proc.poll() is not None:
                    raise AssertionError(f"the command ended before {marker!r}: {self.screen[-1500:]!r}")
                self.screen += ANSI.sub("", chunk.decode("utf-8", "replace"))
        head, _, rest = self.screen.partition(marker)
        self.screen = rest
        return head + marker

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=scaled(10))
        os.close(self.master)


def _hand(screen: str) -> list[str]:
    found = re.findall(r"your hand: .*?\(([^)]*)\)", screen)
    assert found, screen[-800:]
    return found[-1].split()


def _led_suit(screen: str) -> str | None:
    m = re.findall(r"\ntrick: \S+ \(seat \d\) (?:10|[2-9JQKA])([♠♥♦♣])", screen)
    return SYMBOL_SUIT[m[-1]] if m else None


@pytest.fixture
def terminal() -> object:
    made: list[Terminal] = []

    def start(args: list[str]) -> Terminal:
        t = Terminal(args)
        made.append(t)
        return t

    yield start
    for t in made:
        t.close()


def test_terminal_session_through_a_pty(terminal: object, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    t = terminal(["play", "sample_bots/python/first_legal_bot.py", "--seed", "8", "--log-dir", str(logs)])  # type: ignore[operator]
    screen = t.read_until("your choice> ")
    assert "exchange" in screen and "1 keep all five cards" in screen
    prompt = screen.split("your hand:")[-1]  # 6 of the 32 exchanges fit the screen; the cards can be typed
    assert len(re.findall(r"\b\d+ (?:keep all|discard )", prompt)) == 6, prompt
    assert "(26 more) or type the cards to discard" in prompt
    t.type("h")
    assert "your hand:" in t.read_until("your choice> ")  # the history, then the hand again
    t.type("?")
    assert "Exchange: discard 0-5 cards" in t.read_until("your choice> ")
    t.type("Kx")
    assert "'Kx' is not a card: a rank 2-9 T J Q K A and a suit s h d c" in t.read_until("your choice> ")
    t.type("zz")
    assert "'zz' is not a choice" in t.read_until("your choice> ")
    hand = _hand(screen)
    absent = next(f"{r}{s}" for r in "AKQJT98765432" for s in "shdc" if f"{r}{s}" not in hand)
    t.type(absent)
    assert f"illegal: discard {absent}: cannot discard {absent}: not in hand" in t.read_until("your choice> ")
    t.type(f"{hand[0]} {hand[1].upper()}")  # typed card names, in any case
    screen = t.read_until("your choice> ")
    assert "you exchanged 2 cards (round 1)" in screen
    followed = False
    for _ in range(400):  # answer with the first choice until the suit led can be refused
        led = _led_suit(screen)
        hand = _hand(screen)
        if "trick;" in screen and led is not None:
            same = [c for c in hand if c[1] == led]
            other = [c for c in hand if c[1] != led]
            if same and other:
                t.type(other[0])
                refused = t.read_until("your choice> ")
                from referee.games.show import SUIT_NAMES

                assert (
                    f"illegal: play {other[0]}: must follow suit (CH-15): {SUIT_NAMES[led]} led, hand holds" in refused
                )
                followed = True
                break
        t.type("1")
        screen = t.read_until("your choice> ")
    assert followed, "no trick let the test try a card of the wrong suit"
    t.type("q")
    assert "resign this game? [y/N]" in t.read_until("[y/N] ")
    t.type("n")
    assert "playing on" in t.read_until("your choice> ")
    t.type("q")
    t.read_until("[y/N] ")
    t.type("y")
    end = t.read_until("play again? [y/N] ")
    assert "you resigned" in end and "first_legal_bot won" in end
    t.type("")
    end = t.read_until("logs in")
    assert "winner: first_legal_bot" in end
    assert t.proc.wait(timeout=scaled(30)) == 0
    _, records = read_json_log(logs / "game-00001.jsonl")
    failures = [r for _, r in records if r["type"] == "failure"]
    assert [(f["seat"], f["reason"]) for f in failures] == [(0, "resigned")]
    result = next(r for _, r in records if r["type"] == "result")
    assert result["forfeited"] == [0] and result["winner"] == 1
    check = subprocess.run(
        [*CLI, "verify", str(logs / "game-00001.jsonl")], cwd=ROOT, capture_output=True, text=True, timeout=scaled(120)
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_two_games_end_with_the_match_table_and_a_used_log_dir_is_refused(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    args = [
        *CLI,
        "play",
        "sample_bots/python/first_legal_bot.py",
        "--seed",
        "2",
        "--games",
        "2",
        "--rule",
        "target_score=8",
        "--log-dir",
        str(logs),
    ]
    run = subprocess.run(args, cwd=ROOT, input="1\n" * 2000, capture_output=True, text=True, timeout=scaled(180))
    assert run.returncode == 0, run.stderr
    assert "game 2: you are seat 0" in run.stdout and "human" in run.stdout.split("game 2:")[-1]
    assert sorted(p.name for p in logs.glob("game-*.jsonl")) == ["game-00001.jsonl", "game-00002.jsonl"]
    assert "first_legal_bot" in run.stdout.split("play again?")[-1]  # the match table names both seats
    again = subprocess.run(args, cwd=ROOT, input="", capture_output=True, text=True, timeout=scaled(60))
    assert again.returncode == 2 and "already holds 2 game logs" in again.stderr and "Traceback" not in again.stderr


def test_a_euchre_table_shows_trump_contract_and_declarer_once_named(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    cmd = " ".join(
        [
            *CLI,
            "play",
            "random",
            "random",
            "--game",
            "ghost-euchre",
            "--seed",
            "4",
            "--rule",
            "max_hands=1",
            "--log-dir",
            str(logs),
        ]
    )
    run = subprocess.run(
        ["bash", "-c", f"yes 1 | {cmd}"], cwd=ROOT, capture_output=True, text=True, timeout=scaled(180)
    )
    assert run.returncode == 0, run.stderr
    _header, records = read_json_log(logs / "game-00001.jsonl")
    named = next(r["event"] for _, r in records if r["type"] == "event" and r["event"]["type"] == "trump_named")
    suit = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}[named["suit"]]
    names = ["you", "random (seat 1)", "random#2 (seat 2)"]
    want = f"trump: {suit} (contract {named['contract']}, declarer {names[named['seat']]})"
    shown = [line for line in run.stdout.splitlines() if line.startswith("trump: ")]
    assert shown and set(shown) == {want}, (want, shown[:3])
    before = run.stdout.split(want, 1)[0]
    assert "trump: " not in before  # not before it was named
