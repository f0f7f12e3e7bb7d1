"""Transport and protocol logic without subprocesses.

`LineReader` runs on trio's in-memory streams; `GameRunner` runs against
fake bots (BotProcess look-alikes over in-memory streams) whose replies are
scripted per request, so request ids, stale replies, decode errors, the
failure policy and the clock can be checked exactly. Timeouts use the
autojump clock, which is safe here because no real I/O is in flight.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st
from logfiles import read_json_log
from timing import scaled

from protocol.messages import TimeControl
from referee.errors import BotCrashed, ProtocolViolation
from referee.games import get_game
from referee.games.rules import build_rules
from referee.logs.gamelog import GameLogWriter
from referee.logs.records import PlayerInfo
from referee.play.bench import game_stream
from referee.play.game_spec import FailurePolicy, GameRecord, GameSpec
from referee.play.match import MatchConfig
from referee.play.runner import GameRunner
from referee.seats.bot_command import BotSpec
from referee.seats.line_reader import LineReader
from referee.seats.seat import Unmetered

GAME = get_game("chicago")
RULES = build_rules(GAME, None, {"target_score": 10})
TC = TimeControl(decision_ms=300, startup_ms=1000)


# ------------------------------------------------------------------ LineReader


class ChunkStream(trio.abc.ReceiveStream):
    """Yields exactly the given chunks (boundaries kept), then EOF or nothing."""

    def __init__(self, chunks: list[bytes], eof: bool = True) -> None:
        self.chunks = list(chunks)
        self.eof = eof

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        if self.chunks:
            return self.chunks.pop(0)
        if not self.eof:
            await trio.sleep_forever()
        return b""

    async def aclose(self) -> None:
        pass


def reader_over(chunks: list[bytes], max_len: int = 1024, eof: bool = True) -> LineReader:
    return LineReader(ChunkStream(chunks, eof), max_len=max_len)


async def read_all(reader: LineReader) -> list[bytes]:
    lines = []
    while True:
        try:
            lines.append(await reader.receive_line())
        except BotCrashed:
            return lines


async def test_line_split_across_chunks() -> None:
    r = reader_over([b'{"a":', b"1", b"}\n{", b'"b":2}', b"\n"])
    assert await r.receive_line() == b'{"a":1}'
    assert await r.receive_line() == b'{"b":2}'
    with pytest.raises(BotCrashed):
        await r.receive_line()


async def test_several_lines_in_one_chunk() -> None:
    r = reader_over([b"one\ntwo\nthree\n"])
    assert [await r.receive_line() for _ in range(3)] == [b"one", b"two", b"three"]


async def test_crlf_is_stripped_even_when_split() -> None:
    r = reader_over([b"alpha\r\nbeta\r", b"\ngamma\n"])
    assert await read_all(r) == [b"alpha", b"beta", b"gamma"]


async def test_empty_lines_are_lines() -> None:
    r = reader_over([b"\n\nx\n"])
    assert await read_all(r) == [b"", b"", b"x"]


async def test_over_long_line_without_newline() -> None:
    r = reader_over([b"x" * 600, b"y" * 600], max_len=1000, eof=False)
    with trio.fail_after(scaled(1)):
        with pytest.raises(ProtocolViolation) as info:
            await r.receive_line()
    assert info.value.reason == "line_too_long"
    assert info.value.detail == "x" * 200  # the head of the line, cut


async def test_over_long_line_with_its_newline_in_the_same_chunk() -> None:
    # The limit holds whether or not the newline arrived in the same chunk.
    r = reader_over([b"z" * 1500 + b"\n"], max_len=1000)
    with pytest.raises(ProtocolViolation) as info:
        await r.receive_line()
    assert info.value.reason == "line_too_long"


async def test_line_of_exactly_max_len_is_accepted() -> None:
    r = reader_over([b"a" * 1000 + b"\n" + b"b" * 1001 + b"\n"], max_len=1000)
    assert await r.receive_line() == b"a" * 1000
    with pytest.raises(ProtocolViolation):
        await r.receive_line()


async def test_eof_mid_line_is_a_crash_with_the_partial_line() -> None:
    r = reader_over([b"complete\n", b'{"type":"act'])
    assert await r.receive_line() == b"complete"
    with pytest.raises(BotCrashed) as info:
        await r.receive_line()
    assert info.value.reason == "crash"
    assert info.value.detail == '{"type":"act'


async def test_eof_at_a_line_boundary_is_a_crash() -> None:
    r = reader_over([])
    with pytest.raises(BotCrashed):
        await r.receive_line()


async def test_broken_stream_is_a_crash() -> None:
    class Broken(trio.abc.ReceiveStream):
        async def receive_some(self, max_bytes: int | None = None) -> bytes:
            raise trio.BrokenResourceError

        async def aclose(self) -> None:
            pass

    with pytest.raises(BotCrashed):
        await LineReader(Broken()).receive_line()


async def test_reader_on_real_memory_stream_pair() -> None:
    send, receive = trio.testing.memory_stream_one_way_pair()
    r = LineReader(receive, max_len=64)
    async with trio.open_nursery() as nursery:

        async def writer() -> None:
            for part in (b"he", b"llo\nwor", b"ld\r\n", b"x" * 100):
                await send.send_all(part)
                await trio.sleep(0.01)

        nursery.start_soon(writer)
        assert await r.receive_line() == b"hello"
        assert await r.receive_line() == b"world"
        with pytest.raises(ProtocolViolation):
            await r.receive_line()


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")), max_size=12),
    crlf=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=20),
)
def test_any_chunking_gives_the_same_lines(lines: list[bytes], crlf: bool, cuts: list[int]) -> None:
    data = b"".join(line + (b"\r\n" if crlf else b"\n") for line in lines)
    points = sorted({c for c in cuts if c < len(data)} | {0, len(data)})
    chunks = [data[a:b] for a, b in itertools.pairwise(points) if data[a:b]]
    assert trio.run(read_all, reader_over(chunks, max_len=64)) == lines


# ------------------------------------------------------------------ fake bots for GameRunner

Script = Callable[[int, dict[str, Any]], "bytes | Crash | Hang | Later | None"]


class Crash:
    """Script result: close the bot's stdout (it "exits")."""


