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
from referee.play.table import NO_LIMIT_MS
from referee.replay.text import card_text
from referee.seats.choices import (
    SUIT_NAMES,
    ChoiceError,
    action_text,
    event_text,
    parse_choice,
    phase_rules,
    seat_name,
    sort_cards,
)
from referee.seats.human import Judge

HELP = "type a number, cards like 9h or Kh Kd, a word like pass; ? rules, h history, q resign"


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
        self.last_over: GameOver | None = None

    # ------------------------------------------------------------ messages

    def notify(self, message: GameStart | Warning | GameOver) -> None:
        if isinstance(message, GameStart):
            self.seat, self.names, self.history = message.seat, list(message.players), []
            self.last_over = None
            self.console.print(f"[bold]game {message.game_id}[/]: you are seat {message.seat}; "
                               + escape(", ".join(seat_name(s, self.names, self.seat) for s in range(message.n_players))),
                               highlight=False)
        elif isinstance(message, Warning):
            self.console.print(f"[yellow]referee:[/] {escape(message.message)}", highlight=False)
        else:
            self.last_over = message
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
            text = event_text(ev, self.names, self.seat)
            if text is not None:
                self.history.append(text)
                self.console.print(Text("  " + text, style="dim"))

    # ------------------------------------------------------------ a decision

    def show(self, request: Request) -> None:
        view = request.view
        self._show_events(request.events)
        c = self.console
        scores = "  ".join(f"{seat_name(s, self.names, self.seat)} {p}" for s, p in enumerate(view.scores))
        c.print(Text(f"deal {view.deal}, {view.phase.replace('_', ' ')}; scores: {scores} (to {view.target_score})",
                     style="bold"))
        if view.trick:
            trick = Text("trick: ")
            for i, pc in enumerate(view.trick):
                if i:
                    trick.append(", ")
                trick.append(f"{seat_name(pc.seat, self.names, self.seat)} ").append_text(card_text(pc.card))
            c.print(trick)
        extra = getattr(view, "trump", None)
        if extra:
            c.print(f"trump: {SUIT_NAMES[extra]} (contract {view.contract}, declarer {escape(seat_name(view.declarer, self.names, self.seat))})",
                    highlight=False)
        hand = sort_cards(view.hand)
        c.print(Text("your hand: ").append_text(_cards(hand)).append(f"   ({' '.join(hand)})", style="dim"))
        if request.clock.decision_ms < NO_LIMIT_MS:
            bank = "" if request.clock.bank_ms is None else f", bank {request.clock.bank_ms / 1000:.1f}s"
            c.print(f"clock: {request.clock.decision_ms / 1000:.1f}s for this decision{bank}", highlight=False)
        items = [f"{i:>2} {action_text(a)}" for i, a in enumerate(request.legal, start=1)]
        width = max(len(s) for s in items) + 3
        per_row = max(1, min(4, (c.width or 80) // width))
        for r in range(0, len(items), per_row):
            c.print("".join(s.ljust(width) for s in items[r:r + per_row]).rstrip(), highlight=False, markup=False)

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
                for line in phase_rules(request.view):
                    self.console.print(line, highlight=False, markup=False)
                continue
            if text.lower() == "h":
                for line in self.history or ["nothing has happened in this deal yet"]:
                    self.console.print("  " + line, highlight=False, markup=False)
                continue
            if text.lower() == "q":
                answer = await self._ask("resign this game? [y/N] ")
                if answer is not None and answer.strip().lower() in ("y", "yes"):
                    self.console.print("you resigned", highlight=False)
                    raise Resigned("resigned")
                self.console.print("playing on", highlight=False)
                continue
            try:
                action = parse_choice(text, request.legal)
            except ChoiceError as exc:
                self.console.print(f"[red]?[/] {escape(str(exc))}", highlight=False)
                continue
            reason = judge(action)
            if reason is not None:
                self.console.print(f"[red]illegal:[/] {escape(action_text(action))}: {escape(reason)}", highlight=False)
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
