"""The protocol reader against hostile bots: real subprocesses, real pipes.

Every bot here is a tiny script in tests/bots/ (prefix `reader_`) that limits
its own CPU, memory and file writes. Each test plays a short real match
(Chicago to 10 points) against the random sample bot and checks: the referee
survives and ends in bounded time, the offender is charged with the right
reason code, the innocent opponent is not charged, every game log verifies,
and no process is left behind. Time limits are generous; no test asserts speed.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio
from logfiles import read_json_log
from needs import needs_proc, needs_sandbox
from paths import RANDOM_BOT, TEST_BOTS
from proctools import procs_with
from timing import await_until, scaled

from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.game_spec import GameRecord
from referee.play.match import MatchConfig, run_match
from referee.play.replies import LOGGED_UNSOLICITED_BYTES, MAX_UNSOLICITED
from referee.replay.verify import verify_file
from referee.seats.bot_command import BotSpec, resolve_command
from referee.seats.sandbox import SandboxLimits

pytestmark = needs_proc

GAME = get_game("chicago")
TARGET = 10
RULES = build_rules(GAME, None, {"target_score": TARGET})
TC = TimeControl(decision_ms=1000, startup_ms=5000)
MATCH_BOUND_S = 40.0
SANDBOX = SandboxLimits(memory_mb=256, processes=16, cpu_s=60, file_size_mb=1, open_files=64, scratch_mb=8)
LOG_BOUND = 2 * 1024 * 1024  # a short game logs ~50 KiB; a flood must not add more than its budget


def marker() -> str:
    return f"refmark-{uuid.uuid4().hex}"


def bot(name: str, mark: str, *options: str) -> BotSpec:
    return resolve_command([str(TEST_BOTS / f"{name}.py"), mark, *options], name=name)


def random_bot(mark: str) -> BotSpec:
    return resolve_command([str(RANDOM_BOT), mark], name="random")


async def play(
    offender: BotSpec, mark: str, logs: Path, tc: TimeControl = TC, bound: float = MATCH_BOUND_S, **config: Any
) -> list[GameRecord]:
    """A 2-game match (both seatings); checks the bound (scaled: tests/timing.py),
    the logs and leftovers."""
    cfg = MatchConfig(
        game=GAME,
        rules=RULES,
        bots=[offender, random_bot(mark)],
        games=2,
        seed=77,
        time_control=tc,
        log_dir=logs,
        **config,
    )
    with trio.fail_after(scaled(bound)):
        result = await run_match(cfg)
    assert len(result.records) == 2
    for rec in result.records:
        assert rec.log_path is not None
        verdict = verify_file(rec.log_path)
        assert verdict.ok, verdict.message
        assert os.path.getsize(rec.log_path) < LOG_BOUND
    await await_until(lambda: not procs_with(mark), 5)
    assert procs_with(mark) == []
    return result.records


def reasons(rec: GameRecord, seat: int) -> list[str]:
    return [f.reason for f in rec.failures if f.seat == seat]


def charged(rec: GameRecord, name: str, reason: str) -> int:
    """The offender's first failure is `reason`; the other seat has none. Returns the offender's seat."""
    bad = rec.seat_names.index(name)
    assert reasons(rec, bad)[:1] == [reason], rec.failures
    assert reasons(rec, 1 - bad) == []
    assert rec.forfeited == [bad] and rec.winner == 1 - bad
    return bad


def clean(rec: GameRecord, name: str) -> None:
    """A game the bot played through, every one of its decisions its own."""
    seat = rec.seat_names.index(name)
    assert rec.failures == [] and rec.forfeited == [] and max(rec.scores) >= TARGET
    actions = [r for _, r in log_records(rec) if r["type"] == "action" and r["seat"] == seat]
    assert actions and all(a["source"] == "bot" for a in actions)


def log_records(rec: GameRecord) -> list[tuple[int, dict[str, Any]]]:
    assert rec.log_path is not None
    return read_json_log(Path(rec.log_path))[1]


def failure(rec: GameRecord) -> dict[str, Any]:
    return next(r for _, r in log_records(rec) if r["type"] == "failure")


# ------------------------------------------------------------------ hostile lines


@pytest.mark.parametrize(
    ("kind", "reason", "words"),
    [
        ("invalid_utf8", "malformed_json", "is not UTF-8: byte 0x"),
        ("deep_before", "nesting_too_deep", "deeper than 32 levels"),
        ("deep_after", "nesting_too_deep", "deeper than 32 levels"),
        ("big_number", "schema_violation", "out of range"),
        ("dup_type", "schema_violation", "`type` is"),
        ("blank", "malformed_json", "reply is an empty line"),
        ("debug", "malformed_json", "looks like text printed to stdout: log to stderr (protocol.md §1)"),
    ],
)
async def test_a_hostile_reply_costs_only_its_game(kind: str, reason: str, words: str, tmp_path: Path) -> None:
    # The bad line comes before the bot's real reply, in game 1 only. Game 1 is
    # lost; the real reply arrives late and must be dropped as stale in game 2,
    # which the same process plays cleanly with all its decisions.
    m = marker()
    first, second = await play(bot("reader_bad_line", m, f"kind={kind}"), m, tmp_path)
    charged(first, "reader_bad_line", reason)
    assert words in first.failures[0].message
    clean(second, "reader_bad_line")


async def test_debug_line_under_default_policy_loses_game_1_only(tmp_path: Path) -> None:
    m = marker()
    pids = tmp_path / "pids"
    first, second = await play(bot("reader_bad_line", m, "kind=debug", f"pidfile={pids}"), m, tmp_path)
    charged(first, "reader_bad_line", "malformed_json")
    assert "debug: thinking" in failure(first)["detail"]
    clean(second, "reader_bad_line")
    assert len(pids.read_text().split()) == 1  # no restart was needed
    seat = second.seat_names.index("reader_bad_line")
    dropped = [r for _, r in log_records(second) if r["type"] == "recv" and r["seat"] == seat and r.get("unsolicited")]
    assert len(dropped) == 1  # game 1's late reply, dropped in game 2


@pytest.mark.parametrize("kind", ["huge_number", "long_line"])
async def test_a_line_over_the_limit_is_fatal_and_the_bot_restarted(kind: str, tmp_path: Path) -> None:
    m = marker()
    pids = tmp_path / "pids"
    first, second = await play(bot("reader_bad_line", m, f"kind={kind}", f"pidfile={pids}"), m, tmp_path)
    for rec in (first, second):  # a fresh process for game 2, which does it again
        charged(rec, "reader_bad_line", "line_too_long")
    assert len(pids.read_text().split()) == 2


async def test_duplicate_keys_the_last_counts_the_same_for_referee_and_verify(tmp_path: Path) -> None:
    # {"id": <never issued>, "id": <the right one>}: the last key counts, so the
    # reply is accepted, and verify (which re-decodes the logged line) agrees.
    m = marker()
    first, second = await play(bot("reader_bad_line", m, "kind=dup_id"), m, tmp_path)
    clean(first, "reader_bad_line")
    clean(second, "reader_bad_line")


async def test_a_padded_reply_is_accepted_and_logged_compactly(tmp_path: Path) -> None:
    m = marker()
    first, second = await play(bot("reader_bad_line", m, "kind=padded"), m, tmp_path)
    for rec in (first, second):
        clean(rec, "reader_bad_line")
    seat = first.seat_names.index("reader_bad_line")
    (padded,) = [r for _, r in log_records(first) if r["type"] == "recv" and "reencoded_from" in r]
    assert padded["seat"] == seat and padded["reencoded_from"] > 200_000 and len(padded["line"]) < 200


@pytest.mark.parametrize("kind", ["deep_before", "deep_after", "invalid_utf8", "big_number", "dup_type", "blank"])
async def test_a_hostile_hello_is_a_startup_failure(kind: str, tmp_path: Path) -> None:
    m = marker()
    for rec in await play(bot("reader_bad_hello", m, f"kind={kind}"), m, tmp_path):
        charged(rec, "reader_bad_hello", "startup_failure")
        assert rec.decisions == 0
        assert "hello reply" in rec.failures[0].message
    if kind == "blank":
        assert "hello reply is an empty line" in rec.failures[0].message


# ------------------------------------------------------------------ slow and stopped writers


async def test_replies_in_pieces_with_pauses_are_read_whole(tmp_path: Path) -> None:
    m = marker()
    for rec in await play(bot("reader_slow_writer", m, "mode=pieces", "pieces=4", "pause=0.05"), m, tmp_path):
        clean(rec, "reader_slow_writer")


async def test_one_byte_per_100_ms_is_a_timeout_not_a_hang(tmp_path: Path) -> None:
    m = marker()
    first, _ = await play(bot("reader_slow_writer", m, "mode=drip"), m, tmp_path, bound=30)
    charged(first, "reader_slow_writer", "timeout")
    assert "within 1000 ms" in first.failures[0].message


async def test_a_reply_at_half_the_limit_is_accepted(tmp_path: Path) -> None:
    m = marker()
    for rec in await play(bot("reader_delay", m, "delay=0.5", "requests=2"), m, tmp_path):
        clean(rec, "reader_delay")


async def test_a_reply_at_twice_the_limit_times_out(tmp_path: Path) -> None:
    m = marker()
    first, second = await play(bot("reader_delay", m, "delay=2", "requests=1"), m, tmp_path)
    charged(first, "reader_delay", "timeout")
    clean(second, "reader_delay")  # its late reply is stale in game 2 and dropped


async def test_closed_stdout_is_a_crash_and_the_running_bot_is_killed(tmp_path: Path) -> None:
    m = marker()
    pids = tmp_path / "pids"
    first, second = await play(bot("reader_closed_stdout", m, f"pidfile={pids}"), m, tmp_path)
    charged(first, "reader_closed_stdout", "crash")
    assert "closed stdout" in first.failures[0].message
    assert "stdout closed, still running" in failure(first)["detail"]  # its stderr tail
    charged(second, "reader_closed_stdout", "crash")  # restarted, and it does it again
    assert len(pids.read_text().split()) == 2


@needs_sandbox
async def test_closed_stdout_in_the_sandbox_is_a_crash_too(tmp_path: Path) -> None:
    """The sandboxed twin: bwrap's init holds its standard streams for the
    sandbox's whole life, but not the bot's pipes, so the referee sees the
    bot's stdout close as it does without a sandbox, long before the clock."""
    m = marker()
    tc = TimeControl(decision_ms=30000, startup_ms=10000)
    first, second = await play(bot("reader_closed_stdout", m), m, tmp_path, tc=tc, bound=150, sandbox=SANDBOX)
    charged(first, "reader_closed_stdout", "crash")
    assert "closed stdout" in first.failures[0].message
    assert "stdout closed, still running" in failure(first)["detail"]
    charged(second, "reader_closed_stdout", "crash")


