"""Where the sandbox is switched on and what a run keeps: the CLI options and
`doctor`, the tournament's `sandbox` key (on by default), refusal to start
without the means to isolate, the isolation in log headers, and each seat's
stderr of each game kept beside the log, bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
from needs import needs_sandbox
from paths import FIRST_LEGAL_BOT, RANDOM_BOT, ROOT, TEST_BOTS
from timing import scaled
from typer.testing import CliRunner

from protocol.messages import TimeControl
from referee.cli import app
from referee.errors import ConfigError, SandboxUnavailable
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, run_match
from referee.play.session import stderr_path
from referee.seats import sandbox as sandbox_module
from referee.seats.bot_command import resolve_command
from referee.seats.bot_process import GAME_STDERR_KEEP
from referee.seats.sandbox import SandboxLimits, probe_host
from referee.seats.sandbox import host as sandbox_host
from referee.tournament.config import parse_config
from referee.tournament.run import TournamentRunner, prepare_store
from referee.tournament.schedule import schedule_for
from referee.tournament.store import Store

RANDOM = RANDOM_BOT
runner = CliRunner()


def without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    real = probe_host()
    missing = sandbox_module.HostReport(**{**real.__dict__, "bwrap": None, "works": False})
    monkeypatch.setattr(sandbox_host, "probe_host", lambda: missing)


# ------------------------------------------------------------------ the command line


def test_match_sandbox_refuses_in_one_line_without_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> None:
    without_bubblewrap(monkeypatch)
    res = runner.invoke(app, ["match", str(RANDOM), str(FIRST_LEGAL_BOT), "--games", "2", "--sandbox"])
    assert res.exit_code == 2
    assert "cannot sandbox bots on this machine: bubblewrap (bwrap) is not installed" in res.output
    assert "Traceback" not in res.output
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 1 and "sandboxing is not possible here" in res.output


def test_sandbox_limits_need_the_sandbox_and_name_bad_values() -> None:
    res = runner.invoke(app, ["match", str(RANDOM), str(FIRST_LEGAL_BOT), "--sandbox-limits", "memory=1G"])
    assert res.exit_code == 2 and "needs --sandbox" in res.output
    res = runner.invoke(
        app, ["match", str(RANDOM), str(FIRST_LEGAL_BOT), "--sandbox", "--sandbox-limits", "memory=much"]
    )
    assert res.exit_code == 2 and "sandbox memory: 'much' is not a positive size" in res.output


@needs_sandbox
def test_doctor_reports_what_the_machine_provides() -> None:
    res = runner.invoke(app, ["doctor", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["sandbox_possible"] is True and report["sandbox_works"] is True
    assert report["bwrap_version"] and report["cgroup_version"] in ("v1", "v2", "hybrid", "none")
    assert set(report["cgroup_v2_groups"]) <= set(report["cgroup_controllers"])
    assert isinstance(report["cgroup_v2_favordynmods"], bool)
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 0 and "sandboxing is possible" in res.output and "bubblewrap" in res.output
    words = " ".join(res.output.split())
    if report["cgroup_controllers"]:  # how a sandbox enters them, per hierarchy
        assert "cgroup moves:" in words
        v1 = [c for c in report["cgroup_controllers"] if c not in report["cgroup_v2_groups"]]
        assert ("v1 groups (" + ", ".join(v1)) in words if v1 else "v1 groups" not in words
        assert ("v2 groups (" in words) == bool(report["cgroup_v2_groups"])


@needs_sandbox
def test_match_and_check_run_sandboxed_from_the_command_line(tmp_path: Path) -> None:
    res = runner.invoke(
        app,
        [
            "match",
            str(RANDOM),
            str(FIRST_LEGAL_BOT),
            "--games",
            "2",
            "--seed",
            "4",
            "--rule",
            "target_score=10",
            "--sandbox",
            "--sandbox-limits",
            "memory=256M,processes=16",
            "--log-dir",
            str(tmp_path),
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert all(not b["failures"] for b in json.loads(res.stdout)["bots"])
    header = json.loads((tmp_path / "game-00001.jsonl").read_text().splitlines()[0])
    assert header["isolation"]["sandbox"] == "bubblewrap"
    assert header["isolation"]["limits"]["memory_mb"] == 256 and header["isolation"]["limits"]["processes"] == 16
    res = runner.invoke(app, ["check", str(RANDOM), "--sandbox"])
    assert res.exit_code == 0, res.output
    words = " ".join(res.output.split())
    assert "in the sandbox" in words and "random_bot: passed" in words


def test_an_unsandboxed_log_says_so_and_old_logs_still_read(tmp_path: Path) -> None:
    res = runner.invoke(
        app,
        [
            "match",
            str(RANDOM),
            str(FIRST_LEGAL_BOT),
            "--games",
            "2",
            "--seed",
            "4",
            "--rule",
            "target_score=10",
            "--log-dir",
            str(tmp_path),
        ],
    )
    assert res.exit_code == 0, res.output
    log = tmp_path / "game-00001.jsonl"
    lines = log.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["isolation"] == {"sandbox": "none"}
    del header["isolation"]  # a log written before the field existed
    log.write_text("\n".join([json.dumps(header, separators=(",", ":"))] + lines[1:]) + "\n")
    res = runner.invoke(app, ["verify", str(log)])
    assert res.exit_code == 0, res.output


# ------------------------------------------------------------------ tournaments


TWO_BOTS = f'[[bots]]\nname = "a"\ncommand = "{RANDOM}"\n[[bots]]\nname = "b"\ncommand = "{FIRST_LEGAL_BOT}"\n'


def test_tournament_sandbox_key_defaults_to_on() -> None:
    # In tournaments freeze_idle is on unless switched off.
    assert parse_config("seed = 1\n" + TWO_BOTS, ROOT).sandbox == SandboxLimits(freeze_idle=True)
    assert parse_config("seed = 1\nsandbox = true\n" + TWO_BOTS, ROOT).sandbox == SandboxLimits(freeze_idle=True)
    assert parse_config("seed = 1\nsandbox = false\n" + TWO_BOTS, ROOT).sandbox is None
    t = parse_config('seed = 1\nsandbox = { memory = "512M", processes = 32, env = ["KEY"] }\n' + TWO_BOTS, ROOT)
    assert t.sandbox == SandboxLimits(memory_mb=512, processes=32, env=("KEY",), freeze_idle=True)
    off = parse_config("seed = 1\nsandbox = { freeze_idle = false }\n" + TWO_BOTS, ROOT)
    assert off.sandbox == SandboxLimits()
    assert all(b.spec.sandbox == t.sandbox for b in t.bots)
    with pytest.raises(ConfigError, match=r"sandbox: unknown limit 'ram'"):
        parse_config("seed = 1\nsandbox = { ram = 1 }\n" + TWO_BOTS, ROOT)
    with pytest.raises(ConfigError, match=r"sandbox.cpu: "):
        parse_config('seed = 1\nsandbox = { cpu = "soon" }\n' + TWO_BOTS, ROOT)


def test_a_sandboxed_tournament_refuses_to_start_without_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_bubblewrap(monkeypatch)
    t = parse_config("seed = 1\n" + TWO_BOTS, tmp_path)
    store = Store.open(tmp_path / "t.db", create=True, lock=True)
    prepare_store(t, store, schedule_for(t))
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        TournamentRunner(t, store, log_dir=tmp_path / "logs", concurrency=1)


@needs_sandbox
async def test_a_tournament_sandboxes_by_default_and_keeps_stderr(tmp_path: Path) -> None:
    flood = TEST_BOTS / "stderr_flood.py"
    text = (
        'seed = 5\ndeal_sets = 1\ntime_control = "decision=2s,startup=10s"\n[rules]\noptions = '
        f'{{ target_score = 10 }}\n[[bots]]\nname = "flood"\ncommand = "{flood} bytes=1000"\n'
        f'[[bots]]\nname = "first"\ncommand = "{FIRST_LEGAL_BOT}"\n'
    )
    t = parse_config(text, tmp_path)
    store = Store.open(tmp_path / "t.db", create=True, lock=True)
    prepare_store(t, store, schedule_for(t))
    with trio.fail_after(scaled(90)):
        outcome = await TournamentRunner(t, store, log_dir=tmp_path / "logs", concurrency=1).run()
    assert outcome.status == "completed"
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 2
    for log in logs:
        header = json.loads(log.read_text().splitlines()[0])
        assert header["isolation"]["sandbox"] == "bubblewrap"
        seat = [p["name"] for p in header["players"]].index("flood")
        kept = stderr_path(log, seat)
        assert 0 < kept.stat().st_size <= GAME_STDERR_KEEP  # 4 MB written at start, the last 1 MB kept
        assert kept.read_bytes().rstrip().endswith(b"stderr-flood")
        assert not stderr_path(log, 1 - seat).exists()  # the quiet bot wrote nothing


# ------------------------------------------------------------------ stderr without a sandbox


async def test_each_games_stderr_is_kept_beside_its_log_and_bounded(tmp_path: Path) -> None:
    flood = resolve_command([str(TEST_BOTS / "stderr_flood.py"), "bytes=300000"], name="flood")
    first = resolve_command([str(FIRST_LEGAL_BOT)], name="first")
    game = get_game("chicago")
    config = MatchConfig(
        game=game,
        rules=build_rules(game, None, {"target_score": 10}),
        bots=[flood, first],
        games=2,
        seed=2,
        time_control=TimeControl(decision_ms=2000, startup_ms=10000),
        log_dir=tmp_path,
    )
    with trio.fail_after(scaled(90)):
        result = await run_match(config)
    for rec in result.records:
        seat = rec.seat_names.index("flood")
        kept = stderr_path(Path(rec.log_path or ""), seat)
        assert kept.name == f"game-{rec.game_id:05d}.seat{seat}.stderr"
        size = kept.stat().st_size
        assert 0 < size <= GAME_STDERR_KEEP
        assert size == GAME_STDERR_KEEP or rec.game_id > 1  # the first game had the 4 MB start-up flood
        assert b"stderr-flood" in kept.read_bytes()


async def test_a_failure_report_names_the_file_that_keeps_the_bots_stderr(tmp_path: Path) -> None:
    crasher = resolve_command([str(TEST_BOTS / "exit_mid_game.py"), "after=3"], name="crasher")
    first = resolve_command([str(FIRST_LEGAL_BOT)], name="first")
    game = get_game("chicago")
    config = MatchConfig(
        game=game,
        rules=build_rules(game, None, {"target_score": 10}),
        bots=[crasher, first],
        games=2,
        seed=2,
        time_control=TimeControl(decision_ms=2000, startup_ms=10000),
        log_dir=tmp_path,
    )
    with trio.fail_after(scaled(90)):
        result = await run_match(config)
    rec = result.records[0]
    seat = rec.seat_names.index("crasher")
    failures = [
        json.loads(line) for line in Path(rec.log_path or "").read_text().splitlines() if '"type":"failure"' in line
    ]
    assert [f["reason"] for f in failures] == ["crash"]
    kept = stderr_path(Path(rec.log_path or ""), seat)
    assert f"kept in {kept.name}" in failures[0]["detail"]
    assert "exit_mid_game: crashing on request" in kept.read_text()
