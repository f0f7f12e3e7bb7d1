"""The browser seat: a `Player` whose state the page renders and whose
choices arrive over HTTP.

Everything the page receives is built here from what the runner sent this
seat (its view, its legal actions, the events it may see) and nothing else,
so no card the person may not see can reach the page. Each change makes a
new snapshot; the event stream pushes it, and a reload gets the latest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import trio

from protocol.messages import GameOver, GameStart, Request, Warning
from referee.errors import Resigned
from referee.games import get_game
from referee.games.base import GameDef
from referee.play.table import NO_LIMIT_MS
from referee.seats.choices import action_text, event_text
from referee.seats.human import Judge

MAX_EVENTS = 400  # lines of the game's story kept for the page


class Refused(Exception):
    """A choice from the page that cannot be taken; the message says why."""


class WebPlayer:
    """The browser seat's state, its decisions and its snapshots."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.seat = 0
        self.game = ""
        self.game_id = 0
        self.names: list[str] = []
        self.events: list[str] = []
        self.view: dict[str, Any] | None = None
        self.request: Request | None = None
        self.legal: list[dict[str, Any]] = []
        self.clock: dict[str, Any] | None = None
        self.over: dict[str, Any] | None = None
        self.notice = ""
        self.asking_again = False
        self.finished = False
        self.version = 0
        self.changed = trio.Event()
        self._judge: Judge | None = None
        self._reply: trio.MemorySendChannel[Any] | None = None
        self._again: trio.MemorySendChannel[bool] | None = None

    @property
    def game_def(self) -> GameDef:
        """The game being played (its name came with `game_start`)."""
        return get_game(self.game)

    # ------------------------------------------------------------ snapshots

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows, as plain JSON."""
        return {
            "version": self.version,
            "title": self.title,
            "game": self.game,
            "game_id": self.game_id,
            "seat": self.seat,
            "names": self.names,
            "view": self.view,
            "request_id": self.request.id if self.request is not None else None,
            "legal": self.legal,
            "clock": self.clock,
            "events": self.events[-MAX_EVENTS:],
            "over": self.over,
            "notice": self.notice,
            "ask_again": self.asking_again,
            "finished": self.finished,
        }

    def _publish(self) -> None:
        self.version += 1
        changed, self.changed = self.changed, trio.Event()
        changed.set()

    def _story(self, events: Sequence[Any]) -> None:
        for ev in events:
            text = event_text(self.game_def, ev, self.names, self.seat)
            if text is not None:
                self.events.append(text)

    # ------------------------------------------------------------ Player

    def notify(self, message: GameStart | Warning | GameOver) -> None:
        if isinstance(message, GameStart):
            self.seat, self.game, self.game_id = message.seat, message.game, message.game_id
            self.names, self.events, self.view, self.over, self.notice = list(message.players), [], None, None, ""
            self.events.append(f"game {message.game_id}: you are seat {message.seat}")
        elif isinstance(message, Warning):
            self.notice = message.message
            self.request, self.legal = None, []
        else:
            self._story(message.events)
            self.request, self.legal = None, []
            winner = message.winner
            text = (
                "nobody won" if winner is None else "you won!" if winner == self.seat else f"{self.names[winner]} won"
            )
            self.over = {
                "winner": winner,
                "scores": list(message.scores),
                "placements": list(message.placements),
                "reason": message.reason,
                "text": text,
            }
            if self.view is not None:
                self.view = {
                    **self.view,
                    "scores": list(message.scores),
                    "phase": "game_over",
                    "hand": [],
                    "trick": [],
                    "trick_number": 0,
                    "exchange_round": 0,
                }
        self._publish()

    async def decide(self, request: Request, judge: Judge) -> Any:
        self._story(request.events)
        self.request, self._judge, self.notice = request, judge, ""
        self.view = msgspec.to_builtins(request.view)
        self.legal = [
            {"n": i, "action": msgspec.to_builtins(a), "text": action_text(self.game_def, a)}
            for i, a in enumerate(request.legal, start=1)
        ]
        c = request.clock
        self.clock = None if c.decision_ms >= NO_LIMIT_MS else {"decision_ms": c.decision_ms, "bank_ms": c.bank_ms}
        send, receive = trio.open_memory_channel[Any](1)
        self._reply = send
        self._publish()
        try:
            answer = await receive.receive()
        finally:
            self._reply = None
        if isinstance(answer, Resigned):
            raise answer
        self.request, self.legal = None, []
        self._publish()
        return answer

    async def again(self, records: Sequence[Any]) -> bool:
        send, receive = trio.open_memory_channel[bool](1)
        self._again, self.asking_again = send, True
        self._publish()
        try:
            answer = await receive.receive()
        finally:
            self._again, self.asking_again = None, False
        self.finished = not answer
        self._publish()
        return answer

    # ------------------------------------------------------------ from the page

    def choose(self, request_id: Any, raw_action: Any) -> None:
        """A choice from the page: taken, or `Refused` with the reason."""
        if self.request is None or self._reply is None:
            raise Refused("it is not your turn")
        if request_id != self.request.id:
            raise Refused("that choice is no longer open (the page was behind): choose again")
        try:
            action = msgspec.convert(raw_action, type=self.game_def.action_type)
        except (msgspec.ValidationError, TypeError) as exc:
            raise Refused(f"not an action of this game: {exc}") from None
        assert self._judge is not None
        reason = self._judge(action)
        if reason is not None:
            self.notice = f"{action_text(self.game_def, action)}: {reason}"
            self._publish()
            raise Refused(self.notice)
        reply, self._reply = self._reply, None  # one answer per request, however often the page clicks
        reply.send_nowait(action)

    def resign(self) -> None:
        if self._reply is None:
            raise Refused("you can resign only when it is your turn")
        reply, self._reply = self._reply, None
        reply.send_nowait(Resigned("resigned"))

    def answer_again(self, again: bool) -> None:
        if self._again is None:
            raise Refused("the game is not over")
        send, self._again = self._again, None
        send.send_nowait(again)
