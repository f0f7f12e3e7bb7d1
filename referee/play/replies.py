"""Judging what a bot writes: each line, and the lines that answer nothing.

Every byte a bot writes is untrusted. A line is decoded with one typed msgspec
decoder and, if that fails, checked for what a decoder cannot bear (an empty
line, nesting thousands of levels deep), so that whatever the line holds, its
judgement is a message or a `ProtocolViolation`, never another exception, and
the same judgement every time: `verify` re-judges logged lines with the same
functions and must reach the same reason and message.

A line that answers no request (a stale id, a line written before the request
was sent) is *unsolicited*: dropped and counted. A few per request are
tolerated; past `MAX_UNSOLICITED` lines or `MAX_UNSOLICITED_BYTES` the bot fails
with `unsolicited_flood`. The game log keeps them within a per-seat budget
and only counts the rest, so no bot can grow a log without bound.
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass
from typing import Any

import msgspec

from protocol.common import MAX_NESTING, Inbound, nests_deeper_than
from protocol.explain import json_error, schema_error
from protocol.messages import BotHello
from referee.errors import ProtocolViolation
from referee.games.registry import GAMES
from referee.logs.gamelog import cut

MAX_UNSOLICITED = 8
"""Lines a bot may write per request that answer nothing; one more is `unsolicited_flood`."""
MAX_UNSOLICITED_BYTES = 64 * 1024
"""The same cap in bytes, for a few huge unsolicited lines."""
LOGGED_UNSOLICITED_BYTES = 64 * 1024
"""Unsolicited lines logged per seat and game; past it they are only counted
(one `unlogged` record before the result)."""
MAX_REASON = 400  # characters of a failure message that explains a bad line
LOGGED_RECORD_OVERHEAD = 64  # the record around a logged line, counted against the budget

_decode_hello = msgspec.json.Decoder(BotHello).decode


def any_action_type() -> Any:
    """The actions of every registered game, as one union (tags are unique across
    games): a bot may send another game's action, which is JSON of the protocol
    but an illegal move, judged so by the engine."""
    return _union_of(tuple(GAMES))


@functools.cache
def _union_of(game_names: tuple[str, ...]) -> Any:
    members: list[Any] = []
    for name in game_names:
        action_type = GAMES[name].action_type
        for t in typing.get_args(action_type) or (action_type,):
            if t not in members:
                members.append(t)
    return typing.Union[tuple(members)]  # noqa: UP007 - built at run time


@functools.cache
def action_reply_type(action_type: Any) -> Any:
    """The bot's `action` reply carrying `action_type`, as strict as the wire's (no unknown fields)."""
    return msgspec.defstruct(
        "ActionReply", [("id", int), ("action", action_type)], bases=(Inbound,), tag="action", frozen=True, kw_only=True
    )


@functools.cache
def _message_decoder(action_type: Any) -> Any:
    return msgspec.json.Decoder(BotHello | action_reply_type(action_type)).decode


@functools.cache
def _decoder_of(game_names: tuple[str, ...]) -> Any:
    """The decoder of every registered game's messages (hashing the union of
    their action types on every reply would cost more than the decode)."""
    return _message_decoder(_union_of(game_names))


def _decode_message(line: bytes | str) -> Any:
    return _decoder_of(tuple(GAMES))(line)


def decode_untrusted(decode: Any, line: bytes | str, what: str = "reply") -> Any:
    """`decode(line)` with a typed decoder of bot messages, or a ProtocolViolation
    with the reason code of what is wrong.

    Reasons: `malformed_json` (not JSON, not UTF-8, an empty line),
    `nesting_too_deep` (more than MAX_NESTING levels of arrays and objects),
    `schema_violation` (JSON, but not the message; numbers out of range
    included). Duplicate keys are JSON: the last one counts, as in msgspec.

    A line that decodes is shallow (every value of a bot message has a typed
    field, nested a few levels), so the checks run only for a line that does
    not: the verdict is the same as if they ran first, and the usual reply
    costs one decode.
    """
    try:
        return decode(line)
    except (msgspec.DecodeError, RecursionError, MemoryError, ValueError, TypeError, OverflowError):
        pass
    raise _refusal(decode, line, what)


def _refusal(decode: Any, line: bytes | str, what: str) -> ProtocolViolation:
    """Why `line` does not decode, checked in a fixed order (the same every time)."""
    if not line or line.isspace():
        return ProtocolViolation(f"{what} is an empty line", detail="", reason="malformed_json")
    if nests_deeper_than(line):
        return ProtocolViolation(
            f"{what} nests arrays or objects deeper than {MAX_NESTING} levels",
            detail=cut(line, 500),
            reason="nesting_too_deep",
        )
    try:
        decode(line)
    except msgspec.ValidationError as exc:  # it may quote the bot's field names and values: cut, like the line
        return ProtocolViolation(
            cut(schema_error(exc, line, what), MAX_REASON), detail=cut(line, 500), reason="schema_violation"
        )
    except msgspec.DecodeError as exc:
        return ProtocolViolation(
            cut(json_error(exc, line, what), MAX_REASON), detail=cut(line, 500), reason="malformed_json"
        )
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        # Not expected after the checks above; a line still must not raise out of the reader.
        return ProtocolViolation(
            f"{what} cannot be decoded ({type(exc).__name__})", detail=cut(line, 500), reason="malformed_json"
        )
    return ProtocolViolation(f"{what} cannot be decoded", detail=cut(line, 500), reason="malformed_json")


def former_wording(line: bytes | str, what: str = "reply") -> str | None:
    """The message a referee before the messages in words gave for `line`
    (msgspec's own text), so that `verify` accepts the logs it wrote; None
    where the words did not change."""
    try:
        _decode_message(line)
    except msgspec.ValidationError as exc:
        return f"{what} does not match the protocol: {cut(str(exc), 300)}"
    except msgspec.DecodeError as exc:
        return f"{what} is not valid JSON: {cut(str(exc), 300)}"
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError):
        return None
    return None


def decode_reply(line: bytes | str) -> Any:
    """A bot's line while a request is open: a `BotMessage` or ProtocolViolation."""
    return decode_untrusted(_decode_message, line)


def decode_hello(line: bytes | str) -> BotHello:
    """The bot's answer to the referee's `hello`, or ProtocolViolation."""
    return decode_untrusted(_decode_hello, line, "hello reply")


def check_unsolicited(lines: int, size: int, rid: int, line: bytes) -> None:
    """ProtocolViolation `unsolicited_flood` once `lines` lines of `size` bytes
    in all answered nothing while request `rid` was open, past the cap."""
    if lines > MAX_UNSOLICITED or size > MAX_UNSOLICITED_BYTES:
        raise ProtocolViolation(
            f"{lines} lines ({size} bytes) that answer no request while request {rid} was open "
            f"(at most {MAX_UNSOLICITED} lines or {MAX_UNSOLICITED_BYTES} bytes)",
            detail=cut(line, 500),
            reason="unsolicited_flood",
        )


@dataclass(slots=True)
class LogBudget:
    """One seat's unsolicited lines in one game's log: logged up to the budget,
    then only counted."""

    logged: int = 0  # bytes logged, records included
    unlogged_lines: int = 0
    unlogged_bytes: int = 0

    def admit(self, line: bytes, logged_size: int) -> bool:
        """True if `line` (logged as `logged_size` bytes) still fits; else it is counted."""
        size = logged_size + LOGGED_RECORD_OVERHEAD
        if self.logged + size <= LOGGED_UNSOLICITED_BYTES:
            self.logged += size
            return True
        self.unlogged_lines += 1
        self.unlogged_bytes += len(line) + 1
        return False
