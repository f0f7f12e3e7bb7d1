"""Logs written before the log format was typed still read, verify and replay.

`tests/golden/logs_v0/` holds logs written by the referee as it was before
the format moved into `referee/logs/records.py` (both games, 2-4 seats, a
bot's illegal actions under the substitute policy, a crash, a sandboxed
match); only the machine's paths in them were replaced. Every one must load
into the typed records, verify (every action re-simulated), and replay as
text and as an HTML page; a tampered copy must not verify.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import GOLDEN

from referee.logs.gamelog import read_log
from referee.logs.records import ActionRecord, LogHeader, LogResult
from referee.replay.html import build_replay_data, render_html
from referee.replay.load import load_log
from referee.replay.text import Viewer, render_to_text
from referee.replay.verify import OK, verify_file

OLD = GOLDEN / "logs_v0"
LOGS = sorted(OLD.glob("*.jsonl"))


def test_the_old_logs_cover_both_games_every_table_size_and_failures() -> None:
    headers = [json.loads(p.read_text().split("\n", 1)[0]) for p in LOGS]
    assert {h["game"] for h in headers} == {"chicago", "ghost_euchre"}
    assert {len(h["players"]) for h in headers} == {2, 3, 4}
    kinds = {json.loads(line)["type"] for p in LOGS for line in p.read_text().splitlines()}
    assert {"failure", "send", "recv", "action", "event"} <= kinds
    assert any(h["isolation"]["sandbox"] == "bubblewrap" for h in headers)


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_an_old_log_reads_verifies_and_replays(path: Path) -> None:
    header, numbered = read_log(path)
    records = [record for _line, record in numbered]
    assert isinstance(header, LogHeader) and isinstance(records[-1], LogResult)
    assert any(isinstance(r, ActionRecord) for r in records)
    verdict = verify_file(path)
    assert verdict.status == OK, verdict.message
    assert verdict.actions == sum(isinstance(r, ActionRecord) for r in records)
    log = load_log(path)
    text = render_to_text(log, Viewer.everything(), width=100)
    assert "\n" in text and header.players[0].name in text
    page = render_html(build_replay_data(path))
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page


def test_a_tampered_old_log_does_not_verify(tmp_path: Path) -> None:
    lines = (OLD / "chicago2.jsonl").read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "action")
    record = json.loads(lines[index])
    record["seat"] = 1 - record["seat"]
    lines[index] = json.dumps(record, separators=(",", ":"))
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    verdict = verify_file(bad)
    assert verdict.status != OK and f":{index + 1}:" in verdict.message
