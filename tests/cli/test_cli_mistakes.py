"""A newcomer's mistakes get one line before anything runs, and Ctrl-C keeps
what was played: real commands in real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from paths import RANDOM_BOT, ROOT, TEST_BOTS
from timing import scaled, wait_until

RANDOM = str(RANDOM_BOT)
GREEDY = "greedy"  # the built-in bot
ENV = {**os.environ, "COLUMNS": "300", "NO_COLOR": "1", "TERM": "dumb"}


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=scaled(300),
        cwd=cwd,
    )


def one_line(res: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert res.returncode == code, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, res.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_a_missing_bot_is_an_error_before_the_first_game(tmp_path: Path) -> None:
    res = cli("match", str(tmp_path / "nosuch.py"), RANDOM, "--log-dir", str(tmp_path / "logs"))
    one_line(res, 2, "nosuch: ", "nosuch.py does not exist")
    assert not (tmp_path / "logs").exists()  # nothing was played


def test_a_missing_py_suffix_gets_a_did_you_mean() -> None:
    res = cli("match", RANDOM.removesuffix(".py"), RANDOM)
    one_line(res, 2, "random_bot does not exist", "(did you mean random_bot.py?)")


def test_a_file_without_its_exec_bit_says_how_to_fix_it(tmp_path: Path) -> None:
    bot = tmp_path / "mybot"
    bot.write_text("#!/bin/sh\nexit 0\n")
    bot.chmod(0o644)
    res = cli("match", str(bot), RANDOM)
    one_line(res, 2, "is not executable: chmod +x")


def test_an_unbalanced_quote_is_one_line() -> None:
    res = cli("match", RANDOM, "python3 'unclosed")
    one_line(res, 2, "cannot be split into words", "No closing quotation", "check its quotes")


def test_a_program_not_on_the_path_is_named() -> None:
    one_line(cli("check", "no-such-program-anywhere"), 2, "'no-such-program-anywhere' is not a program on the PATH")


def test_log_dir_must_be_a_folder_without_earlier_logs(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    one_line(cli("match", RANDOM, RANDOM, "--log-dir", str(afile)), 2, "that is a file, not a folder")
    logs = tmp_path / "logs"
    assert cli("match", RANDOM, RANDOM, "--games", "2", "--seed", "1", "--log-dir", str(logs)).returncode == 0
    before = {p.name: p.read_bytes() for p in logs.iterdir()}
    res = cli("match", RANDOM, RANDOM, "--games", "2", "--seed", "2", "--log-dir", str(logs))
    one_line(res, 2, "already holds 2 game logs of an earlier match", "nothing was overwritten")
    assert {p.name: p.read_bytes() for p in logs.iterdir()} == before


def test_bench_measures_the_built_in_first_legal_bot_from_any_folder(tmp_path: Path) -> None:
    res = cli("bench", "--rounds", "1", "--games", "1", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "through the referee" in res.stdout


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs POSIX signals")
def test_ctrl_c_in_a_match_prints_the_games_so_far_and_exits_130(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "match",
            GREEDY,
            RANDOM,
            "--games",
            "400",
            "--seed",
            "2",
            "--log-dir",
            str(logs),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    try:
        assert wait_until(lambda: len(list(logs.glob("game-*.jsonl"))) >= 4, 120), "the fourth game never began"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=scaled(60))
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted (Ctrl-C) after " in out and " games of 400" in out
    played = int(out.split("interrupted (Ctrl-C) after ", 1)[1].split()[0])
    assert played >= 3
    assert f"Swedish Chicago: {played} games" in out


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs POSIX signals")
@pytest.mark.parametrize("command", ["check", "bench"])
def test_ctrl_c_in_check_and_bench_is_one_line_and_exit_130(command: str, tmp_path: Path) -> None:
    # A bot that takes 50 ms over every reply: slow enough to be interrupted mid-game.
    # It notes each request it is asked in a file: the sign that a game is under way.
    asked = tmp_path / "asked"
    slow = f"{TEST_BOTS / 'sleeper.py'} ctrl-c sleep=0.05 on=0 asked={asked}"
    args = [command, slow] + (["--rounds", "50", "--games", "50"] if command == "bench" else [])
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    try:
        # Well into the first game: the bot has answered a request and been asked another.
        in_game = wait_until(lambda: asked.exists() and len(asked.read_text().split()) >= 2, 120)
        assert in_game, "the bot was never asked twice"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=scaled(60))
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
