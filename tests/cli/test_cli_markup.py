"""Text a bot controls (its file name, the field names it sends, its stderr)
is printed literally by `match` and `check`: rich markup in it is never
interpreted (no styles, no terminal hyperlinks)."""

from __future__ import annotations

import shutil
from pathlib import Path

from paths import RANDOM_BOT, TEST_BOTS
from typer.testing import CliRunner

from referee.cli import app
from referee.replay.verify import verify_file

RANDOM = str(RANDOM_BOT)
NAME = "[bold]loud[link=mailto:x@y.z]bot"
runner = CliRunner()


def markup_bot(tmp_path: Path) -> Path:
    """reader_markup.py under a file name that is markup itself."""
    shutil.copy(TEST_BOTS / "_botlib.py", tmp_path / "_botlib.py")
    path = tmp_path / f"{NAME}.py"
    shutil.copy(TEST_BOTS / "reader_markup.py", path)
    return path


def assert_literal(output: str) -> None:
    assert "\x1b]8;" not in output  # no terminal hyperlink was emitted
    assert "\x1b[" not in output  # no style either


def test_check_prints_the_bot_name_and_its_field_names_literally(tmp_path: Path) -> None:
    bot = markup_bot(tmp_path)
    res = runner.invoke(app, ["check", str(bot), "--time-control", "decision=2s,startup=10s"])
    assert res.exit_code == 1, res.output  # its replies carry an unknown field
    assert "Traceback" not in res.output
    assert f"{NAME}: failed" in res.output
    assert "unknown field `[red]x[/red]`" in " ".join(res.output.split())  # a long line wraps between words
    assert_literal(res.output)


def test_match_prints_the_bot_name_literally(tmp_path: Path) -> None:
    bot = markup_bot(tmp_path)
    res = runner.invoke(
        app,
        [
            "match",
            str(bot),
            RANDOM,
            "--games",
            "2",
            "--seed",
            "3",
            "--rule",
            "target_score=10",
            "--log-dir",
            str(tmp_path / "logs"),
        ],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    assert f"{NAME} vs random" in res.output  # the header line
    table = [line for line in res.output.splitlines() if "loud" in line and "schema_violation" in line]
    assert table and NAME in table[0], res.output
    assert_literal(res.output)
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 2 and all(verify_file(p).ok for p in logs)
