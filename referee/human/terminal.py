"""The terminal seat: a person plays by typing, from a keyboard or a pipe.

Each decision shows the hand (sorted, coloured suits), the scores, the phase,
what happened since the last decision, the current trick, the clock if one
runs, and the legal choices numbered. A choice is its number, the cards
themselves (`Kh Kd` to discard, `9h` to play) or a word (`pass`, `chicago`,
`bid 4`, `hearts`); `?` shows the rules of the phase, `h` the history of the
deal, `q` asks whether to resign. Bad input gets one line saying why (an
illegal choice the engine's own reason) and the prompt again.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import trio
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from protocol.messages import GameOver, GameStart, Request, Warning
from referee.errors import Resigned
from referee.games import get_game
from referee.games.base import GameDef
from referee.games.show import seat_name, sort_cards
from referee.play.table import NO_LIMIT_MS
from referee.replay.cardtext import card_text
from referee.seats.choices import (
    ChoiceError,
    action_text,
    event_text,
    parse_choice,
    phase_rules,
)
from referee.seats.human import Judge
from referee.visible import visible


class LineSource:
    """Lines typed on a text stream, read in a worker thread so the game's
    cancellations never lose a line; None once the input has ended."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdin
        self._send, self._receive = trio.open_memory_channel[str | None](math.inf)

    async def pump(self) -> None:
        """Run in a nursery for as long as lines are wanted."""
        while True:
            line = await trio.to_thread.run_sync(self._stream.readline, abandon_on_cancel=True)
            if not line:
                self._send.send_nowait(None)
                return
            self._send.send_nowait(line.rstrip("\r\n"))

    async def readline(self) -> str | None:
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            return None


def _cards(cards: Sequence[str]) -> Text:
    return Text(" ").join(card_text(c) for c in cards) if cards else Text("-", style="dim")


