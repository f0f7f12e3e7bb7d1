"""The self-contained HTML replay (referee.replay.html).

A real short match (first-legal bot vs random bot, Swedish Chicago to 20) makes
the log. The fast tests check the written file (compact, valid embedded JSON,
no network references); the browser test opens it in headless Chromium
(Debian's chromium + chromium-driver, Selenium) and steps through the game.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from browser import artifacts_dir
from logfiles import read_json_log
from paths import FIRST_LEGAL_BOT, RANDOM_BOT
from timing import scaled

from referee.errors import ConfigError, CorruptLog
from referee.games import get_game
from referee.games.rules import build_rules
from referee.logs.gamelog import GameLogWriter
from referee.logs.records import ActionRecord, EventRecord, LogHeader, LogResult, PlayerInfo
from referee.play.match import MatchConfig, run_match
from referee.replay.html import build_replay_data, write_html
from referee.seats.bot_command import BotSpec

DATA_RE = re.compile(r'<script type="application/json" id="replay-data">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def game_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real game: first_legal_bot (seat 0) vs random_bot, Chicago to 20 points."""
    log_dir = tmp_path_factory.mktemp("html_replay_logs")
    game = get_game("chicago")
    bots = [
        BotSpec(name="first_legal_bot", argv=(sys.executable, "-u", str(FIRST_LEGAL_BOT))),
        BotSpec(name="random_bot", argv=(sys.executable, "-u", str(RANDOM_BOT))),
    ]
    config = MatchConfig(
        game=game,
        rules=build_rules(game, None, {"target_score": 20}),
        bots=bots,
        games=1,
        seed=11,
        log_dir=log_dir,
    )
    trio.run(run_match, config)
    path = log_dir / "game-00001.jsonl"
    assert path.exists()
    return path


