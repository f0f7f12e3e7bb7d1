"""The browser seat over HTTP, without a browser: the page and its files are
served to the client that opened the printed URL first, choices are judged
by the engine, and nothing the page receives carries a card the seat may not
see."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conftest import EventStream
from logfiles import read_json_log

CARD_RE = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][shdc](?![A-Za-z0-9])")
HUMAN = 0


def _cards_in(text: str) -> set[str]:
    return set(CARD_RE.findall(text))


def _seen_by(log: Path, seat: int) -> tuple[set[str], set[str]]:
    """Cards the seat may see (in events addressed to it or to everyone) and every card dealt."""
    _, records = read_json_log(log)
    seen: set[str] = set()
    dealt: set[str] = set()
    for _, rec in records:
        if rec["type"] == "event" and rec["to"] in (-1, seat):
            seen |= _cards_in(json.dumps(rec["event"]))
        if rec["type"] == "event" and rec["event"]["type"] == "hand_dealt":
            dealt |= set(rec["event"]["cards"])
    return seen, dealt


def _play_to_the_end(table: Any, stream: EventStream) -> dict[str, Any]:
    """Answer every request with its first legal action until the game is over."""
    done = -1
    while True:
        st = stream.wait_for(lambda s: s["over"] is not None or (s["request_id"] not in (None, done)), timeout=120)
        if st["over"] is not None:
            return st
        status, body = table.request("POST", "act", {"id": st["request_id"], "action": st["legal"][0]["action"]})
        assert status == 200, body
        done = st["request_id"]


def test_page_files_and_token(web_table: Any) -> None:
    table = web_table(str(Path("sample_bots/python/random_bot.py")), "--seed", "5")
    assert len(table.token_path.strip("/")) >= 32  # 192 random bits, URL-safe
    assert table.raw("GET", "/")[0] == 403  # nothing before the printed URL is opened
    status, body = table.request("GET", "")
    assert status == 200 and b"play.js" in body and b"http" not in body.replace(b"http-equiv", b"")
    assert table.csrf.encode() in body
    for name in ("play.js", "play.css", "replay.css"):
        assert table.request("GET", f"assets/{name}")[0] == 200
    assert table.request("GET", "assets/../../pyproject.toml")[0] == 404
    assert table.request("GET", "/wrongtoken/")[0] == 404
    assert table.raw("GET", "/state")[0] == 403  # without the session cookie
    assert table.raw("GET", table.token_path)[0] == 403  # the printed URL a second time, in another client


def test_choices_are_judged_and_no_hidden_card_reaches_the_page(web_table: Any) -> None:
    table = web_table("sample_bots/python/random_bot.py", "--seed", "3", "--rule", "target_score=12")
    stream = EventStream(table)
    first = stream.wait_for(lambda s: s["request_id"] is not None)
    rid = first["request_id"]
    hand = first["view"]["hand"]
    absent = next(f"{r}{s}" for r in "AKQJT98765432" for s in "shdc" if f"{r}{s}" not in hand)
    # refusals: the engine's reason, a stale id, garbage; none of them ends the game
    status, body = table.request("POST", "act", {"id": rid, "action": {"type": "exchange", "discard": [absent]}})
    assert status == 409 and f"cannot discard {absent}: not in hand" in body["error"]
    assert stream.wait_for(lambda s: bool(s["notice"]))["notice"].endswith(body["error"].split(": ", 1)[1])
    status, body = table.request("POST", "act", {"id": rid - 1, "action": first["legal"][0]["action"]})
    assert status == 409 and "no longer open" in body["error"]
    status, body = table.request("POST", "act", {"id": rid, "action": {"type": "bid", "bid": 3}})
    assert status == 409 and "not an action of this game" in body["error"]
    assert table.request("POST", "act", None)[0] == 400
    final = _play_to_the_end(table, stream)
    status, body = table.request("POST", "again", {"again": False})
    assert status == 200
    out = table.finish()
    assert table.proc.returncode == 0, out
    stream.close()
    log = table.log_dir / "game-00001.jsonl"
    header, records = read_json_log(log)
    result = next(r for _, r in records if r["type"] == "result")
    assert final["over"]["scores"] == result["scores"]
    assert header.players[HUMAN].human and not header.players[1].human
    seen, dealt = _seen_by(log, HUMAN)
    hidden = dealt - seen
    assert hidden, "the opponent's unrevealed cards must exist for this check to mean anything"
    for raw in stream.raw:
        leaked = _cards_in(raw) - seen
        assert not leaked, f"the page was sent cards the seat may not see: {sorted(leaked)}"
    assert len(stream.raw) > 10
    assert set().union(*map(_cards_in, stream.raw)) >= set(first["view"]["hand"])  # the scan does find cards
