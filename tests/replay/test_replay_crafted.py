"""A crafted log cannot run script in the HTML replay (`replay LOG --html`),
in headless Chromium (Debian's chromium and chromium-driver through Selenium).

Bots cannot write logs, but anyone can hand one over: every field of a log
is text to the page. The review's repro (markup in a deal number, which once
set the page's title) and a broader one: the first occurrence of every field
of every event type, failure and result in real logs (Chicago with failures
and the referee's substitutes, a crash, four seats; Ghost Hand Euchre) replaced by markup, plus an event
type and a field name that are markup; the page walked through every step in
every view, counting injected nodes after each and checking the title. Names
stand in `<bdi>`, so a right-to-left override cannot turn the scores beside
them around."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from paths import GOLDEN

from referee.replay.html import write_html

pytestmark = pytest.mark.browser
LOGS = GOLDEN / "logs_v0"  # real logs of every table size, both games, failures with their messages

FORMS = (
    "<img src=x onerror=\"document.title='XSS-{k}'\">",
    '"><svg onload="document.title=\'XSS-{k}\'">',
    "'><img src=x onerror=document.title='XSS-{k}'></script><script>document.title='XSS-{k}s'</script>",
)

WALK_JS = r"""
var title = document.title, seats = document.querySelectorAll('.seat').length;
function injected() {
  return document.querySelectorAll('img, svg [onload], svg[onload], [onerror], [onload]').length +
    document.scripts.length - 2;  // the page's data and its own script
}
var out = {bad: [], errors: 0, renders: 0, title: title, shown: {}, why: {}};
out.steps = window.replay ? window.replay.steps : 0;
function note(e) { out.errors++; out.why[String(e) + ' @ ' + String(e.stack).split('\n')[1]] = 1; }
for (var v = -1; v < seats && window.replay; v++) {
  try { window.replay.setView(v); } catch (e) { note(e); }
  for (var k = 0; k < window.replay.steps; k++) {
    try { window.replay.go(k); out.renders++; } catch (e) { note(e); }
    if (injected()) out.bad.push([v, k, document.getElementById('status').innerHTML]);
    var text = document.getElementById('top').textContent + document.querySelector('main').textContent;
    (text.match(/XSS-\d+/g) || []).forEach(function (id) { out.shown[id] = 1; });  // a payload shown, as text
  }
}
return out;
"""


def _payload(k: int) -> str:
    return FORMS[k % len(FORMS)].format(k=k)


def _crafted(source: Path, out: Path) -> int:
    """`source` with markup in the first occurrence of every field; how many fields."""
    records = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    seen: set[tuple[str, str]] = set()
    k = 0
    for rec in records:
        if rec["type"] == "header":
            for p in rec["players"]:
                k += 1
                p["name"] = "\u202e" + _payload(k)
            continue
        target = rec.get("event") if rec["type"] == "event" else rec if rec["type"] in ("failure", "result") else None
        if not isinstance(target, dict):
            continue
        typed = rec["type"] != "event"  # the reader types failures and results: their strings only
        for field in [f for f in target if f not in ("type", "to") and not (typed and not isinstance(target[f], str))]:
            key = (str(target.get("type")) + rec["type"], field)
            if key in seen:
                continue
            seen.add(key)
            k += 1
            target[field] = [_payload(k)] if isinstance(target[field], list) else _payload(k)
    at = next(i for i, r in enumerate(records) if r["type"] == "event")
    records.insert(
        at + 1, {"type": "event", "to": -1, "event": {"type": _payload(k + 1), _payload(k + 2): _payload(k + 3)}}
    )
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    return k + 3


def _walk(driver: Any, page: Path) -> dict[str, Any]:
    driver.get(page.resolve().as_uri())
    got: dict[str, Any] = driver.execute_script(WALK_JS)
    time.sleep(0.5)  # an image's onerror would fire after its load failed
    got["title_after"] = driver.title
    return got


def test_markup_in_a_deal_number_stays_text(driver: Any, tmp_path: Path) -> None:
    records = [json.loads(x) for x in (LOGS / "chicago2.jsonl").read_text().splitlines()]
    first = next(r for r in records if r["type"] == "event" and r["event"]["type"] == "deal_started")
    first["event"]["deal"] = "<img src=x onerror=document.title='XSS'>"
    log = tmp_path / "crafted.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    write_html(log, tmp_path / "crafted.html")
    got = _walk(driver, tmp_path / "crafted.html")
    assert got["steps"] > 20 and got["errors"] == 0 and got["renders"] > 20
    assert got["bad"] == [] and got["title_after"] == got["title"] and "XSS" not in got["title_after"]
    status = driver.execute_script(
        "window.replay.setView(-1); window.replay.go(1); return document.getElementById('status').textContent;"
    )
    assert "Deal <img src=x onerror=document.title='XSS'>" in status  # shown, as text


@pytest.mark.parametrize("log", ["substitute.jsonl", "crash.jsonl", "chicago4.jsonl", "euchre3.jsonl"])
def test_markup_in_every_field_of_a_log_stays_text(driver: Any, tmp_path: Path, log: str) -> None:
    crafted = tmp_path / "crafted.jsonl"
    fields = _crafted(LOGS / log, crafted)
    write_html(crafted, tmp_path / "crafted.html")
    got = _walk(driver, tmp_path / "crafted.html")
    assert fields > 30 and got["steps"] > 10
    # Most crafted values were drawn, as text (the rest are numbers the table counts with, or cards cut to two letters).
    assert len(got["shown"]) >= 0.5 * fields, (sorted(got["shown"]), fields, got["why"])
    assert got["bad"] == [], got["bad"][:3]
    assert got["title_after"] == got["title"] and not got["title_after"].startswith(
        "XSS"
    )  # the names hold "XSS", as text
    names = driver.execute_script(
        "var shown = document.querySelectorAll('#scoreboard tr, .plate .pname, #legend > span');"
        "return Array.from(shown).map(function (e) {"
        "  var b = e.querySelector('bdi'); return b ? b.textContent : null;"
        "});"
    )
    assert names and all(n and n.startswith("\\u202e") for n in names), names  # isolated, the override shown
