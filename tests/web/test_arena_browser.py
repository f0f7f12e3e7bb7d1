"""The arena's pages in headless Chromium over a real `arena serve` (its
builds and games in the sandbox): a competitor signs in with their token,
uploads a bot through the form, watches it reach `active` without a
reload, finds it on the leaderboard, opens its page and one of its games;
another competitor cannot open the first one's build log, stderr or
source; a build log that carries markup runs no script."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from arena_served import Served, bot_folder, cli, get, new_arena, submit_copies
from needs import needs_sandbox
from paths import RANDOM_BOT
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from timing import wait_until

pytestmark = [needs_sandbox, pytest.mark.slow]

MARKUP_BUILD = """name = "loud"
run = "python3 main.py"
build = "echo '<img src=x onerror=document.title=1337>' && echo '</pre><script>document.title=1338</script>'"
"""


def zipped(folder: Path, files: dict[str, str]) -> Path:
    path = folder / "bot.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


def sign_in(driver: Any, base: str, token: str) -> None:
    driver.delete_all_cookies()
    driver.get(base + "/signin")
    driver.find_element(By.NAME, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "form.card button[type=submit]").click()
    assert wait_until(lambda: driver.current_url.endswith("/me"), 30), driver.current_url


def status_text(driver: Any) -> str:
    try:
        cells = driver.find_elements(By.CSS_SELECTOR, "#subs td.status")
        return str(cells[0].text) if cells else ""
    except StaleElementReferenceException:  # the row redrawn meanwhile
        return ""


def test_a_competitor_uploads_through_the_page_and_watches_their_bot_play(tmp_path: Path, driver: Any) -> None:
    folder, tokens = new_arena(tmp_path)
    served = Served(folder)
    try:
        base = served.base
        other = cli(
            "arena",
            "submit",
            base,
            str(bot_folder(tmp_path, "b", RANDOM_BOT.read_text() + "# bob\n")),
            "--token-file",
            str(tmp_path / "bob.token"),
        )
        assert other.returncode == 0, other.stderr

        sign_in(driver, base, tokens["alice"])
        archive = zipped(tmp_path, {"main.py": RANDOM_BOT.read_text()})
        driver.find_element(By.NAME, "archive").send_keys(str(archive))
        driver.find_element(By.NAME, "name").send_keys("shark")
        driver.find_element(By.CSS_SELECTOR, "#upload button[type=submit]").click()
        assert wait_until(lambda: "n=sent" in driver.current_url, 30)
        driver.execute_script("window.stayedHere = true")  # gone if the page reloads
        assert wait_until(lambda: status_text(driver) == "active", 240), status_text(driver)
        assert driver.execute_script("return window.stayedHere === true"), "the page reloaded to show the status"

        driver.get(base + "/")
        assert wait_until(lambda: _click(driver, By.LINK_TEXT, "shark"), 60), "no link to shark on the leaderboard"
        assert wait_until(lambda: driver.find_element(By.TAG_NAME, "h1").text == "shark", 30)

        assert wait_until(lambda: get(f"{base}/api/games?bot=shark")["games"], 300), "shark played no game"
        game = get(f"{base}/api/games?bot=shark")["games"][0]
        driver.get(f"{base}/games/{game['id']}")
        assert wait_until(lambda: driver.find_element(By.ID, "title").text != "", 30)  # the replay ran under the CSP
        assert driver.find_elements(By.LINK_TEXT, "Download the log")

        shark = get(f"{base}/api/submissions?mine=1", tokens["alice"])["submissions"][0]["id"]
        sign_in(driver, base, tokens["bob"])
        for path in (f"/me/submissions/{shark}", f"/me/submissions/{shark}/archive"):
            driver.get(base + path)
            assert driver.find_element(By.TAG_NAME, "h1").text == "404", path
        seat = game["seats"].index("shark.v1")
        driver.get(f"{base}/me/games/{game['id']}/stderr/{seat}")
        assert driver.find_element(By.TAG_NAME, "h1").text == "404"
    finally:
        served.kill()


def test_a_build_log_with_markup_runs_no_script(tmp_path: Path, driver: Any) -> None:
    folder, tokens = new_arena(tmp_path)
    served = Served(folder)
    try:
        loud = bot_folder(tmp_path, "loud", RANDOM_BOT)
        (loud / "bot.toml").write_text(MARKUP_BUILD)
        res = cli("arena", "submit", served.base, str(loud), "--token-file", str(tmp_path / "alice.token"), "--json")
        assert res.returncode == 0, res.stderr
        sub = json.loads(res.stdout)["id"]
        sign_in(driver, served.base, tokens["alice"])
        driver.get(f"{served.base}/me/submissions/{sub}")
        log = driver.find_element(By.CSS_SELECTOR, "pre.log").text
        assert "<img src=x onerror=document.title=1337>" in log and "<script>" in log  # shown, as text
        assert driver.title not in ("1337", "1338") and not driver.find_elements(By.CSS_SELECTOR, "img[src=x]")
        assert len(driver.find_elements(By.TAG_NAME, "script")) == 1  # the page's own arena.js
    finally:
        served.kill()


def test_the_host_closes_submissions_and_runs_the_final_to_verified_standings(tmp_path: Path, driver: Any) -> None:
    folder, _tokens = new_arena(tmp_path)
    host = json.loads(cli("arena", "user", "add", str(folder), "host", "--admin", "--json").stdout)["token"]
    served = Served(folder)
    try:
        submit_copies(served.base, tmp_path)
        sign_in(driver, served.base, host)
        driver.get(served.base + "/admin")
        driver.find_element(By.CSS_SELECTOR, "button[value=close_now]").click()
        assert wait_until(lambda: _text(driver, "submissions") == "closed", 30)
        deal_sets = driver.find_element(By.NAME, "deal_sets")
        deal_sets.clear()
        deal_sets.send_keys("1")
        driver.find_element(By.CSS_SELECTOR, "form[action='/admin/final'] button[type=submit]").click()
        assert wait_until(lambda: "The final tournament is starting" in driver.page_source, 30), driver.page_source
        assert wait_until(lambda: _commitment(driver, served.base), 120), "no commitment on the front page"
        commitment = _commitment(driver, served.base)
        assert len(commitment) == 64  # published before the standings
        assert wait_until(lambda: _final_done(driver, served.base), 300), "the final did not finish"
        page_text = driver.find_element(By.ID, "final").text
        assert "Revealed seed" in page_text and "chicago-referee verify --db" in page_text
        rows = driver.find_elements(By.CSS_SELECTOR, "#final table.standings tbody tr")
        assert sorted(r.find_elements(By.TAG_NAME, "td")[1].text for r in rows) == ["alice.v1", "bob.v1"]
        assert get(f"{served.base}/api/final")["commitment"]["commitment"] == commitment
    finally:
        served.kill()
    verified = cli("verify", "--db", str(folder / "final" / "tournament.db"))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _final_done(driver: Any, base: str) -> bool:
    driver.get(base + "/")
    boxes = driver.find_elements(By.ID, "final")
    return bool(boxes) and "Final tournament: done" in boxes[0].text


def _commitment(driver: Any, base: str) -> str:
    driver.get(base + "/")
    found = driver.find_elements(By.CSS_SELECTOR, "#final code.hash")
    return str(found[0].text) if found else ""


def _click(driver: Any, by: str, what: str) -> bool:
    """Click what `by` finds; False while it is not there, or was redrawn between
    finding and clicking (the live leaderboard redraws its rows as units end)."""
    try:
        driver.find_element(by, what).click()
    except (NoSuchElementException, StaleElementReferenceException):
        return False
    return True


def _text(driver: Any, element_id: str) -> str:
    """An element's text, or "" while the page that holds it is being replaced."""
    try:
        return str(driver.find_element(By.ID, element_id).text)
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def test_the_leaderboard_sorts_by_a_click_and_fits_a_phone(tmp_path: Path, driver: Any) -> None:
    folder, _tokens = new_arena(tmp_path)
    served = Served(folder)
    try:
        submit_copies(served.base, tmp_path)
        assert wait_until(lambda: all(e["games"] for e in get(f"{served.base}/api/leaderboard")["bots"]), 300)
        driver.set_window_size(375, 800)
        driver.get(served.base + "/")

        def column(key: str) -> list[str]:
            """A column's values, top to bottom, read in one script: the live board
            replaces its rows whenever a game ends, which would make rows found by
            one call stale by the next."""
            return list(
                driver.execute_script(
                    "const i = Array.from(document.querySelectorAll('#board th')).findIndex("
                    "  (h) => h.dataset.key === arguments[0]);"
                    "return Array.from(document.querySelectorAll('#board tbody tr'), (r) => r.cells[i].dataset.v);",
                    key,
                )
            )

        driver.find_element(By.CSS_SELECTOR, "#board th[data-key=bot]").click()
        assert column("bot") == ["alice", "bob"]
        driver.find_element(By.CSS_SELECTOR, "#board th[data-key=bot]").click()
        assert column("bot") == ["bob", "alice"]  # a second click turns the order round
        # The table sits in a box that scrolls sideways, so the page itself never grows wider than
        # the screen: what must fit is the table's right edge, within the viewport's width.
        fit = driver.execute_script(
            "const board = document.getElementById('board');"
            "return {view: document.documentElement.clientWidth, page: document.documentElement.scrollWidth,"
            " table: board.getBoundingClientRect().right};"
        )
        assert fit["view"] <= 375, f"the viewport is not a phone's: {fit}"
        assert fit["table"] <= fit["view"] and fit["page"] <= fit["view"], f"wider than a 375 px screen: {fit}"
        hidden = driver.find_elements(By.CSS_SELECTOR, "#board th.wide")
        assert hidden and not any(h.is_displayed() for h in hidden)  # the essential columns only
    finally:
        driver.set_window_size(1400, 950)
        served.kill()