@dataclass
class Later:
    """Script result: these bytes, `seconds` after the request (a slow bot)."""

    seconds: float
    data: bytes


class Hang:
    """Script result: never read stdin again (the referee's sends block)."""


def first_legal(n: int, msg: dict[str, Any]) -> bytes:
    return reply(msg["id"], msg["legal"][0])


def reply(rid: Any, action: Any, **extra: Any) -> bytes:
    return json.dumps({"type": "action", "id": rid, "action": action, **extra}).encode() + b"\n"


class FakeBot(Unmetered):
    """Quacks like BotProcess for GameRunner. Each request goes to `script`
    (n = 1-based request count of this bot), whose bytes become the bot's
    stdout, read back through a real LineReader."""

    def __init__(self, script: Script = first_legal, max_len: int = 4096) -> None:
        self.script = script
        self.dead = False
        self.received: list[dict[str, Any]] = []
        self.requests = 0
        self.hung = False
        self.due: tuple[float, bytes] | None = None  # a Later reply: when, and what
        self.queued = bytearray()
        self.crash = False
        self.late_id = 0
        self._out, receive = trio.testing.memory_stream_one_way_pair()
        self.reader = LineReader(receive, max_len=max_len)

    async def send(self, data: bytes | bytearray) -> None:
        """Like BotProcess.send, resumable: what the bot writes back waits in
        `queued` until `flush` hands it over in one piece."""
        self.send_nowait(data)
        await self.flush()

    def send_nowait(self, data: bytes | bytearray) -> bool:
        """Reads the messages at once; its replies always wait for `flush`."""
        if self.hung:
            return False
        for line in data.splitlines():
            msg = json.loads(line)
            self.received.append(msg)
            if msg["type"] != "request":
                continue
            self.requests += 1
            out = self.script(self.requests, msg)
            if isinstance(out, Crash):
                self.crash = True
            elif isinstance(out, Later):
                self.due = (trio.current_time() + out.seconds, out.data)
            elif isinstance(out, Hang):
                self.hung = True
            elif out:
                self.queued += out
        return False

    async def flush(self) -> None:
        if self.hung:
            await trio.sleep_forever()
        if self.queued:
            await self._out.send_all(bytes(self.queued))  # cancelled, it has taken nothing
            self.queued.clear()
        if self.crash:
            await self._out.aclose()

    def ready_lines(self, max_bytes: int, max_lines: int) -> list[bytes]:
        return self.reader.ready_lines(max_bytes, max_lines)

    async def receive_line(self) -> bytes:
        if self.due is not None:
            when, data = self.due
            await trio.sleep_until(when)  # cancelled, it stays due
            self.due = None
            await self._out.send_all(data)
        try:
            return await self.reader.receive_line()
        except BotCrashed:
            self.dead = True
            raise

    def stderr_text(self, limit: int = 2000) -> str:
        return "fake stderr tail"

    def exit_note(self) -> str:
        return " (exit code 9)"

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["type"] == kind]


