"""The arena's games on the live dashboard under the arena's URL, in headless
Chromium over a real `arena serve`: the front page links it, it lists the
arena's games as they finish, a game's table opens, and with no reveal delay
configured no page or stream of it ever holds a hidden card."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from arena_served import Served, get, new_arena, submit_copies
from needs import needs_sandbox
from selenium.common.exceptions import NoSuchElementException, NoSuchFrameException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from timing import scaled, wait_until

pytestmark = [needs_sandbox, pytest.mark.slow]


def _hidden(data: dict[str, Any]) -> list[Any]:
    return [item for item in data["items"] if item[0] < 0]  # a record one seat alone saw


def _table_data(driver: Any) -> dict[str, Any] | None:
    """The replay data the live table's frame shows, or None while it is being swapped."""
    try:
        driver.switch_to.frame(driver.find_element(By.ID, "live-frame"))
        return dict(json.loads(driver.find_element(By.ID, "replay-data").get_attribute("textContent")))
    except (NoSuchElementException, NoSuchFrameException, StaleElementReferenceException, ValueError):
        return None
    finally:
        driver.switch_to.default_content()


def test_the_arenas_games_show_live_without_a_hidden_card(tmp_path: Path, driver: Any) -> None:
    folder, _tokens = new_arena(tmp_path)
    served = Served(folder)
    try:
        base = served.base
        submit_copies(base, tmp_path)
        # While units play: every game the public summary lists, as its table's data, holds no hidden card.
        checked: set[int] = set()
        deadline = time.monotonic() + scaled(120)
        while len(checked) < 4 and time.monotonic() < deadline:
            summary = get(f"{base}/live/summary")
            assert summary["run"]["source"] == "arena"
            for g in summary["running"] + summary["recent"]:
                try:
                    data = get(f"{base}/live/game/{g['game_id']}/data")
                except urllib.error.HTTPError as exc:  # gone from the board's window since the summary
                    assert exc.code == 404, exc
                    continue
                assert _hidden(data) == [], f"game {g['game_id']} showed a hidden card"
                assert set(g["seats"]) == {"alice.v1", "bob.v1"}
                checked.add(g["game_id"])
            time.sleep(0.2)
        assert len(checked) >= 4, f"only {sorted(checked)} seen"
        with urllib.request.urlopen(f"{base}/live/", timeout=scaled(30)) as resp:
            assert "script-src 'self'" in resp.headers["content-security-policy"]

        driver.get(base + "/")
        driver.find_element(By.LINK_TEXT, "Live games").click()
        assert wait_until(lambda: driver.current_url == base + "/live/", 30), driver.current_url
        assert wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, "#recent a.replay"), 60), "no finished game"
        assert "arena" in driver.find_element(By.ID, "runinfo").text

        def open_a_replay() -> bool:
            try:
                driver.find_elements(By.CSS_SELECTOR, "#recent a.replay")[0].click()
            except (IndexError, StaleElementReferenceException):  # redrawn meanwhile
                return False
            return True

        assert wait_until(open_a_replay, 30)
        game_id = int(driver.current_url.rstrip("/").rsplit("/", 1)[1])

        def finished_table() -> dict[str, Any] | None:
            data = _table_data(driver)
            return data if data is not None and data["result"] is not None else None

        data = wait_until(finished_table, 60)
        assert data, "the live table never showed its finished game"
        assert data["game_id"] == game_id and _hidden(data) == []
        assert set(data["players"]) == {"alice.v1", "bob.v1"}
    finally:
        served.kill()
