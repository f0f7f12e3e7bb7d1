"""`match --concurrency N`: deal sets at once, the same games, logs and statistics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from paths import RANDOM_BOT
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ConfigError
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.in_order import MAX_MATCH_GAMES, REQUEST_ID_STRIDE, InOrder
from referee.play.match import MatchConfig, run_match
from referee.replay.verify import OK, verify_file
from referee.seats.bot_command import resolve_command

GREEDY = "greedy"  # the built-in bot
RANDOM = str(RANDOM_BOT)
TIMING = {"t", "ms", "cpu_ms", "think_ms", "ms_per_decision", "cpu_ms_per_decision", "referee_overhead_us", "clock"}


def _config(log_dir: Path | None, concurrency: int, games: int = 12, sprt: Any = None) -> MatchConfig:
    game = get_game("chicago")
    return MatchConfig(
        game=game,
        rules=build_rules(game, None, {"target_score": 30}),
        bots=[resolve_command(GREEDY), resolve_command(RANDOM)],
        games=games,
        seed=4,
        log_dir=log_dir,
        concurrency=concurrency,
        sprt=sprt,
    )


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _logs(folder: Path) -> dict[str, list[Any]]:
    return {
        p.name: [_untimed(json.loads(line)) for line in p.read_text().splitlines()]
        for p in sorted(folder.glob("game-*.jsonl"))
    }


def _results(records: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            r.game_id,
            r.deal_set,
            r.seed,
            tuple(r.seat_names),
            r.winner,
            tuple(r.scores),
            r.reason,
            r.decisions,
            r.requests,
        )
        for r in records
    ]


async def test_concurrent_deal_sets_give_the_same_records_logs_and_statistics(tmp_path: Path) -> None:
    seq = await run_match(_config(tmp_path / "seq", 1))
    par = await run_match(_config(tmp_path / "par", 3))
    assert len(seq.records) == 12
    assert _results(par.records) == _results(seq.records)
    assert [_untimed(b.as_dict()) for b in par.bots] == [_untimed(b.as_dict()) for b in seq.bots]
    assert par.stats == seq.stats and par.pentanomial == seq.pentanomial
    seq_logs, par_logs = _logs(tmp_path / "seq"), _logs(tmp_path / "par")
    assert len(seq_logs) == 12
    assert par_logs == seq_logs  # byte for byte, timing fields aside
    for path in (tmp_path / "par").glob("game-*.jsonl"):
        assert verify_file(path).status == OK


async def test_request_ids_follow_the_game_id_not_the_processes_history(tmp_path: Path) -> None:
    await run_match(_config(tmp_path, 2, games=4))
    for path in sorted(tmp_path.glob("game-*.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        header = lines[0]
        base = (header["game_id"] - 1) * REQUEST_ID_STRIDE
        assert header["request_id_base"] == base
        ids = [x["msg"]["id"] for x in lines if x.get("type") == "send" and x["msg"]["type"] == "request"]
        assert ids == list(range(base + 1, base + 1 + len(ids)))
        assert ids[-1] < 2**31


async def test_an_sprt_stop_with_games_in_flight_matches_the_sequential_stop(tmp_path: Path) -> None:
    bounds = (0.0, 400.0, 0.2, 0.2)  # greedy crushes random: accepted after a few deal sets
    seq = await run_match(_config(tmp_path / "seq", 1, games=60, sprt=bounds))
    par = await run_match(_config(tmp_path / "par", 4, games=60, sprt=bounds))
    assert seq.stopped.startswith("SPRT accepted") and len(seq.records) < 60
    assert par.stopped == seq.stopped
    assert _results(par.records) == _results(seq.records)
    # the games in flight at the stop were cancelled and left no log behind
    assert sorted(p.name for p in (tmp_path / "par").iterdir()) == sorted(p.name for p in (tmp_path / "seq").iterdir())


def test_results_are_handed_on_in_schedule_order_and_nothing_after_a_stop() -> None:
    seen: list[str] = []
    order = InOrder(4, 2, seen.append, lambda k: "stop" if k == 1 else "")
    assert [order.take(), order.take(), order.take()] == [0, 1, 2]
    order.finished(2, "2a")
    order.finished(1, "1a")
    order.finished(1, "1b")
    assert seen == []  # set 0 has not finished
    order.finished(0, "0a")
    assert seen == ["0a"]
    order.finished(0, "0b")
    assert seen == ["0a", "0b", "1a", "1b"]
    assert order.stopped == "stop"
    assert order.take() is None
    order.finished(2, "2b")
    assert seen == ["0a", "0b", "1a", "1b"]
    assert order.unemitted() == ["2a", "2b"]


def test_a_match_too_long_for_32_bit_request_ids_is_refused() -> None:
    with pytest.raises(ConfigError, match="at most"):
        _config(None, 1, games=MAX_MATCH_GAMES + 2)
    with pytest.raises(ConfigError, match="concurrency"):
        _config(None, 0)


def test_the_cli_match_with_concurrency_prints_the_same_results(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["match", GREEDY, RANDOM, "--games", "8", "--seed", "4", "--json", "--rule", "target_score=30"]
    seq = runner.invoke(app, args)
    par = runner.invoke(app, [*args, "--concurrency", "2"])
    assert seq.exit_code == 0, seq.output
    assert par.exit_code == 0, par.output
    one, two = json.loads(seq.stdout), json.loads(par.stdout)
    assert _untimed(one["results"]) == _untimed(two["results"]) and _untimed(one["bots"]) == _untimed(two["bots"])