async def run_game(
    bots: list[FakeBot],
    policy: FailurePolicy | None = None,
    tc: TimeControl = TC,
    log_path: Path | None = None,
    seed: int = 11,
    rules: Any = RULES,
) -> GameRecord:
    spec = GameSpec(
        game=GAME,
        rules=rules,
        n_players=len(bots),
        seed=seed,
        game_id=1,
        time_control=tc,
        policy=policy or FailurePolicy(),
    )
    names = [f"bot{i}" for i in range(len(bots))]
    runner = GameRunner(spec, bots, names, GameLogWriter(log_path))  # type: ignore[arg-type]
    players = [PlayerInfo(seat=i, name=n, argv=["fake"]) for i, n in enumerate(names)]
    with trio.fail_after(scaled(60)):
        return await runner.run(players, {})


def reasons(rec: GameRecord, seat: int) -> list[str]:
    return [f.reason for f in rec.failures if f.seat == seat]


def assert_forfeit_2(rec: GameRecord, bad: int, reason: str) -> None:
    good = 1 - bad
    assert reasons(rec, bad)[0] == reason
    assert reasons(rec, good) == []
    assert rec.forfeited == [bad]
    assert rec.reason == "forfeit"
    assert rec.winner == good
    assert rec.placements[good] == 1 and rec.placements[bad] == 2


def log_records(path: Path) -> list[dict[str, Any]]:
    return [rec for _, rec in read_json_log(path)[1]]


def on(k: int, bad: Callable[[dict[str, Any]], Any]) -> Script:
    """Script: `bad(msg)` for this bot's k-th request, first-legal otherwise."""

    def script(n: int, msg: dict[str, Any]) -> Any:
        return bad(msg) if n == k else first_legal(n, msg)

    return script


# ------------------------------------------------------------------ GameRunner: ids and decoding


async def test_well_behaved_bots_ids_are_echoed_and_increasing() -> None:
    bots = [FakeBot(), FakeBot()]
    rec = await run_game(bots)
    assert rec.failures == [] and rec.forfeited == [] and rec.reason != "forfeit"
    ids = sorted(m["id"] for b in bots for m in b.of_type("request"))
    assert ids == list(range(1, len(ids) + 1))
    assert rec.decisions == len(ids)
    for b in bots:
        assert next(m["type"] for m in b.received) == "game_start"
        assert b.received[-1]["type"] == "game_over"
        assert not b.dead


