"""Misbehaving bots as real subprocesses, in real matches.

Every failure mode has a tiny bot in tests/bots/. Each test plays a short
match (Chicago to 10 points, 0.4-1 s per decision) against the random sample
bot and checks: the match finishes, the right reason code is recorded with
the offending text, the other bots get the right result, a bot that died is
restarted for the next game, and no process is left behind. Each bot gets a
unique marker string as its first argument (children copy it into their own
command lines), so leftovers are found by scanning /proc.

Real clocks only (no autojump: real pipes are in flight), with generous outer
bounds so a loaded machine does not cause false failures.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio
from logfiles import read_json_log
from needs import needs_proc
from paths import RANDOM_BOT, ROOT, TEST_BOTS
from proctools import alive, proc_state, procs_with
from timing import await_until, scaled

from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.game_spec import FailurePolicy, GameRecord
from referee.play.match import MatchConfig, MatchResult, run_match
from referee.seats.bot_command import BotSpec, resolve_command
from referee.seats.bot_process import start_bot
from referee.seats.guardian import GUARDIAN

pytestmark = needs_proc

GAME = get_game("chicago")
TARGET = 10
RULES = build_rules(GAME, None, {"target_score": TARGET})
TC = TimeControl(decision_ms=1000, startup_ms=5000)  # roomy: only the bot under test should fail
TC_FAST = TimeControl(decision_ms=400, startup_ms=5000)  # where a test waits for the limit
MATCH_BOUND_S = scaled(30.0)  # outer bound for one short match


# ------------------------------------------------------------------ processes


def new_marker() -> str:
    return f"refmark-{uuid.uuid4().hex}"


def my_children() -> set[int]:
    me = os.getpid()
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = proc_state(int(entry.name))
            if st is not None and st[1] == me and st[0] not in ("Z", "X"):
                out.add(int(entry.name))
    return out


def guardian_pid() -> int | None:
    proc = GUARDIAN._proc
    return None if proc is None else proc.pid


async def wait_gone(pids_fn: Any, within: float = 3.0) -> list[int]:
    """Poll until `pids_fn()` is empty (SIGKILLed processes take a moment)."""
    await await_until(lambda: not pids_fn(), within)
    return pids_fn()


async def assert_nothing_left(marker: str, children_before: set[int]) -> None:
    assert await wait_gone(lambda: procs_with(marker)) == []
    extra = lambda: sorted(my_children() - children_before - {guardian_pid()})  # noqa: E731
    assert await wait_gone(extra) == []


def read_pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


# ------------------------------------------------------------------ matches


def bot(name: str, marker: str, *options: str) -> BotSpec:
    return resolve_command([str(TEST_BOTS / f"{name}.py"), marker, *options], name=name)


def random_bot(marker: str, name: str = "random") -> BotSpec:
    return resolve_command([str(RANDOM_BOT), marker], name=name)


class Played:
    """A finished match with the checks every test wants."""

    def __init__(self, result: MatchResult, elapsed: float, marker: str) -> None:
        self.result = result
        self.records = result.records
        self.elapsed = elapsed
        self.marker = marker


async def play(
    bots: list[BotSpec], marker: str, games: int | None = None, tc: TimeControl = TC, **config: Any
) -> Played:
    children = my_children()
    cfg = MatchConfig(game=GAME, rules=RULES, bots=bots, games=games or len(bots), seed=2024, time_control=tc, **config)
    t0 = time.monotonic()
    with trio.fail_after(MATCH_BOUND_S):
        result = await run_match(cfg)
    played = Played(result, time.monotonic() - t0, marker)
    assert len(played.records) == cfg.n_sets * cfg.set_size
    await assert_nothing_left(marker, children)
    return played


def seat_of(rec: GameRecord, name: str) -> int:
    return rec.seat_names.index(name)


def reasons(rec: GameRecord, seat: int) -> list[str]:
    return [f.reason for f in rec.failures if f.seat == seat]


def assert_clean(rec: GameRecord) -> None:
    """A normal game: no failures, played to the end by the engine's rules."""
    assert rec.failures == [] and rec.forfeited == []
    assert rec.reason != "forfeit"
    assert max(rec.scores) >= TARGET


