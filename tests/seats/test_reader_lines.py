"""The reader's parts without subprocesses: judging hostile lines, the nesting
check, lines taken before a request is sent, and yielding during a flood."""

from __future__ import annotations

import json
import os

import msgspec
import pytest
import trio
import trio.testing
from paths import DOCS
from timing import scaled

from protocol.common import MAX_NESTING, nests_deeper_than
from protocol.messages import BotHello
from referee.errors import ProtocolViolation
from referee.play.replies import decode_hello, decode_reply
from referee.seats.line_reader import LINES_WITHOUT_YIELD, LineReader

ACTION = b'{"type":"play","card":"As"}'
DEEP = b"[" * 1000 + b"]" * 1000


@pytest.mark.parametrize(
    ("line", "reason", "words"),
    [
        (b"", "malformed_json", "reply is an empty line"),
        (b"   \t", "malformed_json", "reply is an empty line"),
        (b'{"x":' + DEEP + b',"type":"action","id":1,"action":' + ACTION + b"}", "nesting_too_deep", "deeper than"),
        (b'{"type":"action","id":1,"action":' + DEEP + b"}", "nesting_too_deep", "deeper than"),
        (b"[" * 100_000, "nesting_too_deep", "deeper than"),
        (b'{"type":"action","id":1,"action":{"type":"play","card":"\xff\xfe"}}', "malformed_json", "UTF-8"),
        (
            b'{"type":"action","id":' + b"9" * 100_000 + b',"action":' + ACTION + b"}",
            "schema_violation",
            "out of range",
        ),
        (b'{"type":"action","id":1e999,"action":' + ACTION + b"}", "schema_violation", "out of range"),
        (b'{"type":"hello","type":"action","id":1,"action":' + ACTION + b"}", "schema_violation", "`type` is"),
        (b"\x00", "malformed_json", "starts with the control byte 0x00"),
        (b"hello from my bot", "malformed_json", "looks like text printed to stdout: log to stderr (protocol.md §1)"),
        (
            b'{"type":"action","id":1,"action":{"type":"play","card":"10h"}}',
            "schema_violation",
            '`action.card` is "10h": a card is a rank 2-9 T J Q K A and a suit s h d c, e.g. `Th`',
        ),
        (
            b'{"type":"action","id":1,"action":{"type":"play","card":"Th"}} {}',
            "malformed_json",
            "trailing characters at offset 63",
        ),
    ],
)
def test_no_line_raises_anything_but_a_protocol_violation(line: bytes, reason: str, words: str) -> None:
    with pytest.raises(ProtocolViolation) as info:
        decode_reply(line)
    assert info.value.reason == reason
    assert words in str(info.value)
    assert len(info.value.detail) <= 600  # the offending text, cut


def test_judgement_is_the_same_for_bytes_and_the_logged_text() -> None:
    # verify re-judges the logged (decoded) line: it must reach the same verdict.
    for line in (b'{"type":"action","id":1,"action":' + DEEP + b"}", b"{oops", b'{"type":"shrug"}'):
        with pytest.raises(ProtocolViolation) as as_bytes:
            decode_reply(line)
        with pytest.raises(ProtocolViolation) as as_text:
            decode_reply(line.decode())
        assert (as_bytes.value.reason, str(as_bytes.value)) == (as_text.value.reason, str(as_text.value))


def test_duplicate_keys_the_last_counts() -> None:
    msg = decode_reply(b'{"type":"action","id":7,"id":3,"action":' + ACTION + b"}")
    assert type(msg).__struct_config__.tag == "action" and msg.id == 3


def test_nesting_at_the_limit_is_fine_and_one_more_is_not() -> None:
    at = b'{"type":"action","id":1,"action":' + b"[" * (MAX_NESTING - 1) + b"]" * (MAX_NESTING - 1) + b"}"
    over = b"[" * (MAX_NESTING + 1) + b"]" * (MAX_NESTING + 1)
    assert not nests_deeper_than(at) and nests_deeper_than(over)
    with pytest.raises(ProtocolViolation) as info:
        decode_reply(at)
    assert info.value.reason == "schema_violation"  # decoded, and refused for what it is


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"a": "[" * 500, "b": '\\"[[[' * 50, "c": [[["ok"]]]}).encode()
    assert not nests_deeper_than(text)


