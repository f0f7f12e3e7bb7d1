"""The public copy of a game's log: what its bots wrote beside the protocol
left out, everything else byte for byte, and still a log `verify` accepts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from paths import RANDOM_BOT, ROOT, TEST_BOTS
from timing import scaled

from referee.arena.game_files import shown_log
from referee.replay.verify import OK, verify_file


@pytest.fixture(scope="module")
def crashed_log(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real log in which seat 0 crashed with a traceback on its stderr."""
    logs = tmp_path_factory.mktemp("logs")
    bots = [f"{sys.executable} {TEST_BOTS / 'crash_traceback.py'}", f"{sys.executable} {RANDOM_BOT}"]
    res = subprocess.run(
        [sys.executable, "-m", "referee.cli", "match", *bots, "--games", "1", "--seed", "1", "--log-dir", str(logs)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=scaled(120),
    )
    assert res.returncode == 0, res.stderr
    return (logs / "game-00001.jsonl").read_bytes()


def failures(data: bytes) -> list[dict[str, object]]:
    return [r for r in map(json.loads, data.decode().splitlines()) if r["type"] == "failure"]


def test_the_public_copy_drops_only_what_the_bot_wrote_and_still_verifies(crashed_log: bytes, tmp_path: Path) -> None:
    assert any("my bug in the exchange code" in str(f.get("detail")) for f in failures(crashed_log))
    public = shown_log(crashed_log, set())
    assert b"my bug" not in public
    assert failures(public) == [{k: v for k, v in f.items() if k != "detail"} for f in failures(crashed_log)]
    kept = [line for line in crashed_log.splitlines() if b'"type":"failure"' not in line]
    assert kept == [line for line in public.splitlines() if b'"type":"failure"' not in line]
    for name, data in (("written.jsonl", crashed_log), ("public.jsonl", public)):
        (tmp_path / name).write_bytes(data)
        assert verify_file(tmp_path / name).status == OK, name


def test_the_crashed_seats_owner_keeps_its_words_an_admin_every_byte(crashed_log: bytes) -> None:
    assert b"my bug in the exchange code" in shown_log(crashed_log, {0})
    assert b"my bug in the exchange code" not in shown_log(crashed_log, {1})
    assert shown_log(crashed_log, None) == crashed_log
