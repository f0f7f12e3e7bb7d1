"""A whole Chicago game played by clicking, in headless Chromium (Debian's
chromium and chromium-driver through Selenium, as the replay test does),
against the real `play --web` command: only the person's cards are face up,
and the final scores on the page are the log's."""

from __future__ import annotations

import time
from typing import Any

import pytest
from browser import artifacts_dir
from logfiles import read_json_log
from timing import scaled

GAME_LIMIT_S = scaled(300)


def _only_my_cards_face_up(driver: Any) -> list[str]:
    """The face-up cards of the seats: all in my hand; every other hand is backs."""
    from selenium.webdriver.common.by import By

    others = driver.find_elements(By.CSS_SELECTOR, ".seat:not(.viewer) .hand .card")
    assert all("back" in c.get_attribute("class") for c in others)
    assert not driver.find_elements(By.CSS_SELECTOR, ".seat:not(.viewer) [data-card]")
    mine = driver.find_elements(By.CSS_SELECTOR, ".seat.viewer .hand .card")
    assert all(c.get_attribute("data-card") for c in mine)
    return [c.get_attribute("data-card") for c in mine]


@pytest.mark.browser
def test_a_whole_game_by_clicking(web_table: Any, driver: Any) -> None:
    from selenium.webdriver.common.by import By

    table = web_table("sample_bots/python/random_bot.py", "--seed", "11", "--rule", "target_score=15")
    driver.get(table.url)
    body = driver.find_element(By.TAG_NAME, "body")
    deadline = time.monotonic() + GAME_LIMIT_S
    done: set[str] = set()
    clicks = exchanges = plays = 0
    shot = False
    while time.monotonic() < deadline:
        rid = body.get_attribute("data-request") or ""
        if body.get_attribute("data-phase") == "over":
            break
        if not rid or rid in done:
            time.sleep(0.05)
            continue
        hand = _only_my_cards_face_up(driver)
        assert len(hand) == 5 or body.get_attribute("data-phase") == "trick"
        if driver.find_elements(By.ID, "exchange"):
            # The prompt names the button that is there: "Keep all five" until a card is chosen.
            button, status = driver.find_element(By.ID, "exchange").text, driver.find_element(By.ID, "status").text
            assert button == "Keep all five" and "Keep all five" in status, (button, status)
            cards = driver.find_elements(By.CSS_SELECTOR, ".seat.viewer .hand .card.playable")
            cards[-1].click()  # discard the last card shown
            picked = driver.find_elements(By.CSS_SELECTOR, ".seat.viewer .hand .card.picked")
            assert len(picked) == 1 and "Exchange 1 card" in driver.find_element(By.ID, "exchange").text
            assert "Exchange" in driver.find_element(By.ID, "status").text
            driver.find_element(By.ID, "exchange").click()
            exchanges += 1
        elif playable := driver.find_elements(By.CSS_SELECTOR, ".seat.viewer .hand .card.playable"):
            if not shot and driver.find_elements(By.CSS_SELECTOR, "#trick .card"):
                driver.save_screenshot(str(artifacts_dir() / "play-web-trick.png"))
                shot = True
            playable[0].click()
            plays += 1
        else:
            driver.find_elements(By.CSS_SELECTOR, "#actions button.choice")[-1].click()  # e.g. no Chicago
        done.add(rid)
        clicks += 1
    else:
        pytest.fail(f"the game did not end within {GAME_LIMIT_S} s ({clicks} choices)")
    final = driver.find_element(By.ID, "final")
    page_scores = [int(x) for x in final.get_attribute("data-scores").strip("[]").split(",")]
    driver.save_screenshot(str(artifacts_dir() / "play-web.png"))
    driver.find_element(By.ID, "leave").click()
    out = table.finish()
    assert table.proc.returncode == 0, out
    header, records = read_json_log(table.log_dir / "game-00001.jsonl")
    result = next(r for _, r in records if r["type"] == "result")
    assert page_scores == result["scores"]
    assert header.players[0].human
    assert exchanges >= 1 and plays >= 5
    sources = {r["source"] for _, r in records if r["type"] == "action" and r["seat"] == 0}
    assert sources == {"bot"}  # every one of the person's actions came through the seat, none was a default
