"""Golden logs: a fixed set of matches (both games, 2-4 seats, failures of
several kinds, the substitute policy, explicit deals, a start position, the
sandbox) must write the same logs, byte for byte once timing is set aside,
as the logs kept in tests/golden/logs/. Any change to what a log holds, or to
how it is encoded, shows here; a deliberate one regenerates them with
`REGENERATE_GOLDEN_LOGS=1 python -m pytest tests/logs/test_golden_logs.py`
and the diff is reviewed.

Set aside: the timing fields (`t`, `ms`, `cpu_ms` of records; the result's
`referee_overhead_us`, `think_ms`, `cpu_ms`), the header's `worker` and the
host-dependent parts of its `isolation`, and this checkout's paths and
interpreter in argv and stderr text.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from needs import SANDBOX_PROBLEMS
from paths import FIRST_LEGAL_BOT, RANDOM_BOT, ROOT, TEST_BOTS
from typer.testing import CliRunner

from referee.cli import app
from referee.replay.verify import verify_file

GOLDEN = ROOT / "tests" / "golden" / "logs"
REGENERATE = os.environ.get("REGENERATE_GOLDEN_LOGS") == "1"
TIMING = {"t", "ms", "cpu_ms", "referee_overhead_us", "think_ms"}
HOST_ISOLATION = {"bwrap_version", "cgroups", "identity"}


def py(path: Path, *args: str) -> str:
    return " ".join([sys.executable, "-u", str(path), *args])


POSITION = (
    "chicago/2 dealer=1 scores=3,4 phase=trick hands=KsQsJsTs/KhQhJhTh "
    "stock=2s2h2d2c3s3h3d3c4s4h4d4c5s5h5d5c6s6h6d6c7s7h7d7c8s8h8d8c9s9h9d9cTdTcJdJcQdQcKdKcAdAc "
    "ex=0,0,0,0,0,0 tricks=AsAh"
)

# name: the match's arguments (bots first); every match is deterministic (seeded bots, no timing races).
MATCHES: dict[str, list[str]] = {
    "chicago2": ["greedy", str(RANDOM_BOT), "--games", "2", "--seed", "11", "--rule", "target_score=20"],
    "chicago3": [
        str(FIRST_LEGAL_BOT),
        str(RANDOM_BOT),
        "greedy",
        "--games",
        "3",
        "--seed",
        "12",
        "--rule",
        "target_score=12",
        "--rules",
        "swedish_common",
    ],
    "chicago4": [
        str(FIRST_LEGAL_BOT),
        str(RANDOM_BOT),
        "greedy",
        py(TEST_BOTS / "det_bot.py", "golden"),
        "--games",
        "4",
        "--seed",
        "13",
        "--rule",
        "target_score=8",
        "--rules",
        "cardgames_zone_short",
    ],
    "euchre3": [
        "euchre",
        str(RANDOM_BOT),
        str(FIRST_LEGAL_BOT),
        "--game",
        "ghost-euchre",
        "--games",
        "3",
        "--seed",
        "14",
        "--rule",
        "max_hands=3",
    ],
    "failures": [
        py(TEST_BOTS / "illegal.py", "golden"),
        py(TEST_BOTS / "non_json.py", "golden", "on=2"),
        py(TEST_BOTS / "exit_mid_game.py", "golden", "after=4"),
        "--games",
        "3",
        "--seed",
        "15",
        "--rule",
        "target_score=10",
    ],
    "schema": [
        py(TEST_BOTS / "schema_violation.py", "golden", "kind=unknown_field"),
        str(RANDOM_BOT),
        "--games",
        "2",
        "--seed",
        "16",
        "--rule",
        "target_score=10",
    ],
    "timeout": [
        py(TEST_BOTS / "sleeper.py", "golden", "sleep=60", "on=3"),
        str(RANDOM_BOT),
        "--games",
        "2",
        "--seed",
        "17",
        "--rule",
        "target_score=10",
        "--time-control",
        "decision=300ms,startup=10s",
    ],
    "substitute": [
        py(TEST_BOTS / "illegal.py", "golden"),
        str(RANDOM_BOT),
        "--games",
        "2",
        "--seed",
        "18",
        "--rule",
        "target_score=10",
        "--failure-policy",
        "substitute",
        "--max-strikes",
        "2",
    ],
    "deals": [
        str(FIRST_LEGAL_BOT),
        str(RANDOM_BOT),
        "--games",
        "2",
        "--seed",
        "19",
        "--rule",
        "target_score=10",
        "--deals",
        str(ROOT / "tests" / "golden" / "deals.json"),
    ],
    "start": [
        str(FIRST_LEGAL_BOT),
        str(RANDOM_BOT),
        "--games",
        "2",
        "--seed",
        "20",
        "--rule",
        "target_score=12",
        "--start",
        POSITION,
    ],
    "sandbox": [
        str(FIRST_LEGAL_BOT),
        str(RANDOM_BOT),
        "--games",
        "2",
        "--seed",
        "21",
        "--rule",
        "target_score=10",
        "--sandbox",
    ],
}


MASKS = [
    (re.compile(rb'"(t|ms|cpu_ms|referee_overhead_us)":(-?[0-9.eE+-]+|null)'), rb'"\1":_'),
    (re.compile(rb'"(think_ms|cpu_ms)":\[[^\]]*\]'), rb'"\1":[_]'),
    (re.compile(rb'"worker":(null|\{[^}]*\})'), rb'"worker":_'),
    (re.compile(rb'"(bwrap_version|identity)":"[^"]*"'), rb'"\1":_'),
    (re.compile(rb'"cgroups":\[[^\]]*\]'), rb'"cgroups":_'),
]


def normalized(path: Path) -> bytes:
    """The log as written, byte for byte, with its timing values and this
    machine's paths, interpreter and sandbox details masked."""
    data = path.read_bytes().replace(sys.executable.encode(), b"<python>").replace(str(ROOT).encode(), b"<root>")
    for pattern, mask in MASKS:
        data = pattern.sub(mask, data)
    return data


@pytest.mark.parametrize("name", sorted(MATCHES))
def test_the_logs_are_the_golden_ones(name: str, tmp_path: Path) -> None:
    if name == "sandbox" and SANDBOX_PROBLEMS:
        pytest.skip("cannot sandbox here: " + "; ".join(SANDBOX_PROBLEMS))
    logs = tmp_path / "logs"
    res = CliRunner().invoke(app, ["match", *MATCHES[name], "--log-dir", str(logs)])
    assert res.exit_code == 0, res.output
    written = sorted(logs.glob("game-*.jsonl"))
    assert written and all(verify_file(p).ok for p in written)
    folder = GOLDEN / name
    if REGENERATE:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for p in written:
            (folder / p.name).write_bytes(normalized(p))
        return
    expected = sorted(folder.glob("game-*.jsonl"))
    assert [p.name for p in written] == [p.name for p in expected], "a different number of games"
    for p in written:
        got, want = normalized(p).splitlines(), (folder / p.name).read_bytes().splitlines()
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        assert got == want, (
            f"{name}/{p.name} line {first + 1} differs:\n  now:    {got[first : first + 1]!r}\n"
            f"  golden: {want[first : first + 1]!r}"
        )
