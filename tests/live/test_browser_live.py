"""The dashboard in headless Chromium (Debian's chromium and chromium-driver
through Selenium) during a real tournament (`tournament --serve`, the real
command in a subprocess; two bots slowed to 0.15 s a decision, so a game lasts
a few seconds): the bots are listed, the finished count and the standings
change without a reload, a click on a game in progress opens its live table,
which follows the game move by move with the played cards on the table and
no hidden card in its data, and the follow table goes on from one game to the
next without a reload. Screenshots go to artifacts/."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from browser import artifacts_dir
from livehelpers import cli, slow_tournament, stop, wait_for_url
from needs import needs_proc
from timing import scaled, wait_until

pytestmark = needs_proc
LIMIT_S = 120  # seconds for each thing the page must show (scaled: tests/timing.py)


def _until(what: str, check: Any, limit_s: float = LIMIT_S, every: float = 0.1) -> Any:
    got = wait_until(check, limit_s, every)
    if not got:
        raise AssertionError(f"not within {scaled(limit_s)} s: {what}")
    return got


def _text(driver: Any, css: str) -> str:
    """The text of what `css` finds; again if the page redrew it meanwhile (it does every second)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    for _ in range(20):
        try:
            return " | ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, css))
        except StaleElementReferenceException:
            time.sleep(0.05)
    raise AssertionError(f"{css} was redrawn every time it was read")


@pytest.mark.browser
def test_the_dashboard_follows_a_tournament_and_a_table(driver: Any, tmp_path: Path) -> None:
    from selenium.common.exceptions import (
        NoSuchElementException,
        NoSuchFrameException,
        StaleElementReferenceException,
        WebDriverException,
    )
    from selenium.webdriver.common.by import By

    config = slow_tournament(tmp_path, delay_s=0.15, deal_sets=2)
    tour = cli("tournament", str(config), "--db", str(tmp_path / "t.db"), "--serve", "--no-open")
    try:
        url = wait_for_url(tour)
        driver.get(url)
        driver.execute_script("window.notReloaded = true;")
        rows = _until("the bots listed", lambda: _text(driver, "#standings tbody tr td:nth-child(2)"))
        assert sorted(rows.split(" | ")) == ["random", "slow-first", "slow-second"]
        first_count = driver.find_element(By.ID, "finished").text
        first_table = _text(driver, "#standings tbody tr")
        assert driver.find_element(By.ID, "scheduled").text == "12"
        _until("a game finished", lambda: driver.find_element(By.ID, "finished").text != first_count)
        _until("the standings changed", lambda: _text(driver, "#standings tbody tr") != first_table)
        assert driver.execute_script("return window.notReloaded === true;")
        driver.save_screenshot(str(artifacts_dir() / "live-dashboard.png"))

        dashboard = driver.current_url

        def click_a_running_game() -> bool:
            """Click a game in progress; False to look again when there is none, or
            when the page redrew the list (every second) between finding and clicking."""
            links = driver.find_elements(By.CSS_SELECTOR, "#running a.watch")
            if not links:
                return False
            try:
                links[0].click()
            except StaleElementReferenceException:
                return False
            return True

        def watch_a_game() -> None:
            driver.get(dashboard)
            _until("a game in progress, clicked", click_a_running_game)
            _until("the live table", lambda: driver.find_elements(By.ID, "live-frame"))

        watch_a_game()

        def table_now() -> tuple[int, list[str], dict[str, Any]] | None:
            try:
                driver.switch_to.default_content()
                driver.switch_to.frame(driver.find_element(By.ID, "live-frame"))
                steps = driver.execute_script("return window.replay ? window.replay.steps : null;")
                played = [c.get_attribute("data-card") for c in driver.find_elements(By.CSS_SELECTOR, "#trick .card")]
                data = json.loads(driver.find_element(By.ID, "replay-data").get_attribute("textContent"))
                return (steps, played, data) if steps is not None else None
            except (StaleElementReferenceException, NoSuchElementException, NoSuchFrameException):
                # the frame was swapped meanwhile (between finding it and switching to it, too)
                return None
            except WebDriverException as exc:
                # The same race seen from the inspector: the node was replaced mid-read.
                if "does not belong to the document" not in exc.msg:
                    raise
                return None
            finally:
                driver.switch_to.default_content()

        seen_steps: set[int] = set()
        seen_cards: set[str] = set()
        modes: list[str] = []

        def follow() -> bool:
            now = table_now()
            if now is None:
                return False
            steps, played, data = now
            if data.get("result") is not None:  # over (every card may show now): watch another game
                seen_steps.clear()
                seen_cards.clear()
                watch_a_game()
                return False
            assert not [x for x in data["items"] if x[0] < 0], "a hidden record reached the live table"
            seen_steps.add(steps)
            seen_cards.update(played)
            if played and len(seen_steps) >= 2 and len(seen_cards) >= 2:
                modes.append(driver.find_element(By.ID, "mode").text)  # what the page says it shows
                driver.switch_to.frame(driver.find_element(By.ID, "live-frame"))
                driver.save_screenshot(str(artifacts_dir() / "live-table.png"))
                driver.switch_to.default_content()
                return True
            return False

        _until("cards being played on the live table", follow, every=0.2)
        assert "public view" in modes[-1]

        # The follow table: one game in progress after another, on the same page.
        driver.get(dashboard)
        driver.find_element(By.CSS_SELECTOR, "a.follow").click()
        _until("the follow table", lambda: driver.find_elements(By.ID, "live-frame"))
        driver.execute_script("window.notReloaded = true;")
        games_followed: set[str] = set()

        def following() -> bool:
            now = table_now()
            title = driver.find_element(By.ID, "title").text
            if now is not None and now[1] and "following" in title:
                games_followed.add(title.rsplit(" ", 1)[-1])
            return len(games_followed) >= 2

        _until("the follow table moving on to a second game", following, every=0.2)
        assert driver.execute_script("return window.notReloaded === true;")
        driver.save_screenshot(str(artifacts_dir() / "live-follow.png"))
    finally:
        stop(tour, limit_s=60)