@pytest.fixture(scope="module")
def euchre_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Ghost Hand Euchre game in the runner's log format, played by random legal
    actions straight on the engine (the bots don't speak Euchre yet)."""
    try:
        game = get_game("ghost-euchre")
    except ConfigError:
        pytest.skip("Ghost Hand Euchre is not registered")
    rules = build_rules(game, None, {"target_score": 12})
    state = game.new_state(rules, 3, 5)
    path = tmp_path_factory.mktemp("html_replay_euchre") / "game-00001.jsonl"
    log = GameLogWriter(path)
    log.write(
        LogHeader(
            referee="test",
            game=game.name,
            game_id=1,
            rules=rules,
            n_players=3,
            seed=5,
            deals=[],
            players=[PlayerInfo(seat=i, name=f"ghost{i}", argv=["-"]) for i in range(3)],
            time_control={},
            failure_policy={},
        )
    )
    rng = random.Random(5)
    logged = 0

    def flush() -> None:
        nonlocal logged
        for aud, ev in state.events[logged:]:
            log.write(EventRecord(to=aud, event=ev))
        logged = len(state.events)

    flush()
    decisions = 0
    while not state.is_terminal() and decisions < 5000:
        seat = state.current_player()
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        decisions += 1
        log.write(ActionRecord(seat=seat, id=decisions, source="bot", action=action))
        flush()
    res = state.result()
    log.write(
        LogResult(
            winner=res.winner,
            scores=res.scores,
            placements=res.placements,
            reason=res.reason,
            failures=[],
            forfeited=[],
            decisions=decisions,
        )
    )
    log.close()
    return path


def _log_facts(path: Path) -> dict[str, Any]:
    header, records = read_json_log(path)
    result = next(r for _, r in records if r["type"] == "result")
    events = [(r["to"], r["event"]) for _, r in records if r["type"] == "event"]
    # Cards each seat showed to everyone, per deal (hand_revealed is the only public reveal here).
    revealed: dict[int, dict[int, set[str]]] = {}
    deal = 0
    for to, ev in events:
        if ev["type"] == "deal_started":
            deal = ev["deal"]
        elif ev["type"] == "hand_revealed" and to == -1:
            revealed.setdefault(deal, {}).setdefault(ev["seat"], set()).update(ev["cards"])
    deals = sum(1 for _, ev in events if ev["type"] == "deal_started")
    return {"header": header, "result": result, "events": events, "revealed": revealed, "deals": deals}


# ----------------------------------------------------------------- no browser


def test_write_html_is_small_self_contained_and_embeds_valid_json(game_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "replay.html"
    write_html(game_log, out)
    text = out.read_text(encoding="utf-8")
    facts = _log_facts(game_log)
    names = [p.name for p in facts["header"].players]

    assert text.startswith("<!DOCTYPE html>")
    for name in names:
        assert name in text
    match = DATA_RE.search(text)
    assert match is not None
    data = json.loads(match.group(1))
    assert data["players"] == names
    assert data["n"] == 2 and data["game"] == "chicago"
    assert data["seed"] == str(facts["header"].seed)  # a string: 63-bit seeds do not fit a JS number
    assert data["result"]["scores"] == facts["result"]["scores"]
    # Every event of the log is in the page (plus bot actions other than plays, failures, result).
    type_names = [t[0] for t in data["types"]]
    n_events = sum(1 for it in data["items"] if not type_names[it[0] if it[0] >= 0 else ~it[0]].startswith("@"))
    assert n_events == len(facts["events"])
    # Compact: no messages, no deck orders, card lists packed.
    assert '"send"' not in match.group(1) and '"deck"' not in match.group(1)
    assert len(match.group(1)) < game_log.stat().st_size / 4
    assert out.stat().st_size < 150_000
    # Self-contained: inline CSS/JS only, no URL of any external resource.
    assert not re.search(r"https?://", text)
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|@import|url\(", text, re.I)


def test_build_replay_data_matches_write_html(game_log: Path, tmp_path: Path) -> None:
    data = build_replay_data(game_log)
    out = tmp_path / "r.html"
    write_html(game_log, out)
    embedded = json.loads(DATA_RE.search(out.read_text(encoding="utf-8")).group(1))  # type: ignore[union-attr]
    assert embedded == json.loads(json.dumps(data))


def test_euchre_log_is_embedded(euchre_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "euchre.html"
    write_html(euchre_log, out)
    data = json.loads(DATA_RE.search(out.read_text(encoding="utf-8")).group(1))  # type: ignore[union-attr]
    assert data["title"] == "Ghost Hand Euchre" and data["n"] == 3
    names = {t[0] for t in data["types"]}
    assert {"bid_made", "trump_named", "card_played", "trick_won", "hand_scored", "deal_ended"} <= names
    assert data["result"]["scores"] == _log_facts(euchre_log)["result"]["scores"]


def test_corrupt_log_propagates(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(CorruptLog):
        write_html(bad, tmp_path / "bad.html")
    assert not (tmp_path / "bad.html").exists()


def test_script_breakout_is_escaped(game_log: Path, tmp_path: Path) -> None:
    """A hostile string in the log (bot name, unknown event) cannot close the data <script>."""
    lines = game_log.read_text().splitlines()
    lines.insert(
        3,
        json.dumps(
            {"type": "event", "to": -1, "event": {"type": "mystery", "note": "</script><script>alert(1)</script>"}}
        ),
    )
    evil = tmp_path / "evil.jsonl"
    evil.write_text("\n".join(lines) + "\n")
    out = tmp_path / "evil.html"
    write_html(evil, out)
    text = out.read_text(encoding="utf-8")
    assert text.count("</script>") == 2  # the data block's and the code block's
    data = json.loads(DATA_RE.search(text).group(1))  # type: ignore[union-attr]
    assert ["mystery", "note"] in data["types"]


# ----------------------------------------------------------------- browser

# Collects, after every click on Next, what the page shows (one round trip).
_WALK_JS = """
var out = [], next = document.getElementById('next'), guard = 0;
function snap() {
  var seats = [];
  document.querySelectorAll('.hand').forEach(function (h) {
    var s = +h.getAttribute('data-seat');
    seats[s] = {
      faces: Array.from(h.querySelectorAll('.card.face')).map(function (c) { return c.getAttribute('data-card'); }),
      backs: h.querySelectorAll('.card.back').length,
      count: +h.getAttribute('data-count')
    };
  });
  out.push({step: +document.body.getAttribute('data-step'), deal: +document.body.getAttribute('data-deal'),
            type: document.getElementById('status').getAttribute('data-type'),
            status: document.getElementById('status').textContent, seats: seats});
}
snap();
while (!next.disabled && guard++ < 100000) { next.click(); snap(); }
return out;
"""


@pytest.mark.browser
def test_replay_page_in_browser(game_log: Path, tmp_path: Path, driver) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    facts = _log_facts(game_log)
    names = [p.name for p in facts["header"].players]
    final_scores = facts["result"]["scores"]
    out = tmp_path / "replay.html"
    write_html(game_log, out)
    driver.get(out.resolve().as_uri())

    def text(css: str) -> str:
        return driver.find_element(By.CSS_SELECTOR, css).text

    def body(attr: str) -> str:
        return driver.find_element(By.TAG_NAME, "body").get_attribute(attr)

    # The table: one plate per seat with its name.
    plates = driver.find_elements(By.CSS_SELECTOR, ".seat .pname")
    assert len(plates) == 2
    for seat, (plate, name) in enumerate(zip(plates, names)):
        assert plate.text.replace(" ", "") == f"P{seat}{name}"
    assert "Swedish Chicago" in driver.title
    assert body("data-step") == "0"

    # --- Seat 0 view, the whole game with Next: other seats' cards stay hidden until revealed.
    driver.find_element(By.ID, "view-0").click()
    assert body("data-view") == "0"
    walk0 = driver.execute_script(_WALK_JS)
    assert len(walk0) > 20
    assert [w["step"] for w in walk0] == list(range(len(walk0)))
    assert max(w["deal"] for w in walk0) == facts["deals"]
    hidden_seen = 0
    for w in walk0:
        own = w["seats"][0]
        assert own["backs"] == 0
        assert len(own["faces"]) == own["count"] or own["count"] == 0  # 0: shows the final-showdown hand
        other = w["seats"][1]
        allowed = facts["revealed"].get(w["deal"], {}).get(1, set())
        assert set(other["faces"]) <= allowed, (w["step"], w["status"], other["faces"])
        if w["type"] == "deal_started":  # freshly dealt, nothing revealed yet: five card backs
            assert other["faces"] == [] and other["backs"] == 5, w
        hidden_seen += other["backs"]
    assert hidden_seen > 0

    # At the end: the scores shown are the log's result.
    last = walk0[-1]
    assert driver.find_element(By.ID, "next").get_attribute("disabled") is not None
    shown = [int(e.text) for e in driver.find_elements(By.CSS_SELECTOR, '#scoreboard [data-role="score"]')]
    assert shown == final_scores
    assert [int(e.text) for e in driver.find_elements(By.CSS_SELECTOR, ".seat .pscore")] == final_scores
    assert "Game over" in last["status"]

    # --- All view: every hand face up, at every step.
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.HOME)
    assert body("data-step") == "0"
    driver.find_element(By.ID, "view-all").click()
    walk_all = driver.execute_script(_WALK_JS)
    assert len(walk_all) == len(walk0)
    for w in walk_all:
        for seat in w["seats"]:
            assert seat["backs"] == 0
        if w["type"] == "deal_started":
            assert all(len(seat["faces"]) == 5 for seat in w["seats"]), w
    dealt = next(w for w in walk_all if w["type"] == "deal_started")
    assert len(dealt["seats"][1]["faces"]) == 5

    # --- The deal list jumps.
    if facts["deals"] >= 2:
        driver.find_element(By.CSS_SELECTOR, '#deals button[data-deal="2"]').click()
        assert body("data-deal") == "2"
        assert text("#status").startswith("Deal 2")
        assert "cur" in driver.find_element(By.CSS_SELECTOR, '#deals li[data-deal="2"]').get_attribute("class")

    # --- Keyboard: Home/End, arrows, seat keys, space plays and pauses.
    page = driver.find_element(By.TAG_NAME, "body")
    page.send_keys(Keys.HOME)
    assert body("data-step") == "0"
    page.send_keys(Keys.ARROW_RIGHT)
    page.send_keys(Keys.ARROW_RIGHT)
    assert body("data-step") == "2"
    page.send_keys(Keys.ARROW_LEFT)
    assert body("data-step") == "1"
    page.send_keys("1")
    assert body("data-view") == "1"
    page.send_keys("a")
    assert body("data-view") == "-1"
    page.send_keys(Keys.SPACE)
    assert "on" in driver.find_element(By.ID, "play").get_attribute("class")
    page.send_keys(Keys.SPACE)
    assert "on" not in driver.find_element(By.ID, "play").get_attribute("class")
    page.send_keys(Keys.END)
    assert body("data-step") == str(len(walk0) - 1)

    # --- One numbering: the URL's #10 is the step the page calls "step 10"; the key hint fits 2 seats.
    assert "0\u20131 seat view" in text(".keys")
    driver.get(out.resolve().as_uri() + "#10/1")
    driver.refresh()
    assert body("data-step") == "9" and body("data-view") == "1"
    assert text("#stepinfo").startswith("step 10 /")
    page = driver.find_element(By.TAG_NAME, "body")
    page.send_keys(Keys.ARROW_RIGHT)
    deadline = time.monotonic() + scaled(10)
    while not driver.current_url.endswith("#11/1") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert driver.current_url.endswith("#11/1") and text("#stepinfo").startswith("step 11 /")

    # --- A screenshot in the middle of a trick, for people.
    trick_step = next(w["step"] for w in walk_all if w["type"] == "card_played")
    driver.execute_script("replay.go(arguments[0] + 1)", trick_step)
    shot = artifacts_dir() / "html_replay.png"
    assert driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000

    severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert severe == []


@pytest.mark.browser
def test_euchre_replay_in_browser(euchre_log: Path, tmp_path: Path, driver) -> None:  # type: ignore[no-untyped-def]
    """Euchre never shows a hand: in a seat view the other two hands are backs at every step."""
    from selenium.webdriver.common.by import By

    facts = _log_facts(euchre_log)
    out = tmp_path / "euchre.html"
    write_html(euchre_log, out)
    driver.get(out.resolve().as_uri())
    driver.find_element(By.ID, "view-2").click()
    walk = driver.execute_script(_WALK_JS)
    assert max(w["deal"] for w in walk) == facts["deals"]
    for w in walk:
        assert w["seats"][2]["backs"] == 0
        for seat in (0, 1):
            assert w["seats"][seat]["faces"] == [] and w["seats"][seat]["backs"] == w["seats"][seat]["count"], w
    types = {w["type"] for w in walk}
    assert {"bid_made", "trump_named", "card_played", "trick_won", "hand_scored"} <= types
    named = next(w for w in walk if w["type"] == "trump_named")
    assert "names" in named["status"] and "trump" in named["status"]
    shown = [int(e.text) for e in driver.find_elements(By.CSS_SELECTOR, '#scoreboard [data-role="score"]')]
    assert shown == facts["result"]["scores"]
    assert [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"] == []


@pytest.mark.browser
def test_a_cut_off_log_is_shown_as_far_as_it_goes(game_log: Path, tmp_path: Path, driver) -> None:  # type: ignore[no-untyped-def]
    """A game the referee never finished (killed mid-write) opens in the viewer, marked as cut off."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    data = game_log.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: len(data) // 2])  # ends mid-line, without its result
    assert not cut.read_bytes().endswith(b"\n")
    out = tmp_path / "cut.html"
    write_html(cut, out)
    driver.get(out.resolve().as_uri())
    assert "cut off" in driver.find_element(By.ID, "cutoff").text
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.END)
    assert "(the log is cut off here)" in driver.find_element(By.ID, "stepinfo").text
    steps = driver.execute_script("return replay.steps")
    whole = tmp_path / "whole.html"
    write_html(game_log, whole)
    driver.get(whole.resolve().as_uri())
    assert driver.find_elements(By.ID, "cutoff") == []
    assert 0 < steps < driver.execute_script("return replay.steps")
    assert [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"] == []


def test_the_terminal_replay_of_a_cut_off_log_shows_what_there_is(game_log: Path, tmp_path: Path) -> None:
    data = game_log.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: len(data) // 2])
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "replay", str(cut)],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert "is cut off after line" in " ".join(done.stderr.split()) and "Deal 1" in done.stdout
    verify = subprocess.run(
        [sys.executable, "-m", "referee.cli", "verify", str(cut)], capture_output=True, text=True, timeout=scaled(120)
    )
    assert verify.returncode != 0  # verify never accepts a cut-off log
