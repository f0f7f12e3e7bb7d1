"""A person at the table, behind the same line protocol as a bot.

`HumanSeat` is a `Seat`: the runner sends it request lines and reads action
reply lines, exactly as with a bot process. Behind it a `Player` (the
terminal or the browser) is shown each message and asked for each decision.
The decision runs in its own task, so the runner's early deadlines (which
restart the wait for a reply) never restart the question to the person; a
real timeout (`--human-time`) ends it with the runner's warning.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, Protocol

import msgspec
import trio

from protocol.messages import (
    ActionReply,
    BotHello,
    GameOver,
    GameStart,
    Hello,
    RefereeMessage,
    Request,
    Warning,
)
from referee.errors import BotCrashed, BotError, IllegalAction, Resigned
from referee.games.base import GameState
from referee.seats.seat import Unmetered

Judge = Callable[[Any], "str | None"]
"""Why an action is illegal now (the engine's own words), or None if it is legal."""

_decoder = msgspec.json.Decoder(RefereeMessage)
_encoder = msgspec.json.Encoder()


class Player(Protocol):
    """Whoever answers for a human seat: shows messages, makes decisions."""

    def notify(self, message: GameStart | Warning | GameOver) -> None:
        """A message that needs no answer (the game starts, a warning, the end)."""
        ...

    async def decide(self, request: Request, judge: Judge) -> Any:
        """A legal action for `request`; raise `Resigned` to give up the game."""
        ...


def legal_judge(request: Request) -> Judge:
    """The fallback judge: legal means one of the request's legal actions."""

    def judge(action: Any) -> str | None:
        return None if action in request.legal else "not one of the legal choices"

    return judge


def engine_judge(state: GameState) -> Callable[[Request], Judge]:
    """A judge that asks the engine why (`verify_action`), for requests of this
    game: it only explains a refusal, it never changes the state."""

    def for_request(request: Request) -> Judge:
        def judge(action: Any) -> str | None:
            try:
                state.verify_action(action)
            except IllegalAction as exc:
                return str(exc)
            return None if action in request.legal else "not one of the legal choices"

        return judge

    return for_request


class HumanSeat(Unmetered):
    """A `Seat` whose answers come from a `Player` (see the module doc)."""

    def __init__(self, name: str, player: Player, nursery: trio.Nursery) -> None:
        self.name = name
        self.player = player
        self._nursery = nursery
        self.late_id = 0
        self.judge_for: Callable[[Request], Judge] = legal_judge
        self._closed = False
        self._asking: trio.CancelScope | None = None
        self._send, self._receive = trio.open_memory_channel[bytes | BotError](math.inf)

    @property
    def dead(self) -> bool:
        return self._closed

    @dead.setter
    def dead(self, value: bool) -> None:
        """A person is never dead the way a crashed bot is: after resigning
        they still hear the game out (game_over), so the runner's flag is ignored."""

    @property
    def pid(self) -> int:
        return os.getpid()

    # ------------------------------------------------------------ lines in

    def send_nowait(self, data: bytes | bytearray) -> bool:
        for line in data.splitlines():
            if line.strip():
                self._take(_decoder.decode(line))
        return True

    async def send(self, data: bytes | bytearray) -> None:
        self.send_nowait(data)

    async def flush(self) -> None:
        return None

    def _take(self, msg: Any) -> None:
        if isinstance(msg, Hello):
            self._send.send_nowait(_encoder.encode(BotHello(name=self.name, version="human")))
        elif isinstance(msg, Request):
            self._stop_asking()
            scope = trio.CancelScope()
            self._asking = scope
            self._nursery.start_soon(self._ask, msg, scope)
        elif isinstance(msg, (GameStart, GameOver, Warning)):
            if not isinstance(msg, GameStart):
                self._stop_asking()  # the referee has played for this seat, or the game is over: no question is open
            self.player.notify(msg)

    def _stop_asking(self) -> None:
        if self._asking is not None:
            self._asking.cancel()
            self._asking = None

    async def _ask(self, request: Request, scope: trio.CancelScope) -> None:
        with scope:
            try:
                action = await self.player.decide(request, self.judge_for(request))
            except Resigned as exc:
                self._send.send_nowait(exc)
            else:
                self._send.send_nowait(_encoder.encode(ActionReply(id=request.id, action=action)))
        if self._asking is scope:
            self._asking = None

    # ------------------------------------------------------------ lines out

    def ready_lines(self, max_bytes: int, max_lines: int) -> list[bytes]:
        return []  # a person answers only what they are asked

    async def receive_line(self) -> bytes:
        if self._closed:
            raise BotCrashed("the human seat has left the table")
        item = await self._receive.receive()
        if isinstance(item, BotError):
            raise item
        return item

    async def close(self, farewell: bytes | None = None) -> None:
        self._closed = True
        self._stop_asking()
