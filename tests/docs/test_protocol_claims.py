"""Claims of docs/protocol.md about time that a bot writer relies on, checked
with a real bot process: work done on `game_start` is charged to the first
decision, while the same work before the `hello` reply is not.

Margins are wide (2.5 s of work against a 1 s decision limit and a 5 s
startup limit), so a slow machine cannot turn the result around.
"""

from __future__ import annotations

import re
import uuid

import trio
from paths import RANDOM_BOT, TEST_BOTS
from timing import scaled

from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, run_match
from referee.seats.bot_command import resolve_command

SLOW_START = TEST_BOTS / "slow_start.py"
GAME = get_game("chicago")
TC = TimeControl(decision_ms=1000, startup_ms=5000)
WORK_S = 2.5


async def play_against_random(at: str):
    marker = f"refmark-{uuid.uuid4().hex}"
    bots = [
        resolve_command([str(SLOW_START), marker, f"at={at}", f"sleep={WORK_S}"], name="slow_start"),
        resolve_command([str(RANDOM_BOT), marker], name="random"),
    ]
    cfg = MatchConfig(
        game=GAME, rules=build_rules(GAME, None, {"target_score": 5}), bots=bots, games=2, seed=11, time_control=TC
    )
    with trio.fail_after(scaled(60)):
        result = await run_match(cfg)
    return result.records


async def test_work_on_game_start_counts_against_the_first_decision():
    records = await play_against_random("game_start")
    first = records[0]
    seat = first.seat_names.index("slow_start")
    mine = [f for f in first.failures if f.seat == seat]
    assert mine and mine[0].reason == "timeout", first.failures
    assert re.search(r"no reply to request [12] within 1000 ms", mine[0].message), mine[0].message
    assert first.winner == 1 - seat and first.reason == "forfeit"


async def test_the_same_work_before_hello_is_covered_by_the_startup_limit():
    records = await play_against_random("hello")
    assert [r.failures for r in records] == [[], []]
    assert all(r.reason != "forfeit" for r in records)
