"""A crafted log served by the dashboard runs no script, in headless Chromium
(Debian's chromium and chromium-driver through Selenium), and the pages need
nothing their Content-Security-Policy forbids.

A real match's stream and logs, with game 1's log crafted (markup in its
first deal number), served by the real `serve` command: the replay page at
`game/1/page` and the live table at `game/1` (its `blob:` frame, filled with
the log's data once the game's deal set is over) keep their titles and hold
no injected node, and the browser reports no CSP violation on any of the
dashboard's pages."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from livehelpers import cli, play_streamed_match, sample_bot, stop, wait_for_url
from needs import needs_proc
from timing import wait_until

from referee.seats.bot_command import resolve_command

pytestmark = [needs_proc, pytest.mark.browser]
PAYLOAD = "<img src=x onerror=document.title='XSS'>"
INJECTED_JS = (
    "return document.querySelectorAll('img, [onerror], [onload]').length + "
    "Array.from(document.scripts).filter(function (s) { return !s.src && s.type !== 'application/json'; }).length;"
)


def _craft(log: Path) -> None:
    records = [json.loads(x) for x in log.read_text().splitlines()]
    first = next(r for r in records if r["type"] == "event" and r["event"]["type"] == "deal_started")
    first["event"]["deal"] = PAYLOAD
    log.write_text("".join(json.dumps(r) + "\n" for r in records))


def _csp_violations(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if "Content Security Policy" in e["message"]]


def test_a_crafted_log_served_by_the_dashboard_runs_no_script(driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    play_streamed_match(tmp_path, [resolve_command("greedy"), sample_bot("random_bot")], games=2, seed=3)
    _craft(tmp_path / "game-00001.jsonl")
    served = cli("serve", str(tmp_path / "match.live.ndjson"), "--no-open")
    try:
        driver.get(wait_for_url(served))
        root = driver.current_url
        assert wait_until(lambda: driver.find_element(By.ID, "finished").text == "2", 60)
        driver.get(root + "game/1/page")
        title = driver.title
        assert "game 1" in title and driver.find_elements(By.ID, "status")
        driver.execute_script("window.replay.go(1);")
        assert PAYLOAD in driver.find_element(By.ID, "status").text  # the deal number, shown as text
        time.sleep(0.5)
        assert driver.title == title and driver.execute_script(INJECTED_JS) == 0

        driver.get(root + "game/1")
        assert wait_until(lambda: "every card" in driver.find_element(By.ID, "mode").text, 60)
        frame = driver.find_element(By.ID, "live-frame")
        assert frame.get_attribute("src").startswith("blob:")
        driver.switch_to.frame(frame)
        driver.execute_script("window.replay.go(1);")
        assert PAYLOAD in driver.find_element(By.ID, "status").text
        time.sleep(0.5)
        assert not driver.title.startswith("XSS") and driver.execute_script(INJECTED_JS) == 0
        driver.switch_to.default_content()
        assert not driver.title.startswith("XSS")
        assert _csp_violations(driver) == []
    finally:
        stop(served)
