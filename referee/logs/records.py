"""The game log format: every kind of record, as frozen tagged msgspec Structs.

A game log is JSON Lines: a `header`, then one record per thing that
happened, in order, then the `result`:

- `deal`: a deal began (its dealer and its whole deck, top first);
- `event`: an engine event and who may see it (`to`: a seat, or -1 for all);
- `send`: a message to a seat (a `request` without its `view` and `legal`,
  which are re-created from the game: `elided` says so);
- `recv`: a line a seat wrote (cut at `MAX_LOGGED_LINE` characters);
- `action`: an action applied to the game, by the bot or by the referee;
- `failure`: a seat's failure, with its reason code and the evidence;
- `unlogged`: unsolicited lines of a seat that were only counted;
- `result`: the outcome, failures and timing totals.

This module is the format's one home: the runner writes these Structs, and
every reader (verify, replay, the HTML viewer, check, the live view)
decodes lines into them. `referee/logs/schema.json` is generated from them
(`python -m referee.logs.make_schema`); docs/replay.md explains each field.
The payloads a game defines (its events and actions, the messages of the
wire) are kept as JSON objects here and typed by the game that reads them,
so a new game needs nothing in this module.

Encoding is byte-stable, as logs have always been: a record's keys are
sorted (the tag among them), while the payloads inside keep their own field
order, and the header and result keep theirs.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from protocol.messages import SeatFailure

LOG_FORMAT = 1


class PlayerInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    seat: int
    name: str
    argv: list[str]
    human: bool = False
    """A person played this seat (`chicago-referee play`): left out of ratings by default."""


class LogHeader(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="header"):
    """Line 1: everything that determines the game, and how it was played."""

    format: int = LOG_FORMAT
    referee: str
    game: str
    game_id: int
    rules: Any
    n_players: int
    seed: int
    deals: list[dict[str, Any]]
    players: list[PlayerInfo]
    time_control: Any
    failure_policy: Any
    match_seed: int | None = None
    deal_set: int | None = None
    request_id_base: int = 0
    """This game's first request id is request_id_base + 1 (ids run on through a match)."""
    isolation: dict[str, Any] | None = None
    """The sandbox the bots ran in (`{"sandbox": "none"}` without one); absent in older logs."""
    start: str | UnsetType = UNSET
    """The position the game began from, in the text form of docs/positions.md
    (`match --start`); absent for a game dealt from the start."""
    worker: dict[str, Any] | None = None
    """Where a tournament game was played (`name`, `cpus`, `load_1m`, `load_5m`): its clocks were judged there."""


class LogRecord(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """A record after the header. Fields a reader does not know are ignored."""


class DealRecord(LogRecord, tag="deal", frozen=True):
    """A deal began: written before its events."""

    deal: int
    dealer: int
    deck: list[str]


class EventRecord(LogRecord, tag="event", frozen=True):
    """An engine event, as the seats it is for receive it."""

    to: int
    """-1: every seat; else the one seat that may see it."""
    event: Any
    """The game's event as seats receive it (an object tagged by `type`; the game types it)."""


class SendRecord(LogRecord, tag="send", frozen=True):
    """A message to a seat, as sent (a request without its view and legal list)."""

    seat: int
    msg: Any
    """The message as sent (an object tagged by `type`)."""
    t: float | UnsetType = UNSET
    """Milliseconds since the game started (timing)."""
    elided: list[str] | UnsetType = UNSET
    """The fields left out of `msg` because the game re-creates them (`view`, `legal`)."""


class RecvRecord(LogRecord, tag="recv", frozen=True):
    """A line a seat wrote."""

    seat: int
    line: str
    t: float | UnsetType = UNSET
    reencoded_from: int | UnsetType = UNSET
    """A reply padded past 1024 bytes is logged as its compact re-encoding; this is its length as sent."""
    unsolicited: bool | UnsetType = UNSET
    """The line answered no open request (late, early or extra): dropped and counted."""


class ActionRecord(LogRecord, tag="action", frozen=True):
    """An action applied to the game."""

    seat: int
    id: int | None
    """The request it answers; null when the referee acted without asking."""
    source: str
    """`bot`, or `default`: the referee played the first legal action."""
    action: Any
    """The game's action (an object tagged by `type`; the game types it)."""
    ms: float | UnsetType | None = UNSET
    """The bot's thinking time, wall clock (timing)."""
    cpu_ms: float | UnsetType | None = UNSET
    """The CPU time the bot used meanwhile (timing; null where not measured)."""


class FailureRecord(LogRecord, tag="failure", frozen=True):
    """A seat's failure: its reason code, the message in words and the evidence."""

    seat: int
    reason: str
    message: str
    detail: str | UnsetType = UNSET
    """The offending text, or the bot's stderr tail."""


class UnloggedRecord(LogRecord, tag="unlogged", frozen=True):
    """Unsolicited lines of a seat past the log's budget: counted, not kept."""

    seat: int
    lines: int
    bytes: int


class LogResult(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="result"):
    """The last line: the outcome."""

    winner: int | None
    scores: list[int]
    placements: list[int]
    reason: str
    failures: list[SeatFailure]
    forfeited: list[int]
    decisions: int
    referee_overhead_us: float = 0.0
    """Mean referee time per decision (engine, views, encoding): a timing field."""
    think_ms: list[float] = msgspec.field(default_factory=list)
    """Per seat: wall time of its decisions (timing; absent in older logs)."""
    cpu_ms: list[float | None] = msgspec.field(default_factory=list)
    """Per seat: CPU time of its decisions, null where not measured (timing; absent in older logs)."""


Record = DealRecord | EventRecord | SendRecord | RecvRecord | ActionRecord | FailureRecord | UnloggedRecord | LogResult
"""Every line after the header."""
