"""The commands the hostile-bot audit crashed with a RecursionError traceback
(`check`, `match`, a tournament and its resume) against a bot that nests its
reply 1,000 levels deep before the `type` key: one clear result, no traceback,
the reason code `nesting_too_deep`, and logs that verify."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from paths import RANDOM_BOT, ROOT
from typer.testing import CliRunner

from referee.cli import app
from referee.replay.verify import verify_file

DEEP_BOT = f"{sys.executable} -u {ROOT / 'tests/bots/reader_bad_line.py'} cli-hostile kind=deep_before"
RANDOM = str(RANDOM_BOT)
runner = CliRunner()


def test_check_reports_deep_nesting_as_a_failure() -> None:
    res = runner.invoke(app, ["check", DEEP_BOT])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and "RecursionError" not in res.output
    assert "nesting_too_deep" in res.output


def test_match_charges_the_deep_bot_and_its_logs_verify(tmp_path: Path) -> None:
    res = runner.invoke(
        app,
        [
            "match",
            DEEP_BOT,
            RANDOM,
            "--games",
            "2",
            "--seed",
            "4",
            "--rule",
            "target_score=10",
            "--log-dir",
            str(tmp_path),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    deep = next(b for b in summary["bots"] if b["name"] != "random_bot")
    assert deep["failures"] == {"nesting_too_deep": 1}  # game 1 only: game 2 is clean
    other = next(b for b in summary["bots"] if b["name"] == "random_bot")
    assert other["failures"] == {}
    assert all(verify_file(p).ok for p in tmp_path.glob("*.jsonl"))


def test_a_tournament_and_its_resume_survive_the_deep_bot(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        "\n".join(
            [
                "seed = 3",
                'time_control = "decision=2s,startup=10s"',
                "[rules]",
                "options = { target_score = 10 }",
                "[[bots]]",
                'name = "deep"',
                f"command = {json.dumps(DEEP_BOT)}",
                "[[bots]]",
                'name = "random"',
                f"command = {json.dumps(RANDOM)}",
            ]
        )
        + "\n"
    )
    for _ in range(2):  # the second run resumes a finished tournament
        res = runner.invoke(app, ["tournament", str(config), "-j", "1"])
        assert res.exit_code == 0, res.output
        assert "Traceback" not in res.output and "RecursionError" not in res.output
    logs = sorted((tmp_path / "results").rglob("*.jsonl"))
    assert logs and all(verify_file(p).ok for p in logs)
    failures = [json.loads(line) for p in logs for line in p.read_text().splitlines() if '"type":"failure"' in line]
    assert failures and {f["reason"] for f in failures} == {"nesting_too_deep"}
