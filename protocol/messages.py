"""The envelope: every line exchanged between the referee and a bot.

Referee -> bot: hello, game_start, request, warning, game_over, bye.
Bot -> referee: hello (once, after ours), action (echoing a request id).
One JSON object per line, UTF-8, `\\n`-terminated, tagged by `type`.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from protocol.chicago import ChicagoAction, ChicagoEvent, ChicagoRules, ChicagoView
from protocol.common import Inbound, Outbound, Seat
from protocol.euchre import EuchreAction, EuchreEvent, EuchreRules, EuchreView

PROTOCOL_VERSION = 1

# One union per kind over every game; tags are unique across games.
Rules = ChicagoRules | EuchreRules
View = ChicagoView | EuchreView
Action = ChicagoAction | EuchreAction
Event = ChicagoEvent | EuchreEvent
Millis = Annotated[int, msgspec.Meta(ge=0)]


class TimeControl(msgspec.Struct, frozen=True, kw_only=True):
    """Limits in milliseconds. With a bank, each decision's time is also taken
    from the bank, and `increment_ms` is added back after each decision."""

    startup_ms: Millis = 10_000
    decision_ms: Millis = 1_000
    bank_ms: Millis | None = None
    increment_ms: Millis = 0


class Clock(msgspec.Struct, frozen=True, kw_only=True):
    """The seat's clock when a request is sent: `decision_ms` is the hard
    limit for this reply (already capped by the bank)."""

    decision_ms: int
    bank_ms: int | None = None


class SeatFailure(msgspec.Struct, frozen=True, kw_only=True):
    seat: Seat
    reason: str
    message: str


# ------------------------------------------------------- referee -> bot


class Hello(Outbound, tag="hello", frozen=True):
    """First line to every bot. Reply with a bot `hello` within `startup_ms`."""

    referee: str
    games: list[str]
    protocol: int = PROTOCOL_VERSION


class GameStart(Outbound, tag="game_start", frozen=True):
    """A game begins. One bot process may play many games in a row."""

    game_id: int
    game: str
    rules: Rules
    seat: Seat
    n_players: int
    players: list[str]
    time_control: TimeControl
    seed: int
    """A seed for the bot's own randomness, derived from the game seed and the
    seat (it reveals nothing about the cards): use it and a match replays exactly."""


class Request(Outbound, tag="request", frozen=True):
    """Your turn: reply with an `action` echoing `id`, chosen from `legal`.

    `events` is what happened since your previous request, as far as your
    seat may know (for bots that track history; `view` already has it all).
    """

    id: int
    game_id: int
    events: list[Event]
    view: View
    legal: list[Action]
    clock: Clock


class Warning(Outbound, tag="warning", frozen=True):
    """Your reply to request `id` was not accepted; the referee acted for you."""

    id: int | None
    game_id: int
    reason: str
    message: str


class GameOver(Outbound, tag="game_over", frozen=True):
    """The game ended. `events` are the last ones your seat had not yet seen."""

    game_id: int
    events: list[Event]
    winner: Seat | None
    scores: list[int]
    placements: list[int]
    reason: str
    failures: list[SeatFailure]


class Bye(Outbound, tag="bye", frozen=True):
    """The match is over: exit now (stdin closes next)."""


RefereeMessage = Hello | GameStart | Request | Warning | GameOver | Bye


# ------------------------------------------------------- bot -> referee


class BotHello(Inbound, tag="hello", frozen=True):
    """The bot's answer to `hello`."""

    name: str
    version: str = ""
    protocol: int = PROTOCOL_VERSION


class ActionReply(Inbound, tag="action", frozen=True):
    """The bot's answer to a `request`."""

    id: int
    action: Action


BotMessage = BotHello | ActionReply