async def test_stale_reply_is_dropped_then_the_right_reply_counts(tmp_path: Path) -> None:
    # Request 2 of seat 0: a late answer to an earlier id arrives first.
    bots = [FakeBot(on(2, lambda m: reply(m["id"] - 1, m["legal"][0]) + reply(m["id"], m["legal"][0]))), FakeBot()]
    rec = await run_game(bots, log_path=tmp_path / "g.jsonl")
    assert rec.failures == [] and rec.reason != "forfeit"
    recv = [r for r in log_records(tmp_path / "g.jsonl") if r["type"] == "recv" and r["seat"] == 0]
    second = bots[0].of_type("request")[1]["id"]
    assert any(json.loads(r["line"])["id"] == second - 1 for r in recv)  # the stale line is logged


async def test_only_stale_replies_is_stale_id_after_the_limit(autojump_clock: Any, tmp_path: Path) -> None:
    bots = [FakeBot(on(1, lambda m: reply(m["id"] - 1, m["legal"][0]))), FakeBot()]
    rec = await run_game(bots, log_path=tmp_path / "g.jsonl")
    assert_forfeit_2(rec, 0, "stale_id")
    fail = next(r for r in log_records(tmp_path / "g.jsonl") if r["type"] == "failure")
    first = bots[0].of_type("request")[0]["id"]
    assert json.loads(fail["detail"])["id"] == first - 1  # the offending (stale) line


async def test_reply_id_from_the_future_is_stale_id() -> None:
    bots = [FakeBot(), FakeBot(on(1, lambda m: reply(m["id"] + 5, m["legal"][0])))]
    rec = await run_game(bots)
    assert_forfeit_2(rec, 1, "stale_id")
    assert "never issued" in rec.failures[0].message


@pytest.mark.parametrize(
    ("line", "reason", "text"),
    [
        (b"this is not json\n", "malformed_json", "reply is not JSON; it looks like text printed to stdout"),
        (b'{"type": "action", "id": 1\n', "malformed_json", "reply is not valid JSON: it ends before the JSON does"),
        (b"\xff\xfe garbage\n", "malformed_json", "reply is not UTF-8: byte 0xff at offset 0"),
        (
            b'{"type": "action", "id": "1", "action": {"type": "exchange", "discard": []}}\n',
            "schema_violation",
            "`id` must be a whole number, not a string",
        ),
        (
            b'{"type": "action", "id": 1, "action": {"type": "exchange", "discard": []}, "x": 1}\n',
            "schema_violation",
            "unknown field `x`",
        ),
        (b'{"type": "action", "id": 1, "action": {"type": "teleport"}}\n', "schema_violation", "teleport"),
        (b'{"type": "action", "id": 1, "action": {"type": "play", "card": "Xx"}}\n', "schema_violation", "card"),
        (b'{"type": "shrug", "id": 1}\n', "schema_violation", "shrug"),
        (b'{"type": "hello", "name": "again"}\n', "unexpected_message", "'hello'"),
        (b"[1, 2, 3]\n", "schema_violation", "the reply must be an object, not a list"),
    ],
)
async def test_decode_errors_map_to_reason_codes(line: bytes, reason: str, text: str, tmp_path: Path) -> None:
    bots = [FakeBot(on(1, lambda m: line)), FakeBot()]
    rec = await run_game(bots, log_path=tmp_path / "g.jsonl")
    assert_forfeit_2(rec, 0, reason)
    assert text in rec.failures[0].message
    fail = next(r for r in log_records(tmp_path / "g.jsonl") if r["type"] == "failure")
    assert fail["detail"] == line.rstrip(b"\n").decode("utf-8", "replace")


async def test_illegal_action_names_the_action() -> None:
    def bad(m: dict[str, Any]) -> bytes:
        hand = set(m["view"]["hand"])
        card = next(r + s for s in "shdc" for r in "23456789TJQKA" if r + s not in hand)
        return reply(m["id"], {"type": "play", "card": card})

    bots = [FakeBot(on(1, bad)), FakeBot()]
    rec = await run_game(bots)
    assert_forfeit_2(rec, 0, "illegal_action")
    assert '"type":"play"' in rec.failures[0].message


