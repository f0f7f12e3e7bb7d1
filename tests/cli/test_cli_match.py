"""The `match`, `rules` and `check` commands end to end, through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import FIRST_LEGAL_BOT, RANDOM_BOT, TEST_BOTS
from typer.testing import CliRunner

from referee.cli import app

RANDOM = str(RANDOM_BOT)
FIRST = str(FIRST_LEGAL_BOT)
runner = CliRunner()


def run_json(*args: str) -> dict:
    res = runner.invoke(app, ["match", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_match_json_totals_add_up_and_same_seed_repeats() -> None:
    d1 = run_json(RANDOM, FIRST, "--games", "6", "--seed", "11", "--rule", "target_score=30")
    assert d1["games"] == 6 and d1["deal_sets"] == 3
    assert len(d1["results"]) == 6
    wins = {b["name"]: b["wins"] for b in d1["bots"]}
    winners = [r["winner"] for r in d1["results"] if r["winner"] is not None]
    assert sum(wins.values()) == len(winners)
    for b in d1["bots"]:
        assert b["games"] == 6
        assert b["wins"] == winners.count(b["name"])
        mine = [r["scores"][r["seats"].index(b["name"])] for r in d1["results"]]
        assert b["avg_score"] == pytest.approx(sum(mine) / 6, abs=1e-3)
    # each deal set plays both seatings of the same seed
    for k in range(3):
        pair = [r for r in d1["results"] if r["deal_set"] == k]
        assert len(pair) == 2 and pair[0]["seed"] == pair[1]["seed"]
        assert pair[0]["seats"] == list(reversed(pair[1]["seats"]))
    d2 = run_json(RANDOM, FIRST, "--games", "6", "--seed", "11", "--rule", "target_score=30")
    strip = lambda d: [(r["winner"], r["scores"], r["seats"]) for r in d["results"]]  # noqa: E731
    assert strip(d1) == strip(d2)
    assert d1["elo"]["pentanomial"] is not None and sum(d1["elo"]["pentanomial"]) == 3


def test_match_three_bots_rotates_every_seat(tmp_path: Path) -> None:
    d = run_json(
        RANDOM, FIRST, RANDOM, "--games", "3", "--seed", "2", "--rule", "target_score=20", "--log-dir", str(tmp_path)
    )
    seats = [r["seats"] for r in d["results"]]
    for name in {n for s in seats for n in s}:
        assert sorted(s.index(name) for s in seats) == [0, 1, 2]
    assert d["ratings"] is not None and len(d["ratings"]) == 3
    for r in d["results"]:
        assert Path(r["log"]).exists()
        assert sorted(r["placements"])[0] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "nosuch"], "unknown chicago preset 'nosuch'"),
        (["--rule", "nosuch=1"], "unknown chicago rule option 'nosuch'"),
        (["--rule", "exchanges=9"], "exchanges"),
        (["--time-control", "fast"], "bad duration 'fast'"),
        (["--time-control", "speed=1s"], "unknown time-control key 'speed'"),
        (["--game", "poker"], "unknown game 'poker'"),
        (["--sprt", "0"], "sprt"),
    ],
)
def test_bad_options_give_one_line_errors(args: list[str], message: str) -> None:
    res = runner.invoke(app, ["match", RANDOM, FIRST, "--games", "2", *args])
    assert res.exit_code == 2
    assert message.lower() in res.output.lower()
    assert "Traceback" not in res.output


def test_wrong_number_of_bots_is_a_clear_error() -> None:
    res = runner.invoke(app, ["match", RANDOM])
    assert res.exit_code == 2
    assert "needs 2 or 3 or 4 bots" in res.output


def test_missing_bot_program_is_refused_before_any_game() -> None:
    res = runner.invoke(app, ["match", "/nonexistent/bot-program", FIRST, "--games", "2", "--seed", "1", "--json"])
    assert res.exit_code == 2 and res.stdout == ""
    assert "bot-program: /nonexistent/bot-program does not exist" in " ".join(res.output.split())


def test_bench_with_a_broken_bot_is_a_one_line_error(tmp_path: Path) -> None:
    res = runner.invoke(app, ["bench", "/nonexistent/bot.py", "--rounds", "1", "--games", "1"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "bot: /nonexistent/bot.py does not exist" in " ".join(res.output.split())
    hello_only = tmp_path / "hello_only.py"
    hello_only.write_text(
        'import sys\nfor line in sys.stdin:\n    print(\'{"type":"hello","name":"h","version":"1"}\', flush=True)\n'
    )
    res = runner.invoke(app, ["bench", str(hello_only), "--rounds", "1", "--games", "1"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "unexpected_message" in res.output


def test_deals_file_is_used_and_validated(tmp_path: Path) -> None:
    from referee.games.cards import CARD_STR

    deck = list(CARD_STR)  # rank-major order: 2s 2h 2d 2c 3s ... Ac
    good = tmp_path / "deals.json"
    good.write_text(json.dumps([{"dealer": 1, "deck": " ".join(deck)}]))
    d = run_json(FIRST, FIRST, "--games", "2", "--seed", "3", "--deals", str(good), "--log-dir", str(tmp_path / "logs"))
    first_log = Path(d["results"][0]["log"]).read_text().splitlines()
    deal = next(json.loads(line) for line in first_log if '"type":"deal"' in line)
    assert deal["dealer"] == 1 and deal["deck"] == deck
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"dealer": 0, "deck": " ".join(deck[:-1] + ["2s"])}]))
    res = runner.invoke(app, ["match", FIRST, FIRST, "--deals", str(bad)])
    assert res.exit_code == 2 and "duplicate card(s) 2s" in res.output and "Traceback" not in res.output
    short = tmp_path / "short.json"
    short.write_text(json.dumps([{"dealer": 0, "deck": " ".join(deck[:-1])}]))
    res = runner.invoke(app, ["match", FIRST, FIRST, "--deals", str(short)])
    assert res.exit_code == 2 and "missing Ac" in res.output


def test_rules_command_lists_presets_and_options() -> None:
    res = runner.invoke(app, ["rules", "--rules", "swedish_common"])
    assert res.exit_code == 0
    assert "no_exchange_threshold = 42" in res.stdout
    assert "one_open = true" in res.stdout
    assert "cardgames_zone_short" in res.stdout


def test_check_passes_for_the_random_sample_bot() -> None:
    res = runner.invoke(app, ["check", RANDOM, "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["ok"] is True
    kinds = " ".join(report["passed"])
    for kind in ("exchange", "take_open", "chicago", "play"):
        assert f"decision '{kind}'" in kinds


def test_check_reports_a_broken_bot_in_plain_words(tmp_path: Path) -> None:
    bot = tmp_path / "mute.py"
    bot.write_text("import sys\nfor line in sys.stdin:\n    pass\n")
    res = runner.invoke(app, ["check", str(bot), "--time-control", "decision=200ms,startup=500ms"])
    assert res.exit_code == 1
    assert "handshake failed" in res.stdout and "no hello reply within the 500 ms startup limit" in " ".join(
        res.stdout.split()
    )


def test_bench_of_a_bot_that_does_not_start_says_why_in_one_line() -> None:
    res = runner.invoke(app, ["bench", str(TEST_BOTS / "exit_at_once.py"), "--rounds", "1", "--games", "1"])
    assert res.exit_code != 0
    lines = [line for line in res.output.splitlines() if "did not start" in line]
    assert len(lines) == 1, res.output
    assert "exit code 3" in lines[0] and "it said: exit_at_once: giving up before hello" in lines[0]
    assert "Traceback" not in res.output
