"""Games plug in: a third game, defined only under tests/ (`duel_game.py`: an
engine, two wire Structs and its hooks), is registered and played through
`match`, `check`, `verify`, `replay` and the HTML replay with nothing else
changed; and a game without one of the hooks cannot be registered."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from duel_game import DUEL, register_duel, unregister_duel
from paths import ROOT
from typer.testing import CliRunner

from referee.cli import app
from referee.games import GAMES, get_game, new_game, play_game, random_policy
from referee.games.base import GameDef
from referee.replay.html import write_html
from referee.replay.verify import verify_file

DET = f"{sys.executable} -u {ROOT / 'tests' / 'bots' / 'det_bot.py'} duel"
runner = CliRunner()


@pytest.fixture
def duel() -> Iterator[GameDef]:
    register_duel()
    yield get_game("duel")
    unregister_duel()


@pytest.fixture
def duel_logs(duel: GameDef, tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    res = runner.invoke(
        app,
        [
            "match",
            f"{DET} salt=a",
            f"{DET} salt=b",
            "--game",
            "duel",
            "--games",
            "2",
            "--seed",
            "7",
            "--log-dir",
            str(logs),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["game"] == "duel" and summary["games"] == 2
    assert all(not b["failures"] for b in summary["bots"])  # its `play` replies decode, its moves are legal
    return logs


def test_the_engine_plays_whole_games_in_process(duel: GameDef) -> None:
    for seed in range(20):
        result = play_game(new_game("duel", 2, seed=seed), [random_policy(seed), random_policy(seed + 1)])
        assert result.reason in ("target", "deal_limit") and sum(result.scores) % 6 == 0


def test_a_registered_game_plays_a_match_and_its_logs_verify(duel_logs: Path) -> None:
    logs = sorted(duel_logs.glob("game-*.jsonl"))
    assert len(logs) == 2
    for log in logs:
        verdict = verify_file(log)
        assert verdict.ok, verdict.message
        assert verdict.actions > 0


def test_a_registered_game_replays_in_the_terminal(duel_logs: Path) -> None:
    res = runner.invoke(app, ["replay", str(duel_logs / "game-00001.jsonl")], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert "Duel · game 1 · 2 seats" in res.output
    assert "Deal 1 · dealer" in res.output and "Game over" in res.output
    assert "(a trick)" in res.output  # its score reason in its own words
    seat = runner.invoke(app, ["replay", str(duel_logs / "game-00001.jsonl"), "--seat", "1"])
    assert seat.exit_code == 0 and "░░" in seat.output  # the other hand face down


def test_a_registered_game_is_checked(duel: GameDef) -> None:
    res = runner.invoke(app, ["check", f"{DET} salt=c", "--game", "duel"])
    assert res.exit_code == 0, res.output
    assert "decision 'play': answered" in res.output


@pytest.mark.browser
def test_a_registered_game_replays_in_the_browser(duel_logs: Path, tmp_path: Path, driver: Any) -> None:
    from selenium.webdriver.common.by import By

    page = tmp_path / "duel.html"
    write_html(duel_logs / "game-00001.jsonl", page)
    driver.get(page.resolve().as_uri())
    assert "Duel" in driver.title
    assert len(driver.find_elements(By.CSS_SELECTOR, ".seat .pname")) == 2
    driver.find_element(By.ID, "last").click()
    status = driver.find_element(By.ID, "status").text
    assert "Game over" in status or "wins" in status, status
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] if hasattr(driver, "get_log") else []
    assert not errors, errors


def test_every_registered_game_has_every_hook() -> None:
    for game in GAMES.values():
        for name in ("words", "text", "page"):
            hooks = getattr(game, name)
            for field in dataclasses.fields(hooks):
                value = getattr(hooks, field.name)
                assert value is not None or field.default is None, f"{game.name}.{name}.{field.name}"
        assert game.check_scenarios and game.decision_kinds and game.default_opponent


def test_a_game_without_a_hook_cannot_be_defined() -> None:
    fields = {f.name: getattr(DUEL, f.name) for f in dataclasses.fields(GameDef)}
    for hook in ("words", "text", "page", "check_scenarios", "decision_kinds", "default_opponent"):
        partial = {k: v for k, v in fields.items() if k != hook}
        with pytest.raises(TypeError, match=hook):
            GameDef(**partial)