async def test_eof_is_a_crash_and_fatal_even_under_substitute() -> None:
    bots = [FakeBot(), FakeBot(on(2, lambda m: Crash()))]
    rec = await run_game(bots, policy=FailurePolicy(mode="substitute", max_strikes=5))
    assert_forfeit_2(rec, 1, "crash")
    assert "(exit code 9)" in rec.failures[0].message
    assert bots[1].dead
    assert bots[1].of_type("game_over") == []  # nothing more is written to a dead bot


async def test_over_long_reply_is_fatal_even_under_substitute(tmp_path: Path) -> None:
    bots = [FakeBot(on(1, lambda m: b"{" + b"x" * 10_000)), FakeBot()]
    rec = await run_game(bots, policy=FailurePolicy(mode="substitute", max_strikes=5), log_path=tmp_path / "g.jsonl")
    assert_forfeit_2(rec, 0, "line_too_long")
    assert bots[0].dead
    fail = next(r for r in log_records(tmp_path / "g.jsonl") if r["type"] == "failure")
    assert fail["detail"] == "{" + "x" * 199


async def test_timeout_forfeits_and_the_late_bot_keeps_running(autojump_clock: Any) -> None:
    bots = [FakeBot(on(3, lambda m: None)), FakeBot()]
    rec = await run_game(bots)
    assert_forfeit_2(rec, 0, "timeout")
    assert "within 300 ms" in rec.failures[0].message
    # Request ids run on through a match, so a reply still in flight is stale in
    # the next game and dropped there: no restart is needed.
    assert not bots[0].dead
    assert not bots[1].dead


async def test_slow_replies_within_the_limit_are_never_timeouts(autojump_clock: Any, tmp_path: Path) -> None:
    # Every reply takes 2/3 of the limit, so the game's scope deadline passes
    # during most waits; each time the request in flight must go on waiting.
    slow = lambda n, m: Later(0.2, first_legal(n, m))  # noqa: E731
    bots = [FakeBot(slow), FakeBot(slow)]
    rec = await run_game(bots, log_path=tmp_path / "g.jsonl")
    assert rec.failures == [] and rec.forfeited == [] and rec.reason != "forfeit"
    actions = [r for r in log_records(tmp_path / "g.jsonl") if r["type"] == "action"]
    assert len(actions) == rec.decisions > 20
    assert {a["source"] for a in actions} == {"bot"}
    assert all(a["ms"] == pytest.approx(200, abs=1) for a in actions)


async def test_a_reply_after_the_limit_is_a_timeout_even_after_early_deadlines(autojump_clock: Any) -> None:
    # Fast replies first (the scope deadline is then early for later requests),
    # then one reply that takes longer than the limit: exactly that one times out.
    bots = [
        FakeBot(on(6, lambda m: Later(0.5, reply(m["id"], m["legal"][0])))),
        FakeBot(lambda n, m: Later(0.1, first_legal(n, m))),
    ]
    rec = await run_game(bots, policy=FailurePolicy(mode="substitute", max_strikes=5))
    assert [(f.seat, f.reason) for f in rec.failures] == [(0, "timeout")]
    assert "within 300 ms" in rec.failures[0].message
    assert rec.forfeited == [] and rec.reason != "forfeit"


async def test_a_game_the_referee_plays_alone_lets_other_tasks_run() -> None:
    # Every bot crashes at once; the referee plays the rest of the game for
    # them. That must not hold the event loop (other games' clocks run): a
    # task beside it gets to run every few dozen decisions.
    bots = [FakeBot(on(1, lambda m: Crash())) for _ in range(3)]
    spec = GameSpec(
        game=GAME,
        rules=build_rules(GAME, None, {"target_score": 52}),
        n_players=3,
        seed=11,
        game_id=1,
        time_control=TC,
        policy=FailurePolicy(),
    )
    runner = GameRunner(spec, bots, ["a", "b", "c"], GameLogWriter(None))  # type: ignore[arg-type]
    seen: list[int] = []  # decisions played at each turn of the other task

    async def other_task() -> None:
        while True:
            seen.append(runner.decisions)
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other_task)
        rec = await runner.run([PlayerInfo(seat=i, name=n, argv=["fake"]) for i, n in enumerate("abc")], {})
        seen.append(rec.decisions)  # the stretch up to the end counts too
        nursery.cancel_scope.cancel()
    assert sorted(rec.forfeited) == [0, 1, 2] and rec.decisions > 300
    assert max(b - a for a, b in itertools.pairwise(seen)) <= 80  # a yield every 32; trio may run either task first


