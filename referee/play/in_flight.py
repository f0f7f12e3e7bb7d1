"""One request in flight and the bot's lines that come back for it.

Split from the runner so that reading a reply reads as one piece: what a
request in flight carries (`InFlight`, resumable after an early deadline),
the lines read until the one that answers it (`read_reply`), and the lines
that answer nothing (`take_unsolicited`: dropped, counted, logged within the
seat's budget). The runner builds the request, sets its deadline and applies
what comes back; how a single line is judged is `play/replies.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from protocol.messages import BotHello
from referee.errors import ProtocolViolation
from referee.logs.gamelog import MAX_LOGGED_LINE, cut
from referee.play.recorder import GameRecorder
from referee.play.replies import LogBudget, check_unsolicited, decode_reply
from referee.seats.seat import Seat

_encoder = msgspec.json.Encoder()

REENCODE_OVER = 1024
"""An accepted reply longer than this (a real one is ~100 bytes) is logged as
its compact re-encoding: a bot cannot pad the log through its answers."""


@dataclass(eq=False, slots=True)
class InFlight:
    """A request and what settling it needs, even after an early deadline."""

    seat: int
    rid: int
    legal: Sequence[Any]
    limit: float
    t_sent: float
    deadline: float
    data: bytearray
    sending: bool = False
    sent: bool = False
    stale: bytes | None = None  # the last reply that carried an earlier id
    outcome: Any = None  # the reply or the BotError, once one came
    unsolicited: int = 0  # lines that answered nothing, and their bytes
    unsolicited_bytes: int = 0
    cpu_sent: float = 0.0  # the bot's CPU seconds when the request went out
    elapsed: float = 0.0  # the wall time to the reply, once it came
    reply: bytes | None = None  # the answer's line and its log time, until the runner logs them
    reply_t: float = 0.0


async def read_reply(bot: Seat, p: InFlight, log: GameRecorder, budget: LogBudget) -> None:
    """Read lines until the answer to request `p.rid` (its outcome); earlier ids
    are dropped. The answer's own line waits in `p.reply` for the runner, which
    logs it with the action once the next request is out."""
    seat, rid = p.seat, p.rid
    while True:
        line = await bot.receive_line()
        try:
            msg = decode_reply(line)
        except ProtocolViolation:
            log.received(seat, line)
            raise
        if isinstance(msg, BotHello):
            log.received(seat, line)
            raise ProtocolViolation(
                f"expected an 'action' reply to request {rid}, got {type(msg).__struct_config__.tag!r}",
                detail=cut(line, 500),
                reason="unexpected_message",
            )
        if msg.id < rid:  # a late answer to an earlier request: dropped
            if msg.id > bot.late_id:
                p.stale = line  # not explained by a timeout: a bot that only sends these gets `stale_id`
            take_unsolicited(p, line, log, budget)
            continue
        if msg.id == rid and len(line) <= REENCODE_OVER:  # the answer: logged by the runner, after the next request
            if log.enabled:
                p.reply, p.reply_t = line, log.t()
            p.outcome = msg
            return
        if len(line) <= REENCODE_OVER:
            log.received(seat, line)
        else:  # padded with whitespace: logged as what it means, compactly (a cut line would not verify)
            log.received(seat, _encoder.encode(msg), reencoded_from=len(line))
        if msg.id > rid:
            raise ProtocolViolation(
                f"reply id {msg.id} was never issued (current request id is {rid})",
                detail=cut(line, 500),
                reason="stale_id",
            )
        p.outcome = msg
        return


def take_unsolicited(p: InFlight, line: bytes, log: GameRecorder, budget: LogBudget) -> None:
    """A line that answers nothing: dropped and counted; past the cap the bot
    fails with `unsolicited_flood`. Logged within the seat's `budget`."""
    p.unsolicited += 1
    p.unsolicited_bytes += len(line) + 1
    if log.enabled and budget.admit(line, min(len(line), MAX_LOGGED_LINE)):
        log.received(p.seat, line, unsolicited=True)
    check_unsolicited(p.unsolicited, p.unsolicited_bytes, p.rid, line)