def assert_forfeit_2(rec: GameRecord, bad_name: str, reason: str) -> GameRecord:
    """2 seats: the offender's first failure is `reason`; the other bot wins by forfeit."""
    bad = seat_of(rec, bad_name)
    good = 1 - bad
    assert reasons(rec, bad)[:1] == [reason], rec.failures
    assert reasons(rec, good) == []
    assert rec.forfeited == [bad]
    assert rec.reason == "forfeit"
    assert rec.winner == good
    assert rec.placements == ([1, 2] if good == 0 else [2, 1])
    return rec


def failure_records(rec: GameRecord) -> list[dict[str, Any]]:
    assert rec.log_path is not None
    return [r for _, r in read_json_log(Path(rec.log_path))[1] if r["type"] == "failure"]


# ------------------------------------------------------------------ startup


async def test_bot_that_exits_before_hello(tmp_path: Path) -> None:
    m = new_marker()
    pids = tmp_path / "pids"
    played = await play([bot("exit_at_once", m, f"pidfile={pids}"), random_bot(m)], m, log_dir=tmp_path / "logs")
    for rec in played.records:
        assert_forfeit_2(rec, "exit_at_once", "startup_failure")
        assert rec.decisions == 0
        assert "(exit code 3)" in rec.failures[0].message
        (fail,) = failure_records(rec)
        assert "giving up before hello" in fail["detail"]
    assert len(read_pids(pids)) == 2  # started again for the second game


async def test_bot_that_never_answers_hello(tmp_path: Path) -> None:
    m = new_marker()
    pids = tmp_path / "pids"
    tc = TimeControl(decision_ms=1000, startup_ms=800)
    played = await play([bot("silent", m, f"pidfile={pids}"), random_bot(m)], m, tc=tc)
    for rec in played.records:
        assert_forfeit_2(rec, "silent", "startup_failure")
        assert "no hello reply within the 800 ms startup limit (" in rec.failures[0].message
        assert "s after the process started)" in rec.failures[0].message
        waited = float(rec.failures[0].message.split("limit (", 1)[1].split(" s after", 1)[0])
        assert waited >= 0.8  # how long it really waited, from the process's start
    assert len(read_pids(pids)) == 2
    assert played.elapsed < 2 * 0.8 + 2 * 0.5 + scaled(5)  # two startup limits, two grace periods, slack


# ------------------------------------------------------------------ crashes


async def test_bot_that_exits_mid_game_is_restarted(tmp_path: Path) -> None:
    m = new_marker()
    pids = tmp_path / "pids"
    played = await play(
        [bot("exit_mid_game", m, "after=3", f"pidfile={pids}"), random_bot(m)], m, log_dir=tmp_path / "logs"
    )
    for rec in played.records:
        assert_forfeit_2(rec, "exit_mid_game", "crash")
        assert rec.decisions >= 2  # it played two decisions before dying on the third
        assert "(exit code 7)" in rec.failures[0].message
        (fail,) = failure_records(rec)
        assert "exit_mid_game: crashing on request" in fail["detail"]  # its stderr
    assert len(read_pids(pids)) == 2  # restarted for game 2, which it played until it crashed


@pytest.mark.parametrize(
    ("name", "options", "reason", "starts"),
    [
        ("exit_mid_game", ["after=3"], "crash", 3),  # restarted for every game
        ("sleeper", ["sleep=0.6", "on=0"], "timeout", 1),  # late replies are stale in the next game: kept
        ("illegal", ["on=0"], "illegal_action", 1),  # the stream is fine: kept
    ],
)
async def test_three_seats_offender_ranked_last(
    name: str, options: list[str], reason: str, starts: int, tmp_path: Path
) -> None:
    m = new_marker()
    pids = tmp_path / "pids"
    played = await play(
        [bot(name, m, *options, f"pidfile={pids}"), random_bot(m, "r1"), random_bot(m, "r2")], m, tc=TC_FAST
    )
    for rec in played.records:
        bad = seat_of(rec, name)
        others = [s for s in range(3) if s != bad]
        assert reasons(rec, bad) == [reason]
        assert rec.forfeited == [bad]
        assert rec.placements[bad] == 3
        assert sorted(rec.placements[s] for s in others) in ([1, 2], [1, 1])
        assert rec.winner in (*others, None)
        assert max(rec.scores) >= TARGET  # played to the end with default actions
        assert rec.decisions > 9
    assert len(read_pids(pids)) == starts


# ------------------------------------------------------------------ time


