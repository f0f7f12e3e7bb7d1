"""A decision's bookkeeping waits until the next request is out.

The runner sends the next request before it reads the CPU time of the seat
that answered, writes the decision's log records and tells the watcher: the
bots wait for none of that. What must not change: each decision is charged
its own CPU time (also when the same seat acts twice in a row), the log's
records keep their order, and a game cancelled from outside still logs every
decision it applied. And a cancelled game is never a result.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import trio
from logfiles import log_records

from protocol.messages import TimeControl
from referee.errors import BotCrashed
from referee.games import get_game
from referee.games.rules import build_rules
from referee.logs.gamelog import GameLogWriter
from referee.logs.records import PlayerInfo
from referee.play.game_spec import FailurePolicy, GameSpec
from referee.play.runner import GameRunner
from referee.seats.seat import Unmetered

GAME = get_game("chicago")
CPU_PER_DECISION = 0.007  # seconds a seat's CPU clock moves for each request it is sent


class MeteredSeat(Unmetered):
    """Answers every request at once with its first legal action. Its CPU
    clock moves when a request reaches it, as a bot's moves while it thinks:
    a reading taken after its next request went out would count that
    decision twice. Request `stop_at` finds its pipe full, and `scope` is
    cancelled while the runner waits to write it."""

    measures_cpu = True
    dead = False
    late_id = 0
    pid = 0

    def __init__(self, stop_at: int | None = None, scope: trio.CancelScope | None = None) -> None:
        self.cpu = 0.0
        self.answers: list[bytes] = []
        self.requests = 0
        self.stop_at = stop_at  # this request finds the pipe full, and `scope` is cancelled while it waits
        self.scope = scope

    def cpu_seconds(self) -> float:
        return self.cpu

    def send_nowait(self, data: bytes | bytearray) -> bool:
        msg = json.loads(bytes(data))
        if msg["type"] == "request":
            self.requests += 1
            self.cpu += CPU_PER_DECISION
            reply = {"type": "action", "id": msg["id"], "action": msg["legal"][0]}
            self.answers.append(json.dumps(reply).encode())
            return self.requests != self.stop_at
        return True

    async def send(self, data: bytes | bytearray) -> None:
        if not self.send_nowait(data):
            await self.flush()

    async def flush(self) -> None:
        assert self.scope is not None
        self.scope.cancel()
        await trio.sleep_forever()

    def ready_lines(self, max_bytes: int, max_lines: int) -> list[bytes]:
        return []

    async def receive_line(self) -> bytes:
        return self.answers.pop(0)

    async def close(self, farewell: bytes | None = None) -> None:
        pass


def _runner(seats: list[Any], log: Path, seed: int = 11) -> GameRunner:
    spec = GameSpec(
        game=GAME,
        rules=build_rules(GAME),
        n_players=2,
        seed=seed,
        game_id=1,
        time_control=TimeControl(),
        policy=FailurePolicy(),
    )
    return GameRunner(spec, seats, ["a", "b"], GameLogWriter(log))


PLAYERS = [PlayerInfo(seat=s, name=n, argv=[n]) for s, n in enumerate("ab")]


async def test_each_decision_is_charged_its_own_cpu_time_also_when_a_seat_acts_twice(tmp_path: Path) -> None:
    seats = [MeteredSeat(), MeteredSeat()]
    record = await _runner(seats, tmp_path / "g.jsonl").run(PLAYERS, {})
    actions = [r for r in log_records(tmp_path / "g.jsonl") if r["type"] == "action"]
    assert not record.failures and len(actions) == record.decisions > 100
    twice = sum(a["seat"] == b["seat"] for a, b in pairwise(actions))
    assert twice > 10  # the case this is about: the answer's reading must come before the seat's next request
    assert {a["cpu_ms"] for a in actions} == {CPU_PER_DECISION * 1000}
    for seat, s in enumerate(seats):
        assert record.cpu_ms[seat] == round(s.requests * CPU_PER_DECISION * 1000, 3)


async def test_records_keep_their_order_request_reply_action_events(tmp_path: Path) -> None:
    await _runner([MeteredSeat(), MeteredSeat()], tmp_path / "g.jsonl").run(PLAYERS, {})
    records = log_records(tmp_path / "g.jsonl")
    decisions = [i for i, r in enumerate(records) if r["type"] == "send" and r["msg"]["type"] == "request"]
    for i in decisions:
        request, reply, action = records[i : i + 3]
        rid = request["msg"]["id"]
        assert (reply["type"], json.loads(reply["line"])["id"]) == ("recv", rid)
        assert (action["type"], action["id"], action["seat"]) == ("action", rid, request["seat"])
        assert request["t"] <= reply["t"]
    after = [r["type"] if r["type"] != "send" else r["msg"]["type"] for r in records[decisions[-1] + 3 :]]
    assert set(after[:-3]) <= {"event", "deal"} and after[-3:] == ["game_over", "game_over", "result"]


async def test_a_game_cancelled_before_its_next_request_is_out_logs_every_decision(tmp_path: Path) -> None:
    with trio.CancelScope() as scope:
        seats = [MeteredSeat(stop_at=20, scope=scope), MeteredSeat()]
        runner = _runner(seats, tmp_path / "g.jsonl")
        try:
            await runner.run(PLAYERS, {})
        finally:
            runner.log.close()
    assert scope.cancelled_caught
    records = log_records(tmp_path / "g.jsonl")
    actions = [r for r in records if r["type"] == "action"]
    requests = [r for r in records if r["type"] == "send" and r["msg"]["type"] == "request"]
    assert len(actions) == runner.decisions == len(requests) - 1  # the last request was never answered
    assert records[-1] == requests[-1]  # and it is the last record: the decision before it is logged


class GoneSeat(MeteredSeat):
    """A bot whose stdin is already closed: every write fails."""

    def send_nowait(self, data: bytes | bytearray) -> bool:
        return False

    async def flush(self) -> None:
        raise BotCrashed("bot's stdin is closed (exited?)")


async def test_a_cancelled_game_whose_bots_died_of_it_is_no_result(tmp_path: Path) -> None:
    """A tournament cancelled while a game sends `game_start` kills that game's
    bots; the shielded sends then find them gone, both seats forfeit and the
    game would end by itself. It must stop as cancelled, not as a result with
    two crashes that a resumed tournament would keep."""
    runner = _runner([GoneSeat(), GoneSeat()], tmp_path / "g.jsonl")
    with trio.CancelScope() as scope:
        scope.cancel()
        try:
            await runner.run(PLAYERS, {})
        finally:
            runner.log.close()
    assert scope.cancelled_caught
    assert [f.reason for f in runner.failures] == ["crash", "crash"]  # what it had seen by then
    assert not any(r["type"] == "result" for r in log_records(tmp_path / "g.jsonl"))
