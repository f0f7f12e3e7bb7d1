"""A bot cannot steer the host's terminal. Everything it controls (its file
name, its replies, its stderr) reaches `match`, `check`, `replay`, `play`,
`tournament` and `standings` with its control characters shown as escapes:
no escape sequence, carriage return, bidirectional override or zero-width
character that the bot chose is written to the terminal. `--json` carries
the same text only as JSON data, and the HTML replay shows it as text."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from paths import RANDOM_BOT, ROOT, TEST_BOTS
from timing import scaled
from typer.testing import CliRunner

from referee.cli import app
from referee.replay.html import write_html
from referee.visible import visible, visible_lines

RANDOM = str(RANDOM_BOT)
CLI = [sys.executable, "-m", "referee.cli"]
HOSTILE_NAME = "sp\x1b]0;title\x07oo\u202efer\u200bbot"
runner = CliRunner()


def steering(text: str, allowed: str = "\n") -> list[str]:
    """Characters a terminal could act on, or that hide themselves: every
    control and format character but the newline (and a page's table tabs)."""
    return sorted(
        {f"U+{ord(c):04X}" for c in text if c not in allowed and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")}
    )


def hostile_bot(tmp_path: Path) -> Path:
    """tests/bots/terminal_spoofer.py under a file name that tries it too."""
    folder = tmp_path / "bot"
    folder.mkdir()
    shutil.copy(TEST_BOTS / "_botlib.py", folder / "_botlib.py")
    path = folder / f"{HOSTILE_NAME}.py"
    shutil.copy(TEST_BOTS / "terminal_spoofer.py", path)
    return path


@pytest.fixture(scope="module")
def hostile_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The logs of a match of the hostile bot against random_bot (2 games)."""
    logs = tmp_path_factory.mktemp("hostile") / "logs"
    bot = hostile_bot(logs.parent)
    res = runner.invoke(
        app,
        ["match", str(bot), RANDOM, "--games", "2", "--seed", "5", "--rule", "target_score=10", "--log-dir", str(logs)],
    )
    assert res.exit_code == 0, res.output
    return logs


def test_visible_escapes_what_steers_and_keeps_what_reads() -> None:
    assert visible("\x1b]0;t\x07\x1b[2J\r") == "\\x1b]0;t\\x07\\x1b[2J\\x0d"
    assert visible("a\u202eb\u200bc\u2066d\ufeff") == "a\\u202eb\\u200bc\\u2066d\\ufeff"
    assert visible("\x9b31m\x7f") == "\\x9b31m\\x7f"  # C1's CSI and DEL
    assert visible("\U000e0041") == "\\U000e0041"  # a tag character
    assert visible("Åsa's bot ♠ 10\\h") == "Åsa's bot ♠ 10\\h"  # letters, symbols, backslashes stay
    assert visible("a\nb\tc") == "a\\x0ab\\x09c"
    assert visible_lines("a\x1b\nb\r\n") == "a\\x1b\nb\\x0d\n"


def test_match_shows_the_bots_text_escaped_and_json_keeps_it_as_data(tmp_path: Path) -> None:
    bot = hostile_bot(tmp_path)
    logs = tmp_path / "logs"
    res = runner.invoke(
        app,
        ["match", str(bot), RANDOM, "--games", "2", "--seed", "5", "--rule", "target_score=10", "--log-dir", str(logs)],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    assert steering(res.output) == []
    assert visible(HOSTILE_NAME) in res.output  # the name, shown
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in res.output  # what it wrote on stdout and stderr, shown

    res = runner.invoke(
        app, ["match", str(bot), RANDOM, "--games", "2", "--seed", "5", "--rule", "target_score=10", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert steering(res.stdout) == []  # JSON escapes it
    summary = json.loads(res.stdout)
    assert summary["bots"][0]["name"] == HOSTILE_NAME  # the data is the bot's own, unchanged
    evidence = summary["results"][0]["failures"][0]["evidence"]
    assert "\x1b]0;pwned\x07" in evidence


def test_check_shows_the_bots_text_escaped(tmp_path: Path) -> None:
    bot = hostile_bot(tmp_path)
    res = runner.invoke(app, ["check", str(bot)], env={"COLUMNS": "200"})
    assert res.exit_code == 1, res.output
    assert steering(res.output) == []
    assert "\\x1b]0;pwned" in res.output


def test_replay_of_a_hostile_bots_game_writes_no_control_byte(hostile_logs: Path) -> None:
    logs = hostile_logs
    for args in ([], ["--seat", "0"], ["--all"]):
        shown = subprocess.run(
            [*CLI, "replay", str(logs / "game-00001.jsonl"), *args], cwd=ROOT, capture_output=True, timeout=scaled(120)
        )
        assert shown.returncode == 0, shown.stderr
        raw = shown.stdout
        assert not any(b < 0x20 and b != 0x0A for b in raw), raw  # no byte below 0x20 but newline
        text = raw.decode()
        assert steering(text) == []
        assert visible(HOSTILE_NAME) in text
    assert "\\x1b[2J" in text  # the failure's evidence, shown


@pytest.mark.browser
def test_the_html_replay_shows_the_same_text_escaped(hostile_logs: Path, tmp_path: Path, driver: Any) -> None:
    from selenium.webdriver.common.by import By

    page = tmp_path / "replay.html"
    write_html(hostile_logs / "game-00001.jsonl", page)
    html = page.read_text(encoding="utf-8")
    data = json.loads(html.split('id="replay-data">', 1)[1].split("</script>", 1)[0])
    assert data["players"][0] == HOSTILE_NAME  # the log's text is embedded as data, unchanged
    driver.get(page.resolve().as_uri())
    assert steering(driver.title) == [] and visible(HOSTILE_NAME) in driver.title
    plate = driver.find_element(By.CSS_SELECTOR, '.seat[data-seat="0"] .pname').text
    assert plate.replace(" ", "") == "P0" + visible(HOSTILE_NAME)
    shown = driver.execute_script("return document.body.innerText")  # innerText has tabs between cells
    assert steering(shown, allowed="\n\t") == []
    statuses = []
    for _ in range(6):
        driver.find_element(By.ID, "next").click()
        statuses.append(driver.find_element(By.ID, "status").text)
    assert any("failure" in s for s in statuses), statuses
    assert steering(" ".join(statuses)) == []
    driver.find_element(By.ID, "last").click()
    assert steering(driver.execute_script("return document.body.innerText"), allowed="\n\t") == []
    assert not driver.find_elements(By.CSS_SELECTOR, "img, iframe")


def test_play_against_a_hostile_bot_shows_its_text_escaped(tmp_path: Path) -> None:
    bot = hostile_bot(tmp_path)
    run = subprocess.run(
        [*CLI, "play", str(bot), "--seed", "2", "--rule", "target_score=10"],
        cwd=ROOT,
        input="1\n" * 400,
        capture_output=True,
        text=True,
        timeout=scaled(180),
    )
    assert run.returncode == 0, run.stderr
    assert steering(run.stdout + run.stderr) == []
    assert visible(HOSTILE_NAME) in run.stdout


def test_tournament_and_standings_show_nothing_that_steers(tmp_path: Path) -> None:
    """A tournament's names are the host's (letters, digits, '_', '.', '-'); its
    bots' replies and stderr still must not reach the terminal raw."""
    bot = hostile_bot(tmp_path)
    config = tmp_path / "t.toml"
    config.write_text(f"""
name = "hostile"
game = "chicago"
deal_sets = 1
seed = 3
sandbox = false
[rules.options]
target_score = 10
[[bots]]
name = "spoofer"
command = {json.dumps(f"{sys.executable} -u {bot}")}
[[bots]]
name = "random"
command = {json.dumps(f"{sys.executable} -u {RANDOM}")}
""")
    res = runner.invoke(app, ["tournament", str(config)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert steering(res.output) == []
    db = tmp_path / "results" / "t" / "tournament.db"
    res = runner.invoke(app, ["standings", str(db)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert steering(res.output) == []
    assert "malformed_json" in res.output  # its failures are listed


@pytest.mark.parametrize("name", ["a\u202eb", "zero\u200bwidth", "bell\x07"])
def test_visible_names_cannot_pass_for_others(name: str) -> None:
    assert visible(name) != name.replace("\u202e", "").replace("\u200b", "").replace("\x07", "")