async def test_a_bot_that_sigstops_itself_times_out_and_is_killed(tmp_path: Path) -> None:
    m = marker()
    tc = TimeControl(decision_ms=500, startup_ms=5000)
    first, second = await play(bot("reader_sigstop", m), m, tmp_path, tc=tc, bound=20)
    charged(first, "reader_sigstop", "timeout")
    charged(second, "reader_sigstop", "timeout")  # still stopped: it never answers again


# ------------------------------------------------------------------ unsolicited lines


async def test_replies_written_before_their_requests_are_dropped(tmp_path: Path) -> None:
    # Two guesses per reply, in the pipe before their requests are sent: each is
    # dropped (unsolicited) and the bot's real answers count.
    m = marker()
    for rec in await play(bot("reader_early", m, "count=2"), m, tmp_path):
        clean(rec, "reader_early")
        seat = rec.seat_names.index("reader_early")
        dropped = [r for _, r in log_records(rec) if r["type"] == "recv" and r["seat"] == seat and r.get("unsolicited")]
        assert dropped


async def test_too_many_early_replies_are_a_flood(tmp_path: Path) -> None:
    m = marker()
    first, _ = await play(bot("reader_early", m, f"count={MAX_UNSOLICITED + 4}"), m, tmp_path)
    charged(first, "reader_early", "unsolicited_flood")