async def test_blocked_send_is_a_fatal_timeout(autojump_clock: Any) -> None:
    bots = [FakeBot(on(2, lambda m: Hang())), FakeBot()]
    rec = await run_game(bots, policy=FailurePolicy(mode="substitute", max_strikes=5))
    assert reasons(rec, 0)[0] == "timeout"
    assert rec.forfeited == [0] and rec.winner == 1
    assert bots[0].dead


# ------------------------------------------------------------------ GameRunner: substitute policy


async def test_substitute_late_reply_is_dropped_in_the_next_request(autojump_clock: Any, tmp_path: Path) -> None:
    # Request 2 gets no answer in time; its late answer comes just before the
    # answer to request 3 and must be dropped, not taken for request 3.
    state: dict[str, Any] = {}

    def script(n: int, m: dict[str, Any]) -> bytes | None:
        if n == 2:
            state["late"] = reply(m["id"], m["legal"][0])
            return None
        if n == 3:
            return state["late"] + reply(m["id"], m["legal"][0])
        return first_legal(n, m)

    bots = [FakeBot(script), FakeBot()]
    rec = await run_game(bots, policy=FailurePolicy(mode="substitute", max_strikes=3), log_path=tmp_path / "g.jsonl")
    assert [(f.seat, f.reason) for f in rec.failures] == [(0, "timeout")]
    assert rec.forfeited == [] and rec.reason != "forfeit"
    assert not bots[0].dead  # it caught up: no restart needed
    warnings = bots[0].of_type("warning")
    assert len(warnings) == 1 and warnings[0]["reason"] == "timeout"
    assert warnings[0]["id"] == bots[0].of_type("request")[1]["id"]
    actions = [r for r in log_records(tmp_path / "g.jsonl") if r["type"] == "action" and r["seat"] == 0]
    assert [a["source"] for a in actions[:3]] == ["bot", "default", "bot"]


async def test_substitute_strike_limit(autojump_clock: Any) -> None:
    bots = [FakeBot(), FakeBot(lambda n, m: b"nope\n")]
    rec = await run_game(bots, policy=FailurePolicy(mode="substitute", max_strikes=2))
    assert reasons(rec, 1) == ["malformed_json"] * 3 + ["strike_limit"]
    assert rec.forfeited == [1] and rec.winner == 0 and rec.reason == "forfeit"
    assert len(bots[1].of_type("warning")) == 2  # no warning after the strike that forfeits
    assert not bots[1].dead  # a protocol error does not make the stream unusable


async def test_substitute_zero_strikes_forfeits_at_once() -> None:
    bots = [FakeBot(on(1, lambda m: b"nope\n")), FakeBot()]
    rec = await run_game(bots, policy=FailurePolicy(mode="substitute", max_strikes=0))
    assert reasons(rec, 0) == ["malformed_json", "strike_limit"]
    assert rec.forfeited == [0]


# ------------------------------------------------------------------ GameRunner: three seats


async def test_three_seats_offender_last_game_played_to_the_end(autojump_clock: Any) -> None:
    bots = [FakeBot(), FakeBot(on(2, lambda m: Crash())), FakeBot()]
    rec = await run_game(bots)
    assert reasons(rec, 1) == ["crash"] and rec.forfeited == [1]
    assert rec.placements[1] == 3
    assert sorted(rec.placements[s] for s in (0, 2)) in ([1, 2], [1, 1])
    assert rec.winner in (0, 2, None)
    assert max(rec.scores) >= RULES.target_score  # played to the end by default actions
    assert rec.decisions > 2 * 3
    for b in (bots[0], bots[2]):
        assert b.received[-1]["type"] == "game_over"


