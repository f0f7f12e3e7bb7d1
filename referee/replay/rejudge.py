"""A bot's logged reply lines judged again, as the runner judged them.

Split from the log checker because it is one job with its own rules: the
checker knows which request is open and which reply line came last; these
functions decode that line again with the runner's own decoders
(`referee.play.replies`) and say whether it supports what the log claims (a
bot's action, an `illegal_action` failure, a reply refused as not JSON or not
the protocol). Each returns what differs, in the checker's words, or None.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from referee.errors import ProtocolViolation, RefereeError
from referee.games.base import GameState
from referee.logs.gamelog import MAX_LOGGED_LINE
from referee.play.replies import action_reply_type, any_action_type, decode_reply, former_wording
from referee.replay.load import show

REJUDGED = frozenset({"malformed_json", "schema_violation", "nesting_too_deep"})  # re-decoded from the reply line


@functools.cache
def _reply_decoder(action_type: Any) -> msgspec.json.Decoder:
    """Decodes a bot's `action` reply as strictly as the runner does (no unknown fields)."""
    return msgspec.json.Decoder(action_reply_type(action_type))


def bot_action_problem(where: int, line: str, rid: Any, action: Any, action_type: Any) -> str | None:
    """A bot-sourced action must be the action of the reply on line `where`, an answer to request `rid`."""
    try:
        reply = _reply_decoder(action_type).decode(line)
    except msgspec.DecodeError as exc:
        return f"the reply on line {where} was accepted, but it is not a valid action reply ({exc}): {line[:200]}"
    if reply.id != rid:
        return f"the reply on line {where} answers request {reply.id}, not {rid}"
    sent = reply.action
    if sent != action:
        return f"action differs from the bot's reply on line {where}: expected {show(sent)} found {show(action)}"
    return None


def illegal_action_problem(state: GameState, where: int, line: str, request_id: int, message: str) -> str | None:
    """An `illegal_action` failure: the reply on line `where` is re-judged in `state`, the message re-made."""
    try:
        reply = _reply_decoder(any_action_type()).decode(line)
    except msgspec.DecodeError as exc:
        return (
            f"the reply on line {where} is not a valid action reply ({exc}), "
            f"so it cannot have been judged an illegal action"
        )
    if reply.id != request_id:
        return f"the reply on line {where} answers request {reply.id}, not {request_id}"
    action = reply.action
    try:
        state.verify_action(action)
    except RefereeError as exc:
        expected = f"illegal action {show(action)}: {exc}"
        if message != expected:
            return f"failure message differs: expected {show(expected)} found {show(message)}"
        return None
    return f"the reply on line {where} is a legal action {show(action)}, but this failure calls it illegal"


def bad_reply_problem(where: int, line: str, reason: str, message: str) -> str | None:
    """A reply refused as not JSON or not the protocol (a reason of `REJUDGED`): its line decoded again."""
    if len(line) > MAX_LOGGED_LINE or "\ufffd" in line:
        return None  # cut or not UTF-8 when logged: not the bytes the bot sent
    try:
        decode_reply(line)
    except ProtocolViolation as exc:
        expected = (exc.reason, str(exc))
    else:
        return f"the reply on line {where} is a valid message, but this failure says {reason}"
    if (reason, message) != expected and (reason != expected[0] or message != former_wording(line)):
        return (
            f"failure differs from the reply on line {where}: expected {expected[0]} {show(expected[1])} "
            f"found {reason} {show(message)}"
        )
    return None
