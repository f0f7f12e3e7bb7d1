"""Hostile log lines: `verify` and `replay` report them as one-line CorruptLog
errors with file and line, never a traceback; request ids that run on through
a match are checked exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from logfiles import read_json_log
from paths import FIRST_LEGAL_BOT, RANDOM_BOT
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import CorruptLog
from referee.play.in_order import REQUEST_ID_STRIDE
from referee.replay.load import load_log
from referee.replay.verify import verify_file

RANDOM = str(RANDOM_BOT)
FIRST = str(FIRST_LEGAL_BOT)
runner = CliRunner()
DEEP = b"[" * 5000 + b"]" * 5000


@pytest.fixture(scope="module")
def match_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("reading_logs")
    res = runner.invoke(
        app,
        [
            "match",
            RANDOM,
            FIRST,
            "--games",
            "2",
            "--seed",
            "5",
            "--rule",
            "target_score=15",
            "--log-dir",
            str(out),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    return sorted(out.glob("*.jsonl"))


def _spoil(good: Path, tmp: Path, name: str, line_no: int, new_line: bytes) -> Path:
    lines = good.read_bytes().split(b"\n")
    lines[line_no - 1] = new_line
    path = tmp / f"{name}.jsonl"
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.mark.parametrize(
    ("name", "line_no", "new_line", "words"),
    [
        ("deep_record", 3, b'{"type":"event","to":-1,"event":' + DEEP + b"}", "deeper than"),
        ("deep_record_before_type", 3, b'{"x":' + DEEP + b',"type":"event"}', "deeper than"),
        ("deep_header", 1, b'{"x":' + DEEP + b',"type":"header"}', "deeper than"),
        ("bad_utf8", 3, b'{"type":"event","to":-1,"event":"\xff\xfe"}', "UTF-8"),
        ("huge_number", 3, b'{"type":"event","to":' + b"9" * 100_000 + b"}", "out of range"),
        ("huge_float", 3, b'{"type":"event","to":1e99999}', "out of range"),
        ("truncated_record", 3, b'{"type":"event","to":', "truncated"),
    ],
)
def test_a_bad_log_line_is_one_line_with_file_and_line(
    match_logs: list[Path], tmp_path: Path, name: str, line_no: int, new_line: bytes, words: str
) -> None:
    path = _spoil(match_logs[0], tmp_path, name, line_no, new_line)
    verdict = verify_file(path)
    assert verdict.status == "unreadable", verdict
    assert verdict.message.startswith(f"{path}:{line_no}: ") and "\n" not in verdict.message
    assert words in verdict.message
    with pytest.raises(CorruptLog):
        load_log(path)
    for command in ("verify", "replay"):
        res = runner.invoke(app, [command, str(path)])
        assert res.exit_code == 2, res.output
        assert "Traceback" not in res.output
        errors = [line for line in res.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and f"{path}:{line_no}:" in errors[0], res.output


def test_request_ids_follow_the_game_id_and_grow_from_game_to_game(match_logs: list[Path]) -> None:
    first, second = (read_json_log(p) for p in match_logs)
    ids = [
        [r["msg"]["id"] for _, r in recs if r["type"] == "send" and r["msg"]["type"] == "request"]
        for _, recs in (first, second)
    ]
    assert (
        first[0].request_id_base == (first[0].game_id - 1) * REQUEST_ID_STRIDE
        and ids[0][0] == first[0].request_id_base + 1
    )
    assert (
        second[0].request_id_base == (second[0].game_id - 1) * REQUEST_ID_STRIDE > ids[0][-1]
    )  # later ids stay larger
    assert ids[1] == list(range(second[0].request_id_base + 1, second[0].request_id_base + 1 + len(ids[1])))
    for p in match_logs:
        assert verify_file(p).ok


def test_a_changed_request_id_base_is_a_mismatch(match_logs: list[Path], tmp_path: Path) -> None:
    good = match_logs[1]
    lines = good.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    header["request_id_base"] += 1
    lines[0] = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    path = tmp_path / "shifted.jsonl"
    path.write_bytes(b"\n".join(lines))
    verdict = verify_file(path)
    assert verdict.status == "mismatch" and "request id differs" in verdict.message


def test_an_unlogged_record_needs_positive_counts(match_logs: list[Path], tmp_path: Path) -> None:
    good = match_logs[0]
    lines = good.read_bytes().rstrip(b"\n").split(b"\n")
    for counts, ok in (
        ({"lines": 3, "bytes": 120}, True),
        ({"lines": 0, "bytes": 120}, False),
        ({"lines": 2, "bytes": "x"}, False),
    ):
        record = json.dumps({"type": "unlogged", "seat": 0, **counts}).encode()
        path = tmp_path / f"unlogged_{counts['lines']}_{counts['bytes']}.jsonl"
        path.write_bytes(b"\n".join([*lines[:-1], record, lines[-1]]) + b"\n")
        verdict = verify_file(path)
        assert verdict.ok is ok, verdict.message
