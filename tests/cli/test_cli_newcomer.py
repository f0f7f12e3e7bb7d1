"""A careful newcomer's third round: `check` predicts a match (the same clock,
a tournament's clock and sandbox on request, the slowest decision shown),
help shows every format whole and says when to use which option, headers
break between phrases at 80 columns, and results name whose figure they give."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from paths import FIRST_LEGAL_BOT, RANDOM_BOT, ROOT, TEST_BOTS
from timing import scaled

from protocol.chicago import FirstDealerCut, PlayedCard
from referee.games import get_game
from referee.seats.choices import event_text
from referee.seats.clock import DEFAULT_TIME_CONTROL, format_time_control, parse_time_control
from referee.seats.sandbox import SandboxLimits, parse_limits

GREEDY = "greedy"  # the built-in bot
RANDOM = str(RANDOM_BOT)
FIRST = str(FIRST_LEGAL_BOT)


def cli(*args: str, columns: int = 80, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "dumb", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=scaled(600),
        cwd=cwd,
    )


def flat(text: str) -> str:
    """Help or output as one line of words: rich's wrapping and the help boxes' borders aside."""
    return " ".join(text.replace("│", " ").split())


def sleeper(seconds: float) -> str:
    """A bot that thinks `seconds` over its first decision of each game (each check game starts it afresh)."""
    return f"{sys.executable} -u {TEST_BOTS / 'sleeper.py'} newcomer sleep={seconds} on=1"


# ------------------------------------------------------------------ check predicts a match


def test_a_bot_slower_than_matchs_clock_fails_check_as_it_would_fail_match() -> None:
    slow = sleeper(1.5)  # passed `check` at its old 2 s clock, then lost its first `match` game
    res = cli("check", slow)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "clock decision=1s,startup=10s" in res.stderr
    assert "FAIL  timeout" in res.stdout
    match = cli("match", slow, RANDOM, "--games", "2", "--seed", "1", "--json")
    assert match.returncode == 0, match.stderr
    assert json.loads(match.stdout)["bots"][0]["failures"].get("timeout", 0) >= 1  # the same verdict


def test_check_names_the_slowest_decision_and_warns_above_half_the_clock() -> None:
    res = cli("check", sleeper(0.7), "--json")
    report = json.loads(res.stdout)  # (it fails the check too: it never takes the open card)
    slowest = report["slowest_decision"]
    assert slowest["ms"] >= 700 and slowest["kind"] == "exchange"  # the first decision of a Chicago deal
    assert report["time_control"]["decision_ms"] == 1000
    assert any("more than half the clock" in w for w in report["warnings"])
    text = cli("check", sleeper(0.7))
    assert re.search(r"ok    slowest decision: \d+ of 1000 ms \(\d+%\), 'exchange' in the ", text.stdout), text.stdout
    assert "warning the slowest decision took more than half the clock" in flat(text.stdout)
    roomy = cli("check", GREEDY, "--json", "--time-control", "60s")  # half of it is 30 s: no machine is that slow
    assert roomy.returncode == 0 and json.loads(roomy.stdout)["warnings"] == []


def test_check_takes_a_tournaments_clock_and_refuses_a_second_clock(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(f"""
game = "chicago"
time_control = "decision=400ms,startup=10s"
sandbox = false
[[bots]]
name = "a"
command = {json.dumps(FIRST)}
[[bots]]
name = "b"
command = {json.dumps(FIRST)}
""")
    res = cli("check", sleeper(0.6), "--config", str(config))
    assert res.returncode == 1, res.stdout + res.stderr
    assert f"clock decision=400ms,startup=10s (from {config})" in flat(res.stderr)
    assert "FAIL  timeout" in res.stdout  # 600 ms fits match's clock, not this tournament's
    both = cli("check", FIRST, "--config", str(config), "--time-control", "2s")
    assert both.returncode == 2 and "drop --time-control" in both.stderr and "Traceback" not in both.stderr


def test_one_default_clock_for_check_match_play_and_tournaments() -> None:
    from referee.tournament.config import TournamentFile

    assert (
        next(f.default for f in msgspec.structs.fields(TournamentFile) if f.name == "time_control")
        == DEFAULT_TIME_CONTROL
    )
    for command in ("check", "match", "play"):
        shown = flat(cli(command, "--help", columns=200).stdout)
        assert f"[default: {DEFAULT_TIME_CONTROL}]" in shown or f"match's own, {DEFAULT_TIME_CONTROL}" in shown, command
    assert format_time_control(parse_time_control(DEFAULT_TIME_CONTROL)) == DEFAULT_TIME_CONTROL


# ------------------------------------------------------------------ help a newcomer can copy from


COMMANDS = [
    "match",
    "check",
    "play",
    "tournament",
    "serve",
    "replay",
    "verify",
    "standings",
    "bench",
    "doctor",
    "rules",
]


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_formats_whole_and_plain_metavars(command: str, columns: int) -> None:
    res = cli(command, "--help", columns=columns)
    assert res.returncode == 0, res.stderr
    assert "…" not in res.stdout, res.stdout  # nothing cut off
    assert not re.search(r"<(list|str|int|path|float)", res.stdout), res.stdout
    assert "[x>=" not in res.stdout and "<=x" not in res.stdout


def test_the_time_control_and_limits_formats_are_shown_whole_at_80_columns() -> None:
    text = cli("match", "--help").stdout
    for piece in (
        "decision=1s",
        "bank=60s",
        "inc=100ms",
        "startup=10s",
        "memory=1G",
        "processes=64",
        "cpu=600s",
        "file_size=16M",
        "open_files=256",
        "scratch=64M",
        "freeze_idle=false",
        "env=NAME:NAME",
        "memory=512M,processes=32",
        "KEY=VALUE",
    ):
        assert piece in text, piece


def test_the_limits_help_states_the_real_defaults() -> None:
    from referee.cli.common import SandboxLimitsOpt

    help_text = SandboxLimitsOpt.__metadata__[0].help
    stated = help_text.split("defaults, ", 1)[1].split(", and env=")[0]
    assert parse_limits(stated.replace(" ", "")) == SandboxLimits()


def test_a_default_is_stated_once() -> None:
    for command in COMMANDS:
        for block in re.split(r"\n│ -", cli(command, "--help", columns=200).stdout):
            assert block.count("default") <= 1 or "[default:" not in block or "(default)" not in block, block


def test_tournament_help_says_when_to_use_which_and_that_bots_are_sandboxed() -> None:
    text = flat(cli("tournament", "--help", columns=100).stdout)
    assert "Bots run sandboxed unless the config says `sandbox = false`" in text
    assert "bubblewrap" in text and "chicago-referee doctor" in text
    assert "-w N adds worker processes" in text.replace("`", "") and "--cluster" in text
    assert "[cluster] extra" in text


def small_tournament(path: Path, *extra: str) -> Path:
    """A short unsandboxed round robin of two sample bots, with `extra` top-level lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "\n".join(
            [
                'game = "chicago"',
                "deal_sets = 1",
                "sandbox = false",
                *extra,
                "[rules]",
                "options = { target_score = 10 }",
                "[[bots]]",
                'name = "a"',
                f"command = {json.dumps(FIRST)}",
                "[[bots]]",
                'name = "b"',
                f"command = {json.dumps(RANDOM)}",
            ]
        )
        + "\n"
    )
    return path