async def test_timeout_forfeits_and_late_reply_does_not_leak_into_next_game(tmp_path: Path) -> None:
    # The bot answers its first request 200 ms late, i.e. while game 2 is
    # already running. Game 2 must not take that answer for one of its own:
    # request ids run on through the match, so it is stale there and dropped,
    # and game 2 is a clean game for the same process.
    m = new_marker()
    pids = tmp_path / "pids"
    once = tmp_path / "slept"
    played = await play(
        [bot("sleeper", m, "sleep=0.6", f"once={once}", f"pidfile={pids}"), random_bot(m)],
        m,
        tc=TC_FAST,
        log_dir=tmp_path / "logs",
    )
    first, second = played.records
    assert_forfeit_2(first, "sleeper", "timeout")
    assert "within 400 ms" in first.failures[0].message
    (fail,) = failure_records(first)
    assert "sleeper: sleeping" in fail["detail"]  # its stderr tail
    assert_clean(second)
    assert len(read_pids(pids)) == 1
    second_log = [r for _, r in read_json_log(Path(second.log_path or ""))[1]]
    bad = seat_of(second, "sleeper")
    assert any(r["type"] == "recv" and r["seat"] == bad and r.get("unsolicited") for r in second_log)


async def test_timeout_under_substitute_drops_the_late_reply(tmp_path: Path) -> None:
    # 800 ms on its second request (limit 600 ms): one strike, the referee
    # plays for it, the late reply is dropped when request 3 is answered.
    m = new_marker()
    pids = tmp_path / "pids"
    once = tmp_path / "slept"
    tc = TimeControl(decision_ms=600, startup_ms=5000)
    played = await play(
        [bot("sleeper", m, "sleep=0.8", "on=2", f"once={once}", f"pidfile={pids}"), random_bot(m)],
        m,
        tc=tc,
        policy=FailurePolicy(mode="substitute", max_strikes=3),
        log_dir=tmp_path / "logs",
    )
    first, second = played.records
    bad = seat_of(first, "sleeper")
    assert [(f.seat, f.reason) for f in first.failures] == [(bad, "timeout")]
    assert first.forfeited == [] and first.reason != "forfeit" and max(first.scores) >= TARGET
    assert_clean(second)
    assert len(read_pids(pids)) == 1  # it caught up in game 1: no restart needed
    log = [r for _, r in read_json_log(Path(first.log_path or ""))[1]]
    sources = [r["source"] for r in log if r["type"] == "action" and r["seat"] == bad]
    assert sources.count("default") == 1


async def test_bot_ignoring_sigterm_and_eof_is_killed_promptly() -> None:
    m = new_marker()
    played = await play([bot("immortal", m, "child=1"), random_bot(m)], m)
    for rec in played.records:
        assert_clean(rec)
    assert played.elapsed < scaled(8)  # one grace period at the end, not a 5 s SIGTERM wait per bot


async def test_a_send_cut_short_while_the_pipe_is_full_resumes_without_duplicates() -> None:
    # The game's deadline can interrupt a request while the bot's stdin is
    # full; the rest must go out once, on the next flush, and nothing twice.
    payload = os.urandom(1_000_000) + b"\n"  # far more than a pipe holds
    reader = (
        f"import sys, time, hashlib; time.sleep(0.5); d = sys.stdin.buffer.read({len(payload)}); "
        "print(len(d), hashlib.sha256(d).hexdigest(), flush=True)"
    )
    async with trio.open_nursery() as nursery:
        proc = await start_bot(nursery, BotSpec(name="slow-reader", argv=(sys.executable, "-c", reader)))
        try:
            with trio.move_on_after(0.1) as cut_short:
                await proc.send(payload)
            assert cut_short.cancelled_caught  # the pipe was full: the send was waiting
            with trio.fail_after(scaled(20)):
                await proc.flush()
                line = await proc.receive_line()
            assert line.decode().split() == [str(len(payload)), hashlib.sha256(payload).hexdigest()]
        finally:
            await proc.close()


# ------------------------------------------------------------------ protocol violations


async def test_non_json_reply(tmp_path: Path) -> None:
    m = new_marker()
    pids = tmp_path / "pids"
    played = await play([bot("non_json", m, f"pidfile={pids}"), random_bot(m)], m, log_dir=tmp_path / "logs")
    first, second = played.records
    assert_forfeit_2(first, "non_json", "malformed_json")
    (fail,) = failure_records(first)
    assert fail["detail"] == "NOT-JSON: I play the ace of spades {"
    assert_clean(second)  # only its first request was answered badly
    assert len(read_pids(pids)) == 1  # the line stream is intact: no restart


