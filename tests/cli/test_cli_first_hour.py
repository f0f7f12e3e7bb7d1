"""What a newcomer reads: help that follows the usual conventions, tables that
fit 80 columns without cutting a name or a reason code, results in words, and
JSON whose values have one type each. Real matches through the installed
command (a pipe, as in CI, lays rich out at the COLUMNS given)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import RANDOM_BOT, ROOT
from timing import scaled

GREEDY = "greedy"  # the built-in bot
RANDOM = str(RANDOM_BOT)
ILLEGAL = str(ROOT / "tests/bots/illegal.py")


def cli(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "dumb", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=scaled(300),
        cwd=ROOT,
    )


@pytest.mark.parametrize("command", ["match", "check", "replay", "tournament", "rules", "bench", "verify"])
def test_dash_h_is_help_and_flags_show_no_type(command: str) -> None:
    res = cli(command, "-h")
    assert res.returncode == 0, res.stderr
    assert "Usage: " in res.stdout
    assert "<bool>" not in res.stdout
    assert "{" not in res.stdout.splitlines()[1]  # the usage line


def test_match_usage_and_help_name_the_presets_and_the_deals_format() -> None:
    res = cli("match", "-h", columns=200)
    assert "Usage: python -m referee.cli match [OPTIONS] BOT..." in res.stdout
    for preset in ("gamerules", "cardgames_zone", "cardgames_zone_short", "swedish_common"):
        assert preset in res.stdout
    assert '"dealer": 0, "deck": "As Kd 9h ..."' in res.stdout


def test_rules_prints_list_values() -> None:
    res = cli("rules")
    assert "showdown_after = [true, true, false]" in res.stdout


def test_a_match_at_80_columns_cuts_no_name_or_reason_and_says_results_in_words() -> None:
    res = cli("match", GREEDY, RANDOM, ILLEGAL, "--games", "3", "--seed", "1")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), res.stdout
    assert "…" not in res.stdout
    for name in ("greedy", "random_bot", "illegal"):
        assert any(line.split()[:1] == [name] for line in lines), res.stdout
    assert any(line.startswith("illegal illegal_action x") for line in lines), res.stdout
    assert "(gamerules)" in res.stderr and "(1 deal set)" in " ".join(res.stderr.split())


def test_a_one_sided_match_says_so_in_words() -> None:
    res = cli("match", GREEDY, RANDOM, "--games", "2", "--seed", "1")
    assert res.returncode == 0, res.stderr
    assert "greedy won the only deal set; Elo is unbounded" in res.stdout
    assert "+inf" not in res.stdout and "n/a" not in res.stdout


def _walk(value: object) -> list[object]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _walk(v)]
    if isinstance(value, list):
        return [x for v in value for x in _walk(v)]
    return [value]


def test_json_values_have_one_type_each() -> None:
    res = cli("match", GREEDY, RANDOM, "--games", "2", "--seed", "1", "--json")
    data = json.loads(res.stdout)
    elo = data["elo"]
    assert elo["elo"] is None and elo["err95"] is None
    assert elo["won_every_deal_set"] == "greedy"
    assert not any(isinstance(v, str) and v in ("+inf", "-inf", "nan", "inf") for v in _walk(data))
    three = json.loads(cli("match", GREEDY, RANDOM, ILLEGAL, "--games", "3", "--seed", "1", "--json").stdout)
    for row in three["ratings"]:
        assert row["elo"] is None or isinstance(row["elo"], float)
        assert isinstance(row["unbounded"], bool)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--time-control", ""], "the time control is empty"),
        (["--time-control", "inc=100ms"], "inc= needs bank="),
        (
            ["--max-strikes", "2"],
            "--max-strikes counts the defaults played for a bot under --failure-policy substitute",
        ),
        (["--rule", "target=30"], "did you mean 'target_score'?"),
        (["--rules", "cardgame_zone"], "did you mean 'cardgames_zone'?"),
    ],
)
def test_options_that_would_be_ignored_or_are_misspelt_are_one_line_errors(args: list[str], words: str) -> None:
    res = cli("match", GREEDY, RANDOM, *args, columns=300)
    assert res.returncode == 2, res.stdout + res.stderr
    assert words in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_a_deal_without_a_dealer_is_an_error(tmp_path: Path) -> None:
    deck = (
        "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s Ah Kh Qh Jh Th 9h 8h 7h 6h 5h 4h 3h 2h "
        "Ad Kd Qd Jd Td 9d 8d 7d 6d 5d 4d 3d 2d Ac Kc Qc Jc Tc 9c 8c 7c 6c 5c 4c 3c 2c"
    )
    deals = tmp_path / "deals.json"
    deals.write_text(json.dumps([{"deck": deck}]))
    res = cli("match", GREEDY, RANDOM, "--deals", str(deals), columns=300)
    assert res.returncode == 2
    assert "deal 1 must be an object with 'dealer' and 'deck'" in res.stderr and "it has no 'dealer'" in res.stderr


def test_file_system_errors_are_one_line_with_their_own_exit_code(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    assert cli("match", GREEDY, RANDOM, "--games", "2", "--seed", "1", "--log-dir", str(log_dir)).returncode == 0
    log = str(log_dir / "game-00001.jsonl")
    folder = cli("replay", log, "--html", str(tmp_path), columns=300)
    assert folder.returncode == 3 and f"{tmp_path}: that is a folder: give a file name" in folder.stderr
    full = cli("replay", log, "--html", "/dev/full", columns=300)  # every write to /dev/full fails with ENOSPC
    assert full.returncode == 3 and "the disk is full" in full.stderr
    for res in (folder, full):
        assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_a_failure_shows_what_the_bot_wrote_in_match_json_and_replay(tmp_path: Path) -> None:
    crash = str(ROOT / "tests/bots/crash_traceback.py")
    res = cli("match", crash, RANDOM, "--games", "2", "--seed", "1", "--log-dir", str(tmp_path), columns=400)
    assert res.returncode == 0, res.stderr
    said = [line for line in res.stdout.splitlines() if line.startswith("  what it wrote: ")]
    assert said and "ValueError: my bug in the exchange code" in said[0]  # the end of its traceback
    data = json.loads(
        cli("match", str(ROOT / "tests/bots/non_json.py"), RANDOM, "--games", "2", "--seed", "1", "--json").stdout
    )
    failure = next(f for r in data["results"] for f in r["failures"])
    assert failure["reason"] == "malformed_json" and failure["evidence"].startswith("NOT-JSON: I play the ace")
    replay = cli("replay", str(tmp_path / "game-00001.jsonl"), columns=400)
    assert "what the bot wrote: " in replay.stdout and "ValueError: my bug in the exchange code" in replay.stdout
    hidden = cli("replay", str(tmp_path / "game-00001.jsonl"), "--seat", "1", columns=400)
    assert "what the bot wrote" not in hidden.stdout  # another seat's words may quote its hand
