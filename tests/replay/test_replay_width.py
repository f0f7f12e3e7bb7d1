"""`replay --width N` lays the replay out in N columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from paths import RANDOM_BOT
from rich.cells import cell_len
from timing import scaled


def test_replay_width_is_honoured(tmp_path: Path) -> None:
    bots = ["greedy", str(RANDOM_BOT)]
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "match",
            *bots,
            "--games",
            "2",
            "--seed",
            "3",
            "--log-dir",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
        env=env,
        timeout=scaled(300),
    )
    log = str(tmp_path / "game-00001.jsonl")

    def replay(width: int) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "referee.cli", "replay", log, "--width", str(width)],
            capture_output=True,
            text=True,
            env=env,
            timeout=scaled(300),
            check=True,
        )
        return done.stdout.splitlines()

    narrow, wide = replay(40), replay(200)
    assert max(cell_len(line.rstrip()) for line in narrow) <= 40
    assert max(cell_len(line) for line in wide) > 40  # the wide replay has lines the narrow one wrapped
    assert len(narrow) > len(wide)
    # Nothing is lost by wrapping: the same words in the same order.
    assert " ".join(narrow).split() == " ".join(wide).split()
