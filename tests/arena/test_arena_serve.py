"""`arena serve` as a host runs it: a subprocess on 127.0.0.1, bots submitted
through the API by `arena submit`, built and checked in the sandbox, played
and rated; then `kill -9` and a restart, and nothing lost or doubled."""

from __future__ import annotations

import json
import sqlite3
import urllib.request
from pathlib import Path

import pytest
from arena_served import Served, bot_folder, cli, games_in, get, new_arena
from needs import needs_sandbox
from paths import RANDOM_BOT
from timing import scaled, wait_until

from referee.arena.online import UnitResult, replay

pytestmark = [needs_sandbox, pytest.mark.slow]


@pytest.fixture
def arena(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    return new_arena(tmp_path)


def test_bots_are_built_checked_played_and_survive_a_kill(arena: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    folder, tokens = arena
    served = Served(folder)
    try:
        submit = ["arena", "submit", served.base]
        res = cli(*submit, str(bot_folder(tmp_path, "r", RANDOM_BOT)), "--token-file", str(tmp_path / "alice.token"))
        assert res.returncode == 0 and "active" in res.stderr, res.stderr
        res = cli(
            *submit,
            str(bot_folder(tmp_path, "b", RANDOM_BOT.read_text() + "# bob's copy\n")),
            "--token-file",
            str(tmp_path / "bob.token"),
        )
        assert res.returncode == 0, res.stderr
        # A bot that never says hello fails the gate; its owner sees why, another user does not.
        mute = bot_folder(tmp_path, "mute", "import sys\nfor line in sys.stdin:\n    pass\n")
        res = cli(*submit, str(mute), "--token-file", str(tmp_path / "bob.token"), "--name", "mute", "--json")
        assert res.returncode == 1 and "failed: check:" in res.stderr, res.stderr
        failed = json.loads(res.stdout)
        assert "hello" in failed["reason"] and failed["check_log"]
        assert "reason" not in get(f"{served.base}/api/submissions/{failed['id']}", tokens["alice"])
        # Games are played and rated; a finished game's log verifies.
        assert wait_until(lambda: len(get(f"{served.base}/api/games")["games"]) >= 4, 300), "no games played"
        board = get(f"{served.base}/api/leaderboard")
        assert sorted(e["bot"] for e in board["bots"]) == ["alice", "bob"]
        assert all(e["games"] >= 2 and e["units"] >= 1 for e in board["bots"])
        game = get(f"{served.base}/api/games")["games"][0]
        with urllib.request.urlopen(f"{served.base}/api/games/{game['id']}/log", timeout=scaled(30)) as resp:
            (tmp_path / "game.jsonl").write_bytes(resp.read())
        verified = cli("verify", str(tmp_path / "game.jsonl"))
        assert verified.returncode == 0, verified.stdout + verified.stderr
    finally:
        served.kill()

    db = folder / "arena.db"
    with sqlite3.connect(db) as conn:
        before_games = conn.execute("SELECT count(*) FROM games").fetchone()[0]
        units = conn.execute("SELECT members, totals FROM units WHERE status = 'done' ORDER BY done_order").fetchall()
        saved = dict(conn.execute("SELECT submission, mu FROM ratings").fetchall())
    replayed = replay(UnitResult(tuple(map(str, json.loads(m))), tuple(json.loads(t))) for m, t in units)
    assert {int(k): r.mu for k, r in replayed.items()} == pytest.approx(saved)

    served = Served(folder)  # resumes: a running unit is played again, nothing is counted twice
    try:
        assert wait_until(lambda: games_in(db) > before_games + 4, 300), "play did not go on"
    finally:
        served.kill()
    with sqlite3.connect(db) as conn:
        twice = conn.execute("SELECT unit, rotation, count(*) FROM games GROUP BY unit, rotation HAVING count(*) > 1")
        assert twice.fetchall() == []
        orphans = conn.execute("SELECT count(*) FROM units WHERE status = 'done' AND totals IS NULL").fetchone()[0]
        assert orphans == 0
        logged = [r[0] for r in conn.execute("SELECT log_name FROM games")]
    assert all((folder / "logs" / name).is_file() for name in logged)  # a recorded game has its whole log