async def test_ten_megabyte_line_without_newline(tmp_path: Path) -> None:
    m = new_marker()
    pids = tmp_path / "pids"
    played = await play([bot("long_line", m, f"pidfile={pids}"), random_bot(m)], m, log_dir=tmp_path / "logs")
    for rec in played.records:
        assert_forfeit_2(rec, "long_line", "line_too_long")
        (fail,) = failure_records(rec)
        assert fail["detail"].startswith("LONGLINExxxx")
        assert len(fail["detail"]) < 1000  # cut, not 10 MB in the log
    assert len(read_pids(pids)) == 2  # the stream is unusable: restarted
    assert played.elapsed < scaled(10)


async def test_stderr_flood_does_not_block_or_slow_the_match() -> None:
    m = new_marker()
    t0 = time.monotonic()
    await play([random_bot(m, "r1"), random_bot(m, "r2")], m)
    baseline = time.monotonic() - t0
    played = await play([bot("stderr_flood", m, "bytes=262144"), random_bot(m)], m)
    for rec in played.records:
        assert_clean(rec)  # no timeouts: stderr was drained all along
    assert played.elapsed < baseline + scaled(5)


async def test_stale_request_id(tmp_path: Path) -> None:
    m = new_marker()
    played = await play([bot("stale_id", m, "on=0"), random_bot(m)], m, tc=TC_FAST, log_dir=tmp_path / "logs")
    for rec in played.records:
        assert_forfeit_2(rec, "stale_id", "stale_id")
        assert "only answered with a stale request id" in rec.failures[0].message
        (fail,) = failure_records(rec)
        assert '"type": "action"' in fail["detail"]  # the stale reply itself


async def test_illegal_action() -> None:
    m = new_marker()
    played = await play([bot("illegal", m), random_bot(m)], m)
    first, second = played.records
    assert_forfeit_2(first, "illegal", "illegal_action")
    assert 'illegal action {"type":"play","card":' in first.failures[0].message
    assert_clean(second)


@pytest.mark.parametrize(
    ("kind", "text"),
    [("unknown_field", "unknown field `confidence`"), ("wrong_type", "`id` must be a whole number, not a string")],
)
async def test_schema_violation(kind: str, text: str, tmp_path: Path) -> None:
    m = new_marker()
    played = await play([bot("schema_violation", m, f"kind={kind}"), random_bot(m)], m, log_dir=tmp_path / "logs")
    first, second = played.records
    assert_forfeit_2(first, "schema_violation", "schema_violation")
    assert text in first.failures[0].message
    (fail,) = failure_records(first)
    assert '"type": "action"' in fail["detail"]
    assert_clean(second)


# ------------------------------------------------------------------ policy


async def test_substitute_policy_strike_limit(tmp_path: Path) -> None:
    m = new_marker()
    played = await play(
        [bot("illegal", m, "on=0"), random_bot(m)],
        m,
        policy=FailurePolicy(mode="substitute", max_strikes=2),
        log_dir=tmp_path / "logs",
    )
    for rec in played.records:
        bad = seat_of(rec, "illegal")
        assert reasons(rec, bad) == ["illegal_action"] * 3 + ["strike_limit"]
        assert rec.forfeited == [bad] and rec.winner == 1 - bad and rec.reason == "forfeit"
        header, records = read_json_log(Path(rec.log_path or ""))
        assert header.failure_policy == {"mode": "substitute", "max_strikes": 2}
        log = [r for _, r in records]
        sources = [r["source"] for r in log if r["type"] == "action" and r["seat"] == bad]
        assert sources == ["default", "default"]  # the third strike forfeits before acting


async def test_substitute_policy_single_strike_game_goes_on() -> None:
    m = new_marker()
    played = await play(
        [bot("illegal", m, "on=1"), random_bot(m)], m, policy=FailurePolicy(mode="substitute", max_strikes=1)
    )
    first, second = played.records
    bad = seat_of(first, "illegal")
    assert [(f.seat, f.reason) for f in first.failures] == [(bad, "illegal_action")]
    assert first.forfeited == [] and first.reason != "forfeit" and max(first.scores) >= TARGET
    assert_clean(second)


# ------------------------------------------------------------------ logs


