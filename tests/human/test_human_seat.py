"""HumanSeat in the real runner with a real bot process and a scripted Player:
the runner's early deadlines never ask the person twice, a person's own
limit (`--human-time`) ends the question and forfeits (the failure policy is
the same for people and bots), and a resignation forfeits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
from logfiles import read_json_log
from needs import needs_sandbox
from paths import FIRST_LEGAL_BOT
from timing import scaled

from protocol.messages import GameOver, GameStart, Request, TimeControl, Warning
from referee.errors import Resigned
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.table import TableConfig, play_table
from referee.seats.bot_command import resolve_command
from referee.seats.human import Judge
from referee.seats.sandbox import SandboxLimits


class ScriptedPlayer:
    """Answers the first legal action after `think` seconds; `stall` requests are never answered."""

    def __init__(self, think: float = 0.0, stall: bool = False, resign_at: int | None = None) -> None:
        self.think, self.stall, self.resign_at = think, stall, resign_at
        self.asked: list[int] = []
        self.messages: list[Any] = []
        self.cancelled = 0

    def notify(self, message: GameStart | Warning | GameOver) -> None:
        self.messages.append(message)

    async def decide(self, request: Request, judge: Judge) -> Any:
        self.asked.append(request.id)
        if self.resign_at is not None and len(self.asked) == self.resign_at:
            raise Resigned("resigned")
        try:
            if self.stall:
                await trio.sleep_forever()
            await trio.sleep(self.think if len(self.asked) <= 3 else 0)
        except trio.Cancelled:
            self.cancelled += 1
            raise
        assert judge(request.legal[0]) is None
        return request.legal[0]


async def _no_more(records: list[Any]) -> bool:
    return False


def _config(tmp_path: Path, **kw: Any) -> TableConfig:
    game = get_game("chicago")
    return TableConfig(
        game=game,
        rules=build_rules(game, None, {"target_score": 8}),
        bots=[resolve_command(str(FIRST_LEGAL_BOT))],
        seed=4,
        log_dir=tmp_path,
        **kw,
    )


async def test_slow_person_is_asked_once_per_request(tmp_path: Path) -> None:
    # The bots' 150 ms limit sets the game scope's early deadlines; the person takes 0.5 s.
    player = ScriptedPlayer(think=0.5)
    cfg = _config(tmp_path, time_control=TimeControl(decision_ms=150, startup_ms=10_000))
    with trio.fail_after(scaled(120)):
        result = await play_table(cfg, player, _no_more)
    rec = result.records[0]
    assert rec.failures == [] and rec.reason != "forfeit"
    assert len(player.asked) == len(set(player.asked))  # never asked twice for one request
    assert player.cancelled == 0
    _, records = read_json_log(tmp_path / "game-00001.jsonl")
    mine = [r for _, r in records if r["type"] == "action" and r["seat"] == 0]
    assert len(mine) == len(player.asked) and all(r["source"] == "bot" for r in mine)
    assert mine[0]["ms"] >= 400  # the slow answers were waited for, not replaced
    assert isinstance(player.messages[0], GameStart) and isinstance(player.messages[-1], GameOver)


async def test_person_out_of_time_forfeits_and_hears_the_end(tmp_path: Path) -> None:
    player = ScriptedPlayer(stall=True)
    cfg = _config(tmp_path, human_time=TimeControl(decision_ms=300))
    with trio.fail_after(scaled(60)):
        result = await play_table(cfg, player, _no_more)
    rec = result.records[0]
    assert [(f.seat, f.reason) for f in rec.failures] == [(0, "timeout")]
    assert rec.forfeited == [0] and rec.winner == 1
    assert f"no reply to request {player.asked[0]} within 300 ms" == rec.failures[0].message
    assert player.cancelled == 1 and len(player.asked) == 1  # the question ended with the game
    over = player.messages[-1]
    assert isinstance(over, GameOver) and over.failures[0].reason == "timeout"  # the person still hears the end


async def test_resignation_forfeits_and_the_person_hears_the_end(tmp_path: Path) -> None:
    player = ScriptedPlayer(resign_at=3)
    with trio.fail_after(scaled(60)):
        result = await play_table(_config(tmp_path), player, _no_more)
    rec = result.records[0]
    assert [(f.seat, f.reason) for f in rec.failures] == [(0, "resigned")]
    assert rec.forfeited == [0] and rec.winner == 1 and len(player.asked) == 3
    over = player.messages[-1]
    assert isinstance(over, GameOver) and over.winner == 1


@needs_sandbox
async def test_sandboxed_bots_at_a_table(tmp_path: Path) -> None:
    """`play --sandbox`: the bots run in the sandbox, the log says so, the person needs none."""
    player = ScriptedPlayer()
    cfg = _config(tmp_path, sandbox=SandboxLimits())
    with trio.fail_after(scaled(120)):
        result = await play_table(cfg, player, _no_more)
    assert result.records[0].failures == []
    header, _ = read_json_log(tmp_path / "game-00001.jsonl")
    assert header.isolation is not None and header.isolation["sandbox"] == "bubblewrap"
    assert header.players[0].human and not header.players[1].human


def test_sandbox_fails_closed_for_a_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine that cannot isolate refuses a sandboxed table before any game."""
    from referee.errors import RefereeError
    from referee.seats import isolation  # the table goes through the one isolation gate, as a match does

    def refuse() -> None:
        raise RefereeError("cannot isolate here")

    monkeypatch.setattr(isolation, "require_sandbox", refuse)
    with pytest.raises(RefereeError, match="cannot isolate here"):
        _config(tmp_path, sandbox=SandboxLimits())
