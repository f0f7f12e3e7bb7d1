"""Ghost Hand Euchre through the whole runtime: a 3-bot match and a 4-bot round
robin of 3-seat tables, with logs that `verify` accepts and the HTML replay shows."""

from __future__ import annotations

import json
from pathlib import Path

from paths import FIRST_LEGAL_BOT, RANDOM_BOT
from typer.testing import CliRunner

from referee.cli import app

runner = CliRunner()


def test_three_bot_match_logs_verify_and_replay(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    res = runner.invoke(
        app,
        [
            "match",
            "euchre",
            str(RANDOM_BOT),
            str(FIRST_LEGAL_BOT),
            "--game",
            "ghost-euchre",
            "--games",
            "3",
            "--seed",
            "9",
            "--rule",
            "max_hands=8",
            "--log-dir",
            str(logs),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["game"] == "ghost_euchre" and len(summary["results"]) == 3
    assert all(not b["failures"] for b in summary["bots"])
    assert sorted(r["seats"].index("euchre") for r in summary["results"]) == [0, 1, 2]
    res = runner.invoke(app, ["verify", str(logs)])
    assert res.exit_code == 0 and "3 verified, 0 failed" in res.stdout, res.output
    page = tmp_path / "game.html"
    res = runner.invoke(app, ["replay", str(logs / "game-00001.jsonl"), "--html", str(page)])
    assert res.exit_code == 0, res.output
    html = page.read_text()
    assert "Ghost Hand Euchre" in html and "euchre" in html


def test_four_bot_round_robin_of_three_seat_tables(tmp_path: Path) -> None:
    config = tmp_path / "euchre.toml"
    bots = {"heuristic": "euchre", "random": str(RANDOM_BOT), "first": str(FIRST_LEGAL_BOT), "random2": str(RANDOM_BOT)}
    config.write_text(
        'name = "e2e"\ngame = "ghost-euchre"\nseed = 3\nformat = "round-robin"\ntable_size = 3\n'
        'deal_sets = 1\nconcurrency = 2\ntime_control = "decision=2s,startup=10s"\nsandbox = false\n'
        "[rules]\noptions = { max_hands = 6 }\n"
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = "{f}"\n' for n, f in bots.items())
    )
    db = tmp_path / "t.db"
    res = runner.invoke(app, ["tournament", str(config), "--db", str(db), "--log-dir", str(tmp_path / "logs")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["standings", str(db), "--json"])
    assert res.exit_code == 0, res.output
    standings = json.loads(res.stdout)
    text = json.dumps(standings)
    for name in bots:
        assert name in text
    logs = sorted((tmp_path / "logs").rglob("*.jsonl"))
    assert len(logs) == 4 * 3  # C(4,3) tables x one deal set x 3 rotations
    res = runner.invoke(app, ["verify", str(tmp_path / "logs")])
    assert res.exit_code == 0 and "12 verified, 0 failed" in res.stdout, res.output