async def test_log_file_holds_the_failure(tmp_path: Path) -> None:
    m = new_marker()
    log_dir = tmp_path / "logs"
    played = await play([random_bot(m), bot("exit_mid_game", m, "after=2")], m, log_dir=log_dir)
    files = sorted(log_dir.glob("*.jsonl"))
    assert [str(f) for f in files] == [r.log_path for r in played.records]
    for rec, path in zip(played.records, files):
        header, records = read_json_log(path)
        bad = seat_of(rec, "exit_mid_game")
        assert header.failure_policy == {"mode": "forfeit", "max_strikes": 3}
        assert header.players[bad].argv[-2:] == [m, "after=2"]
        (fail,) = [r for _, r in records if r["type"] == "failure"]
        assert fail["seat"] == bad and fail["reason"] == "crash" and "exit code 7" in fail["message"]
        assert "crashing on request" in fail["detail"]
        result = records[-1][1]
        assert result["type"] == "result" and result["forfeited"] == [bad]
        assert result["failures"] == [{"seat": bad, "reason": "crash", "message": fail["message"]}]


# ------------------------------------------------------------------ children and cleanup


@pytest.mark.parametrize("mode", ["child", "shell"])
async def test_forked_children_are_killed_with_the_bot(mode: str, tmp_path: Path) -> None:
    m = new_marker()
    children = tmp_path / "children"
    played = await play([bot("forker", m, f"mode={mode}", f"children={children}"), random_bot(m)], m)
    for rec in played.records:
        assert_clean(rec)
    (child,) = read_pids(children)
    assert not alive(child)


async def test_child_that_leaves_the_group_is_killed_and_does_not_hang_the_match(tmp_path: Path) -> None:
    # A child in its own session is not killed with the bot's group, and it
    # keeps the bot's stderr open. The match must still end (it used to wait
    # forever for that stderr to close), and the child must be gone after it:
    # the tag in its inherited environment gives it away.
    m = new_marker()
    children = tmp_path / "children"
    cfg = MatchConfig(
        game=GAME,
        rules=RULES,
        bots=[bot("escaper", m, f"children={children}"), random_bot(m)],
        games=2,
        seed=3,
        time_control=TC,
    )
    try:
        with trio.fail_after(MATCH_BOUND_S):
            result = await run_match(cfg)
        for rec in result.records:
            assert_clean(rec)
        escaped = read_pids(children)
        assert len(escaped) >= 1
        assert await wait_gone(lambda: [p for p in escaped if alive(p)]) == []
    finally:
        for pid in read_pids(children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert await wait_gone(lambda: procs_with(m)) == []


async def test_no_file_descriptor_leak() -> None:
    m = new_marker()
    await play([random_bot(m, "r1"), random_bot(m, "r2")], m)  # warm-up: the guardian is running now
    before = sorted(os.listdir("/proc/self/fd"))
    await play([bot("exit_mid_game", m, "after=2"), bot("long_line", m), random_bot(m)], m)
    after = sorted(os.listdir("/proc/self/fd"))
    assert after == before


@pytest.mark.parametrize("kind", ["immortal.py {m} child=1", "escaper.py {m}"])
async def test_guardian_kills_bots_when_the_referee_is_sigkilled(kind: str, tmp_path: Path) -> None:
    # The immortal bots ignore SIGTERM and end of input, and each has a child;
    # the escapers' children left their process groups. Only the guardian can
    # clean up once the referee dies without a chance to.
    m = new_marker()
    bot_cmd = str(TEST_BOTS / kind.format(m=m))
    referee = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "referee.cli",
            "match",
            bot_cmd,
            bot_cmd,
            "--games",
            "500",
            "--rule",
            "target_score=52",
            "-t",
            "decision=2s,startup=10s",
            "--seed",
            "1",
        ],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=tmp_path.joinpath("err").open("wb"),
    )
    try:

        def running() -> list[int]:
            assert referee.poll() is None, tmp_path.joinpath("err").read_text()
            found = [p for p in procs_with(m) if p != referee.pid]
            return found if len(found) == 4 else []

        bots = await await_until(running, 20, every=0.1)
        assert len(bots) == 4, "two bots and their two children should be running"
        await trio.sleep(0.3)  # mid-match
        referee.send_signal(signal.SIGKILL)
        referee.wait(scaled(5))
        assert await wait_gone(lambda: [p for p in bots if alive(p)], within=5.0) == []
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
        for pid in procs_with(m):  # only if the test failed
            os.kill(pid, signal.SIGKILL)
