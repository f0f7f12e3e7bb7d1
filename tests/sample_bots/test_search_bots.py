"""The search bots (`pimc`, `ismcts`) through the real referee, by their
built-in names: whole short games of every game and seat count, seeded
replays, a tight clock, and the command line's mistakes.

Small iteration counts keep the games fast; the search code is the same at
any budget. Every test but the clock's gives a clock that never binds (the
search stops at a share of it), so only the iteration count decides what is
played, and a busy machine cannot turn a move into a timeout; the clock
test gives an iteration count far beyond any budget, so only the clock can
stop the search in time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from timing import scaled
from typer.testing import CliRunner

from referee.cli import app

SEARCH_BOTS = ("pimc", "ismcts")
NEVER_BINDS = "decision=60s,startup=60s"
runner = CliRunner()


def _bot(name: str, *options: str) -> str:
    return " ".join([name, *options])


def _match(bots: list[str], *args: str) -> dict:
    res = runner.invoke(app, ["match", *bots, "--json", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _no_failures(summary: dict) -> None:
    for bot in summary["bots"]:
        assert not bot["failures"], (bot["name"], bot["failures"])
    for game in summary["results"]:
        assert not game["failures"], game


@pytest.mark.parametrize("name", SEARCH_BOTS)
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_plays_whole_chicago_games(name: str, seats: int) -> None:
    others = ["greedy", "random", "first-legal"][: seats - 1]
    bots = [_bot(name, "--iterations", "12"), *others]
    summary = _match(bots, "--games", str(seats), "--seed", "4", "--rule", "max_deals=2", "--time-control", NEVER_BINDS)
    _no_failures(summary)
    assert len(summary["results"]) == seats
    for game in summary["results"]:
        assert game["reason"] in ("target", "deal_limit", "royal_flush", "tiebreak")
        assert game["decisions"] > 10


@pytest.mark.parametrize("name", SEARCH_BOTS)
def test_plays_whole_ghost_euchre_games(name: str) -> None:
    bots = [_bot(name, "--iterations", "12"), "euchre", "random"]
    summary = _match(
        bots,
        "--game",
        "ghost-euchre",
        "--games",
        "3",
        "--seed",
        "5",
        "--rule",
        "max_hands=3",
        "--time-control",
        NEVER_BINDS,
    )
    _no_failures(summary)
    assert len(summary["results"]) == 3
    assert all(game["decisions"] >= 3 for game in summary["results"])


def _replies(log_dir: Path) -> list[str]:
    """Every line the bots sent, in order, game by game (timings left out)."""
    out = []
    for log in sorted(log_dir.glob("game-*.jsonl")):
        for line in log.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "recv":
                out.append(f"{record['seat']}:{record['line']}")
    return out


def test_same_seed_same_moves(tmp_path: Path) -> None:
    """pimc against ismcts twice with one seed: every reply identical."""
    bots = [_bot("pimc", "--iterations", "40"), _bot("ismcts", "--iterations", "40")]
    runs = []
    for k in range(2):
        logs = tmp_path / f"run{k}"
        summary = _match(
            bots,
            "--games",
            "2",
            "--seed",
            "21",
            "--rule",
            "max_deals=2",
            "--log-dir",
            str(logs),
            "--time-control",
            NEVER_BINDS,
        )
        _no_failures(summary)
        assert [b["name"] for b in summary["bots"]] == ["pimc", "ismcts"]
        runs.append(_replies(logs))
    assert len(runs[0]) > 20
    assert runs[0] == runs[1]


def test_a_tight_clock_is_respected() -> None:
    """300 ms a decision (times the suite's time scale: the bot keeps the same
    share of any clock) and an iteration count no budget would allow: the
    clock alone stops the search, and no reply is late."""
    bots = [_bot("pimc", "--iterations", "10000000"), _bot("ismcts", "--iterations", "10000000")]
    summary = _match(
        bots,
        "--games",
        "2",
        "--seed",
        "8",
        "--rule",
        "max_deals=1",
        "--time-control",
        f"decision={round(scaled(0.3) * 1000)}ms,startup={round(scaled(10))}s",
    )
    _no_failures(summary)


@pytest.mark.parametrize("name", SEARCH_BOTS)
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--budget-ms", "fast"], "--budget-ms takes a whole number from 1 to 60000, not 'fast'"),
        (["--budget-ms", "0"], "--budget-ms takes a whole number from 1 to 60000, not '0'"),
        (["--iterations"], "--iterations needs a value"),
        (["--budget"], "unknown option '--budget'"),
    ],
)
def test_command_line_mistakes_are_one_line(name: str, args: list[str], says: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", f"referee.bots.{name}", *args], input=b"", capture_output=True, timeout=scaled(60)
    )
    assert proc.returncode == 2
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{name}: ") and says in lines[0]
    assert proc.stdout == b""


@pytest.mark.parametrize("name", SEARCH_BOTS)
def test_a_good_command_line_is_accepted(name: str) -> None:
    """`--budget-ms=50` is parsed, and the bot answers hello (then sees end of input and exits)."""
    hello = b'{"type":"hello","referee":"test","games":["chicago"],"protocol":1}\n'
    proc = subprocess.run(
        [sys.executable, "-m", f"referee.bots.{name}", "--budget-ms=50"],
        input=hello,
        capture_output=True,
        timeout=scaled(60),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["type"] == "hello"