@pytest.mark.parametrize("mode", ["stale", "junk", "short"])
async def test_a_stdout_flood_is_capped_in_cpu_and_log(mode: str, tmp_path: Path) -> None:
    m = marker()
    pids = tmp_path / "pids"
    cpu = time.process_time()
    first, second = await play(bot("reader_flood", m, f"mode={mode}", "on=2", f"pidfile={pids}"), m, tmp_path)
    used = time.process_time() - cpu
    print(
        f"flood {mode}: referee CPU {used:.2f} s for 2 games, logs "
        f"{os.path.getsize(first.log_path or '')} and {os.path.getsize(second.log_path or '')} bytes"
    )
    assert used < scaled(15)  # a clean 2-game match takes well under a second; the flood is cut off at once
    for rec in (first, second):
        charged(rec, "reader_flood", "unsolicited_flood")
        assert os.path.getsize(rec.log_path or "") < 256 * 1024 + LOGGED_UNSOLICITED_BYTES
    assert len(pids.read_text().split()) == 2  # fatal: a fresh process for game 2


async def test_unsolicited_lines_past_the_log_budget_are_counted_in_one_record(tmp_path: Path) -> None:
    # 8 padded guesses (3 KB each) with every reply: just under the cap, so the
    # bot plays on, and past the 64 KiB log budget within a few requests.
    m = marker()
    first, second = await play(bot("reader_early", m, f"count={MAX_UNSOLICITED}", "pad=3000"), m, tmp_path)
    for game, rec in enumerate((first, second)):
        clean(rec, "reader_early")
        seat = rec.seat_names.index("reader_early")
        recs = [r for _, r in log_records(rec)]
        dropped = [r for r in recs if r["type"] == "recv" and r.get("unsolicited")]
        assert sum(len(r["line"]) for r in dropped) <= LOGGED_UNSOLICITED_BYTES
        (unlogged,) = [r for r in recs if r["type"] == "unlogged"]
        assert unlogged["seat"] == seat and unlogged["bytes"] > 3000 * unlogged["lines"]
        asked = sum(1 for r in recs if r["type"] == "send" and r["seat"] == seat and r["msg"]["type"] == "request")
        # Every guess is dropped before the next request; the last reply's guesses
        # are dropped at the first request of the next game.
        assert len(dropped) + unlogged["lines"] == MAX_UNSOLICITED * (asked - 1 + game)