def test_tournament_j_0_means_automatic_as_in_the_config(tmp_path: Path) -> None:
    config = small_tournament(tmp_path / "t.toml", "seed = 1", "concurrency = 3")
    res = cli("tournament", str(config), "-j", "0")
    assert res.returncode == 0, res.stderr
    cores = max(1, (os.cpu_count() or 1) - 1)
    assert f"concurrency {cores}," in flat(res.stderr)  # automatic, not the config's 3


def test_serve_says_where_a_live_stream_file_comes_from() -> None:
    text = flat(cli("serve", "--help", columns=100).stdout)
    assert "match --serve --log-dir DIR` writes DIR/match.live.ndjson" in text
    assert "tournament.live.ndjson beside its database" in text


# ------------------------------------------------------------------ 80 columns


def _phrases_whole(text: str, phrases: list[str]) -> None:
    """Every phrase on one line; a line over 80 columns only for one long phrase (a command, a path)."""
    lines = text.splitlines()
    assert all(len(line) <= 80 or "," not in line.strip().rstrip(",") for line in lines), text
    for phrase in phrases:
        assert any(phrase in line for line in lines), (phrase, text)


def test_first_lines_break_between_phrases_at_80_columns(tmp_path: Path) -> None:
    res = cli("match", GREEDY, RANDOM, "--games", "2", "--seed", "1")
    header = res.stderr.split("\n\n")[0]
    _phrases_whole(header, ["greedy vs random_bot", "2 games (1 deal set)", "seed 1", "clock decision=1s,startup=10s"])
    res = cli("check", FIRST)
    _phrases_whole(
        res.stderr.splitlines()[0] + "\n" + res.stderr.splitlines()[1],
        ["checking first_legal_bot on Swedish Chicago", "clock decision=1s,startup=10s"],
    )
    res = subprocess.run(
        [sys.executable, "-m", "referee.cli", "play", FIRST, "--seed", "1", "--rule", "target_score=5"],
        input="1\n" * 300,
        capture_output=True,
        text=True,
        timeout=scaled(300),
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "80"},
    )
    head = "\n".join(res.stderr.splitlines()[:2])
    _phrases_whole(
        head,
        [
            "you (human, seat 0, no time limit)",
            "against first_legal_bot",
            "seed 1",
            "bots' clock decision=1s,startup=10s",
        ],
    )


def test_the_tournament_header_keeps_paths_whole_and_relative(tmp_path: Path) -> None:
    folder = small_tournament(tmp_path / "comp" / "t.toml").parent
    res = cli("tournament", "t.toml", cwd=folder)
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert "results: results/t/tournament.db" in lines
    assert "logs:    results/t/logs" in lines
    assert "chicago-referee verify --db results/t/tournament.db" in res.stdout
    assert str(tmp_path) not in res.stdout + "\n".join(lines[:4])


# ------------------------------------------------------------------ words


def test_a_one_sided_match_names_whose_los_it_gives() -> None:
    res = cli("match", RANDOM, GREEDY, "--games", "2", "--seed", "1")
    assert res.returncode == 0, res.stderr
    assert "greedy won the only deal set; Elo is unbounded (LOS of greedy over random_bot 100.00%)" in flat(res.stdout)


def test_you_deal_first_and_others_deal_first() -> None:
    cut = FirstDealerCut(rounds=[[PlayedCard(seat=0, card="Kd"), PlayedCard(seat=1, card="Qs")]], dealer=1)
    chicago = get_game("chicago")
    assert event_text(chicago, cut, ["me", "bot"], 1) == "cut for the deal: you deal first"
    assert event_text(chicago, cut, ["me", "bot"], 0) == "cut for the deal: bot (seat 1) deals first"
