"""`check` as a newcomer runs it: it says what it is doing, reports each
distinct problem once with its evidence, stays short, and fails a bot whose
choices kept a decision kind from ever being tested."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from paths import ROOT
from timing import scaled


def check(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "300", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", "check", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=scaled(600),
        cwd=ROOT,
    )


def test_check_shows_progress_and_stays_short() -> None:
    res = check("greedy")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "[1/3] 2-seat game (gamerules) ..." in res.stderr
    assert "[3/3] 4-seat game (cardgames_zone_short):" in res.stderr and res.stderr.rstrip().endswith("ok")
    decisions = [int(n) for n in re.findall(r"(\d+) decisions, no failures", res.stdout)]
    assert len(decisions) == 3
    # Few enough decisions that a bot thinking 100 ms a move is checked in well under a minute.
    assert sum(decisions) <= 450, decisions
    for kind in ("exchange", "take_open", "chicago", "play"):
        assert f"ok    decision '{kind}': answered" in res.stdout


def test_each_distinct_problem_is_reported_once_with_its_evidence() -> None:
    res = check("tests/bots/non_json.py")
    assert res.returncode == 1
    fails = [line for line in res.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1, res.stdout
    assert fails[0].startswith("FAIL  malformed_json (") and "times)" in fails[0]
    assert "malformed_json, what the bot wrote: NOT-JSON: I play the ace of spades" in res.stdout
    # A problem is not also reported as untested decisions.
    assert "never came up" not in res.stdout


def test_a_bot_that_always_passes_fails_the_euchre_check() -> None:
    res = check("sample_bots/python/first_legal_bot.py", "--game", "ghost-euchre")
    assert res.returncode == 1
    assert (
        "FAIL  decision 'name_trump' never came up: the bot always chose the same way before it ('pass')" in res.stdout
    )
    assert "note  decision 'bid': offered" in res.stdout


def test_a_euchre_bot_that_plays_every_decision_passes() -> None:
    res = check("euchre", "--game", "ghost-euchre")
    assert res.returncode == 0, res.stdout + res.stderr
    for kind in ("pass", "bid", "name_trump", "play"):
        assert f"ok    decision '{kind}': answered" in res.stdout