@pytest.mark.parametrize(
    "line", [b"", b'{"x":' + DEEP + b',"type":"hello","name":"x"}', b'{"type":"hello","name":"\xff"}']
)
def test_a_hostile_hello_is_a_protocol_violation(line: bytes) -> None:
    with pytest.raises(ProtocolViolation) as info:
        decode_hello(line)
    assert "hello reply" in str(info.value)
    assert isinstance(decode_hello(b'{"type":"hello","name":"ok"}'), BotHello)


# ------------------------------------------------------------------ lines before a request


async def test_ready_lines_takes_what_was_written_without_waiting() -> None:
    r, w = os.pipe()
    os.set_blocking(r, False)
    stream = trio.lowlevel.FdStream(r)
    try:
        reader = LineReader(stream, max_len=1024)
        assert reader.ready_lines(65536, 10) == []  # nothing written: returns at once
        os.write(w, b'{"early":1}\n{"early":2}\npart')
        assert reader.ready_lines(65536, 1) == [b'{"early":1}']  # at most max_lines taken
        assert reader.ready_lines(65536, 10) == [b'{"early":2}']
        os.write(w, b"ial\n")
        with trio.fail_after(scaled(5)):
            assert await reader.receive_line() == b"partial"  # the unfinished line was kept
    finally:
        os.close(w)
        await stream.aclose()


async def test_ready_lines_leaves_an_over_long_line_to_receive_line() -> None:
    send, receive = trio.testing.memory_stream_one_way_pair()
    reader = LineReader(receive, max_len=16)
    await send.send_all(b"ok\n" + b"x" * 40 + b"\n")
    assert await reader.receive_line() == b"ok"  # the rest stays buffered
    assert reader.ready_lines(1024, 10) == []
    with pytest.raises(ProtocolViolation) as info:
        await reader.receive_line()
    assert info.value.reason == "line_too_long"


async def test_a_flood_of_short_lines_yields_to_other_tasks() -> None:
    # 2,000 lines arrive in one chunk; another task must get turns while they are read.
    send, receive = trio.testing.memory_stream_one_way_pair()
    reader = LineReader(receive, max_len=1024)
    await send.send_all(b"x\n" * 2000)
    turns = 0
    done = False

    async def other() -> None:
        nonlocal turns
        while not done:
            turns += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other)
        await trio.lowlevel.checkpoint()
        for _ in range(2000):
            assert await reader.receive_line() == b"x"
        done = True
    assert turns >= 2000 // (LINES_WITHOUT_YIELD + 1)


def test_an_untyped_decode_of_the_same_lines_would_raise() -> None:
    # Why the check exists: msgspec itself runs out of stack on deep nesting.
    with pytest.raises(RecursionError):
        msgspec.json.decode(b"[" * 100_000 + b"]" * 100_000)


async def test_ready_lines_on_a_closed_pipe_returns_what_is_buffered() -> None:
    r, w = os.pipe()
    os.set_blocking(r, False)
    stream = trio.lowlevel.FdStream(r)
    reader = LineReader(stream, max_len=1024)
    os.write(w, b"one\ntwo")
    assert reader.ready_lines(1024, 10) == [b"one"]
    os.close(w)
    await stream.aclose()
    assert reader.ready_lines(1024, 10) == []  # no read of a closed fd, no exception


def test_a_failure_message_quoting_the_bot_is_cut() -> None:
    name = "k" * 100_000
    with pytest.raises(ProtocolViolation) as info:
        decode_reply(b'{"type":"action","id":1,"action":' + ACTION + b',"' + name.encode() + b'":1}')
    assert info.value.reason == "schema_violation"
    assert "unknown field" in str(info.value) and len(str(info.value)) < 500


def test_the_message_table_of_protocol_md_is_what_the_referee_says() -> None:
    """docs/protocol.md §9 quotes a message per kind of bad line: each is the
    one the referee gives for the line beside it (where that line is whole)."""
    doc = (DOCS / "protocol.md").read_text()
    table = doc.split("**What the messages say.**", 1)[1].split("\n\n", 2)[1]
    checked = 0
    for row in table.splitlines()[2:]:
        sent, said = (cell.strip() for cell in row.strip("|").split("|")[:2])
        line = sent.split("` (", 1)[0].strip("`")
        if "..." in line:
            continue  # shortened for the page
        with pytest.raises(ProtocolViolation) as info:
            decode_reply(line.encode())
        assert said.strip("`").strip() == str(info.value), row
        checked += 1
    assert checked >= 4
