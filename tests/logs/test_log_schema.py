"""The log format's JSON Schema is committed and kept in step with the record
Structs, and every log the referee writes is valid against it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from paths import ROOT, TEST_BOTS

from referee.logs import schema

REGENERATE = "REGENERATE_LOG_SCHEMA=1 python -m pytest tests/logs/test_log_schema.py"


def test_the_committed_log_schema_is_up_to_date() -> None:
    fresh = schema.render()
    if os.environ.get("REGENERATE_LOG_SCHEMA") == "1":
        schema.SCHEMA_PATH.write_text(fresh, encoding="utf-8")
    assert schema.SCHEMA_PATH.exists(), f"referee/logs/schema.json is missing: run `{REGENERATE}` and commit it"
    assert schema.SCHEMA_PATH.read_text(encoding="utf-8") == fresh, (
        f"referee/logs/schema.json no longer matches referee/logs/records.py: run `{REGENERATE}`, review the "
        "diff (and docs/replay.md), and commit it"
    )


@pytest.fixture(scope="module")
def written_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Logs of two real matches: a clean one, and one with failures of several kinds."""
    from typer.testing import CliRunner

    from referee.cli import app

    sample, bots = ROOT / "sample_bots" / "python", TEST_BOTS
    folder = tmp_path_factory.mktemp("schema-logs")
    for name, bot_args in {
        "clean": ["greedy", str(sample / "random_bot.py")],
        "failing": [
            f"{sys.executable} -u {bots / 'illegal.py'} schema",
            f"{sys.executable} -u {bots / 'non_json.py'} schema on=2",
            f"{sys.executable} -u {bots / 'reader_flood.py'} schema",
        ],
    }.items():
        res = CliRunner().invoke(
            app,
            [
                "match",
                *bot_args,
                "--games",
                "3",
                "--seed",
                "3",
                "--rule",
                "target_score=10",
                "--log-dir",
                str(folder / name),
            ],
        )
        assert res.exit_code == 0, res.output
    return sorted(folder.rglob("*.jsonl"))


def test_every_log_the_referee_writes_is_valid_against_the_schema(written_logs: list[Path]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    document = json.loads(schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    header = jsonschema.Draft202012Validator({**document["header"], "$defs": document["$defs"]})
    record = jsonschema.Draft202012Validator({**document["record"], "$defs": document["$defs"]})
    kinds = set()
    for log in written_logs:
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        header.validate(lines[0])
        for line in lines[1:]:
            record.validate(line)
            kinds.add(line["type"])
    assert {"deal", "event", "send", "recv", "action", "failure", "result"} <= kinds
    broken = {"type": "failure", "seat": "zero", "reason": "crash", "message": "m"}
    assert not record.is_valid(broken)  # the schema says something


def test_the_schema_knows_every_record_kind() -> None:
    text = json.dumps(schema.build_schema())
    for kind in ("header", "deal", "event", "send", "recv", "action", "failure", "unlogged", "result"):
        assert f'"const": "{kind}"' in text or f'"enum": ["{kind}"]' in text, kind
