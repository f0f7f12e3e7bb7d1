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
from referee.visible import visible

HELP = "type a number, cards like 9h or Kh Kd, a word like pass; ? rules, h history, q resign"
EXCHANGES_SHOWN = 6
_RANKS = "23456789TJQKA"


def keep_strength(hand: Sequence[str], discard: Sequence[str]) -> tuple[Any, ...]:
    """How promising the cards an exchange keeps are, for ordering the choices
    shown (a hint for a person, not advice from a bot): a made hand first
    (quads, full house, a kept flush or straight, trips, two pair, a pair),
    then four to a flush or a straight, then the highest card kept; of equals,
    the one that draws more cards."""
    kept = [c for c in hand if c not in discard]
    counts: dict[int, int] = {}
    for c in kept:
        counts[_RANKS.index(c[0])] = counts.get(_RANKS.index(c[0]), 0) + 1
    groups = sorted(((n, r) for r, n in counts.items()), reverse=True)
    shape = [n for n, _ in groups]
    ranks = sorted(counts)
    suited = len(kept) >= 4 and len({c[1] for c in kept}) == 1
    run = len(kept) >= 4 and len(ranks) == len(kept) and (
        ranks[-1] - ranks[0] <= 4 or (ranks[-1] == 12 and ranks[-2] <= 3))  # A-2-3-4(-5)
    if shape[:1] == [4]:
        made = 7
    elif shape[:2] == [3, 2]:
        made = 6
    elif suited and len(kept) == 5:
        made = 5
    elif run and len(kept) == 5:
        made = 4
    else:
        made = {3: 3, 2: 2 if shape[1:2] == [2] else 1}.get(shape[0], 0) if shape else 0
    draw = 2 if suited and made < 4 else 1 if run and made < 4 else 0
    if made:  # what makes the hand; extra kickers only take the place of draws
        core = [r for n, r in groups if n >= 2] if made < 4 else [r for _, r in groups]
    else:  # a draw, or the highest card kept
        core = [r for _, r in groups] if draw else [r for _, r in groups][:1]
    return made, draw, core, -len(kept)


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
            self.seat, self.history = message.seat, []
            self.names = [visible(n) for n in message.players]  # a bot's name is shown, never obeyed
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
        self._show_hand(view)
        if request.clock.decision_ms < NO_LIMIT_MS:
            bank = "" if request.clock.bank_ms is None else f", bank {request.clock.bank_ms / 1000:.1f}s"
            c.print(f"clock: {request.clock.decision_ms / 1000:.1f}s for this decision{bank}", highlight=False)
        shown = list(range(len(request.legal)))
        exchange = len(request.legal) > EXCHANGES_SHOWN and all(hasattr(a, "discard") for a in request.legal)
        if exchange:  # 32 discard sets would push the table off the screen: keeping all, and the likeliest few
            ranked = sorted(shown[1:], key=lambda i: keep_strength(view.hand, request.legal[i].discard), reverse=True)
            shown = [0, *ranked[:EXCHANGES_SHOWN - 1]]
        items = [f"{i + 1:>2} {action_text(request.legal[i])}" for i in shown]
        width = max(len(s) for s in items) + 3
        per_row = max(1, min(4, (c.width or 80) // width))
        for r in range(0, len(items), per_row):
            c.print("".join(s.ljust(width) for s in items[r:r + per_row]).rstrip(), highlight=False, markup=False)
        if exchange:
            c.print(f"   ({len(request.legal) - len(shown)} more) or type the cards to discard, e.g. "
                    f"{' '.join(sort_cards(view.hand)[:2])}; pass keeps all five", highlight=False, markup=False)

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
                for line in phase_rules(request.view):
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