async def test_three_seats_two_offenders_first_one_is_last(autojump_clock: Any) -> None:
    bots = [FakeBot(on(3, lambda m: None)), FakeBot(), FakeBot(on(1, lambda m: b"?\n"))]
    rec = await run_game(bots)
    assert rec.forfeited == [2, 0]
    assert rec.placements[2] == 3 and rec.placements[0] == 2 and rec.placements[1] == 1
    assert rec.winner == 1


# ------------------------------------------------------------------ the benchmark's raw stream


@pytest.mark.parametrize("game_name", ["chicago", "ghost_euchre"])
async def test_bench_raw_stream_is_exactly_what_the_referee_sends(game_name: str) -> None:
    # The benchmark's baseline replays pre-encoded requests; they must be the
    # very requests the referee sends in the same games, byte for byte.
    gdef = get_game(game_name)
    rules = build_rules(gdef)
    n = min(gdef.seat_counts)
    names = [f"bot{i}" for i in range(n)]
    # A long limit: a loaded machine must not turn an answer into a timeout
    # (and a default move), which would change the stream.
    tc = TimeControl(decision_ms=30_000, startup_ms=30_000)
    config = MatchConfig(
        game=gdef, rules=rules, bots=[BotSpec(m, (m,)) for m in names], games=1, seed=5, time_control=tc
    )
    for game_id, seed in [(1, 11), (7, 12345)]:
        bots = [FakeBot() for _ in range(n)]
        spec = GameSpec(
            game=gdef, rules=rules, n_players=n, seed=seed, game_id=game_id, time_control=tc, policy=FailurePolicy()
        )
        runner = GameRunner(spec, bots, names, GameLogWriter(None))  # type: ignore[arg-type]
        with trio.fail_after(scaled(600)):
            await runner.run([PlayerInfo(seat=i, name=m, argv=["fake"]) for i, m in enumerate(names)], {})
        sent = sorted(
            ((seat, m) for seat, b in enumerate(bots) for m in b.of_type("request")), key=lambda sm: sm[1]["id"]
        )
        stream = game_stream(config, [(game_id, seed)])
        assert [(seat, json.loads(line)) for _, seat, line in stream] == sent
        assert len(stream) == runner.decisions > 20
        assert not runner.failures  # every answer was in time


async def test_a_short_bank_limit_is_enforced_on_time(autojump_clock: Any, tmp_path: Path) -> None:
    # Seat 0 spends its bank until its limit is shorter than the deadline the
    # game's scope already has (set by seat 1's slower, longer-limit request):
    # its timeout must come at its own limit, not at that later deadline.
    tc = TimeControl(decision_ms=1000, bank_ms=3000, startup_ms=1000)

    def spender(n: int, m: dict[str, Any]) -> Any:
        return None if m["clock"]["decision_ms"] < 500 else Later(0.95, first_legal(n, m))

    bots = [FakeBot(spender), FakeBot(lambda n, m: Later(0.5, first_legal(n, m)))]
    rec = await run_game(
        bots, tc=tc, log_path=tmp_path / "g.jsonl", policy=FailurePolicy(mode="substitute", max_strikes=1000)
    )
    assert rec.failures[0].seat == 0 and rec.failures[0].reason == "timeout"
    limit = next(m["clock"]["decision_ms"] for m in bots[0].of_type("request") if m["clock"]["decision_ms"] < 500)
    assert limit > 0 and f"within {limit} ms" in rec.failures[0].message
    first_default = next(
        r
        for r in log_records(tmp_path / "g.jsonl")
        if r["type"] == "action" and r["seat"] == 0 and r["source"] == "default"
    )
    assert first_default["ms"] == pytest.approx(limit, abs=1)
