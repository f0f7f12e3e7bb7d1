"""`arena serve --cluster`: an arena's games played on a real Dask cluster
(two workers on 127.0.0.1, tests/dask_cluster.py) that reach the builds
through the arena's folder, at the same path as the server. A worker whose
copy of a build differs from the one recorded when it was built refuses to
play it, and the server stops with one line: it fails closed rather than
rate a bot nobody submitted."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from arena_served import Served, cli, get, new_arena, submit_copies
from needs import needs_sandbox
from timing import scaled, wait_until

pytestmark = [needs_sandbox, pytest.mark.slow]
pytest.importorskip("distributed")  # the `cluster` extra, part of the test extras


def test_an_arena_plays_on_a_cluster_and_a_changed_build_stops_it(tmp_path: Path, dask_cluster: Any) -> None:
    address, _workers = dask_cluster
    folder, _tokens = new_arena(tmp_path)
    served = Served(folder, "--cluster", address)
    try:
        submit_copies(served.base, tmp_path)
        assert wait_until(lambda: len(get(f"{served.base}/api/games")["games"]) >= 4, 300), "no games played"
    finally:
        served.kill()

    with sqlite3.connect(folder / "arena.db") as conn:
        logged = [r[0] for r in conn.execute("SELECT log_name FROM games")]
    played_by = set()
    for name in logged:
        with (folder / "logs" / name).open() as fh:
            played_by.add(json.loads(fh.readline())["worker"]["name"])
        verified = cli("verify", str(folder / "logs" / name))
        assert verified.returncode == 0, verified.stdout + verified.stderr
    assert played_by and played_by <= {"wA", "wB"}, played_by  # the cluster's workers played them, not the server

    # A build changed after it was recorded: the workers see the change, refuse, and the server stops.
    built = sorted(p for p in (folder / "builds").iterdir() if p.is_dir())
    assert len(built) == 2
    with (built[0] / "main.py").open("a") as fh:
        fh.write("# changed after the build\n")
    served = Served(folder, "--cluster", address)
    try:
        assert served.proc.wait(timeout=scaled(300)) != 0
    finally:
        served.kill()
    assert served.proc.stderr is not None
    said = served.proc.stderr.read()
    assert "differs from the coordinator's copy" in said, said
    assert "Traceback" not in said
    error_lines = [line for line in said.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1, said