class TerminalPlayer:
    """A `Player` on a rich console, answering from a `LineSource`."""

    def __init__(self, console: Console, lines: LineSource) -> None:
        self.console = console
        self.lines = lines
        self.seat = 0
        self.names: list[str] = []
        self.history: list[str] = []  # this deal's events, in words
        self._game: GameDef | None = None

    @property
    def game(self) -> GameDef:
        """The game being played: known from its `game_start`, the first message of every game."""
        assert self._game is not None, "a request before game_start"
        return self._game

    # ------------------------------------------------------------ messages

    def notify(self, message: GameStart | Warning | GameOver) -> None:
        if isinstance(message, GameStart):
            self.seat, self.history = message.seat, []
            self.names = [visible(n) for n in message.players]  # a bot's name is shown, never obeyed
            self._game = get_game(message.game)
            self.console.print(
                f"[bold]game {message.game_id}[/]: you are seat {message.seat}; "
                + escape(", ".join(seat_name(s, self.names, self.seat) for s in range(message.n_players))),
                highlight=False,
            )
        elif isinstance(message, Warning):
            self.console.print(f"[yellow]referee:[/] {escape(message.message)}", highlight=False)
        else:
            self._show_events(message.events)
            self.console.print(self.result_line(message), highlight=False)

    def result_line(self, over: GameOver) -> str:
        scores = ", ".join(f"{escape(seat_name(s, self.names, self.seat))} {p}" for s, p in enumerate(over.scores))
        if over.winner is None:
            head = "[bold]no winner[/]"
        elif over.winner == self.seat:
            head = "[bold green]you won![/]"
        else:
            head = f"[bold]{escape(self.names[over.winner])} won[/]"
        return f"{head} ({over.reason.replace('_', ' ')}); final scores: {scores}"

    def _show_events(self, events: Sequence[Any]) -> None:
        for ev in events:
            if type(ev).__struct_config__.tag == "deal_started":
                self.history = []
            text = event_text(self.game, ev, self.names, self.seat)
            if text is not None:
                self.history.append(text)
                self.console.print(Text("  " + text, style="dim"))

    # ------------------------------------------------------------ a decision

    def show(self, request: Request) -> None:
        view = request.view
        self._show_events(request.events)
        c = self.console
        scores = "  ".join(f"{seat_name(s, self.names, self.seat)} {p}" for s, p in enumerate(view.scores))
        c.print(
            Text(
                f"deal {view.deal}, {view.phase.replace('_', ' ')}; scores: {scores} (to {view.target_score})",
                style="bold",
            )
        )
        if view.trick:
            trick = Text("trick: ")
            for i, pc in enumerate(view.trick):
                if i:
                    trick.append(", ")
                trick.append(f"{seat_name(pc.seat, self.names, self.seat)} ").append_text(card_text(pc.card))
            c.print(trick)
        for line in self.game.words.table_lines(view, lambda seat: seat_name(seat, self.names, self.seat)):
            c.print(Text(line))
        self._show_hand(view)
        if request.clock.decision_ms < NO_LIMIT_MS:
            bank = "" if request.clock.bank_ms is None else f", bank {request.clock.bank_ms / 1000:.1f}s"
            c.print(f"clock: {request.clock.decision_ms / 1000:.1f}s for this decision{bank}", highlight=False)
        short = self.game.words.shortlist(view, request.legal)  # many choices: the likeliest few, and a hint
        shown, hint = short if short is not None else (list(range(len(request.legal))), "")
        items = [f"{i + 1:>2} {action_text(self.game, request.legal[i])}" for i in shown]
        width = max(len(s) for s in items) + 3
        per_row = max(1, min(4, (c.width or 80) // width))
        for r in range(0, len(items), per_row):
            c.print("".join(s.ljust(width) for s in items[r : r + per_row]).rstrip(), highlight=False, markup=False)
        if hint:
            c.print(f"   ({len(request.legal) - len(shown)} more) or {hint}", highlight=False, markup=False)

    def _show_hand(self, view: Any) -> None:
        hand = sort_cards(view.hand)
        self.console.print(Text("your hand: ").append_text(_cards(hand)).append(f"   ({' '.join(hand)})", style="dim"))

    async def decide(self, request: Request, judge: Judge) -> Any:
        self.show(request)
        while True:
            text = await self._ask("your choice> ")
            if text is None:
                raise Resigned("the input ended")
            text = text.strip()
            if not text:
                continue
            if text == "?":
                for line in phase_rules(self.game, request.view):
                    self.console.print(line, highlight=False, markup=False)
                continue
            if text.lower() == "h":
                for line in self.history or ["nothing has happened in this deal yet"]:
                    self.console.print("  " + line, highlight=False, markup=False)
                self._show_hand(request.view)
                continue
            if text.lower() == "q":
                answer = await self._ask("resign this game? [y/N] ")
                if answer is not None and answer.strip().lower() in ("y", "yes"):
                    self.console.print("you resigned", highlight=False)
                    raise Resigned("resigned")
                self.console.print("playing on", highlight=False)
                continue
            try:
                action = parse_choice(self.game, text, request.legal)
            except ChoiceError as exc:
                self.console.print(f"[red]?[/] {escape(str(exc))}", highlight=False)
                continue
            reason = judge(action)
            if reason is not None:
                self.console.print(
                    f"[red]illegal:[/] {escape(action_text(self.game, action))}: {escape(reason)}", highlight=False
                )
                continue
            return action

    async def _ask(self, prompt: str) -> str | None:
        self.console.print(prompt, end="", highlight=False, markup=False)
        self.console.file.flush()
        line = await self.lines.readline()
        if line is not None and not self.console.is_terminal:
            self.console.print(line, highlight=False, markup=False)  # piped: echo, so a transcript reads like a game
        return line

    async def again(self, records: Sequence[Any]) -> bool:
        answer = await self._ask("play again? [y/N] ")
        return answer is not None and answer.strip().lower() in ("y", "yes")
