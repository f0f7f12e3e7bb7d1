"""A game log replayed in the terminal: deal by deal, action by action.

`render_replay` re-simulates a log (`referee.replay.load.frames`) and prints each
frame with rich: cards as rank + suit symbol (hearts and diamonds red), the
exchanges, showdowns with the winning hand named, every trick, score changes
and the scores after each deal. The viewer decides what is shown:

- `Viewer.everything()`: every hand and every private event (analysis);
- `Viewer.for_seat(n)`: only what seat n could know at that moment: public
  events, its own private events and hand; other hands as card backs;
- `Viewer.public()`: public events only, every hand as backs.

Events shared by trick-taking games (deals, hands, tricks, scores) are drawn
by `Renderer`; each game draws its own (Chicago's exchanges and showdowns,
Euchre's bids and trump) through the hooks of its `GameDef.text`, beside its
engine, writing `Part`s that the renderer turns into terminal text. An event
nobody draws is printed generically, so a new game replays (plainly) before
it draws anything of its own.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from rich.console import Console
from rich.text import Text

from referee.games.base import PUBLIC
from referee.games.cards import SUIT_SYMBOLS, SUITS
from referee.games.rules import build_rules, rules_diff
from referee.games.show import Backs, Cards, Part, SuitMark
from referee.logs.gamelog import evidence_text
from referee.replay.cardtext import RED_SUITS, backs_text, card_text, cards_text
from referee.replay.load import Frame, GameLog, frames
from referee.replay.start_text import render_start, start_header
from referee.visible import visible

# ------------------------------------------------------------------ who is looking


@dataclass(frozen=True)
class Viewer:
    """Whose eyes the replay uses. `seat` None with `private` True = everything."""

    seat: int | None = None
    private: bool = True

    @classmethod
    def everything(cls) -> Viewer:
        return cls(None, True)

    @classmethod
    def for_seat(cls, seat: int) -> Viewer:
        return cls(seat, True)

    @classmethod
    def public(cls) -> Viewer:
        return cls(None, False)

    @property
    def everything_visible(self) -> bool:
        return self.seat is None and self.private

    def sees(self, audience: int) -> bool:
        """May this viewer see an event with this audience?"""
        return audience == PUBLIC or self.everything_visible or audience == self.seat

    def sees_hand(self, seat: int) -> bool:
        return self.everything_visible or seat == self.seat

    def describe(self, names: Sequence[str]) -> str:
        if self.everything_visible:
            return "everything (every hand)"
        if self.seat is not None:
            return f"seat {self.seat} ({names[self.seat]}): only what it could see"
        return "public information only"


# ------------------------------------------------------------------ renderers


def _drawn(part: Part | Text) -> str | tuple[str, str] | Text:
    """A game's part as terminal text: cards as cards, anything written as text made visible."""
    if isinstance(part, str):
        return visible(part)
    if isinstance(part, tuple):
        return visible(part[0]), part[1]
    if isinstance(part, Cards):
        return cards_text(part.cards, sort=part.sort)
    if isinstance(part, Backs):
        return backs_text(part.count)
    if isinstance(part, SuitMark):
        return Text(SUIT_SYMBOLS[SUITS.index(part.suit)], style="red" if part.suit in RED_SUITS else "")
    return part


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


class Renderer:
    """Draws the frames of one game for one viewer (events common to trick games)."""

    def __init__(self, log: GameLog, viewer: Viewer, start_deal: int = 1) -> None:
        self.log = log
        self.viewer = viewer
        self.start_deal = start_deal
        self.names = [visible(n) for n in log.names]  # a log is input: names are shown, never obeyed
        self.width = max(len(n) for n in self.names)
        self.n = log.n_players
        self.first_deal = max(1, log.deals_before)  # a game started from a position begins in its deal
        self.muted = start_deal > self.first_deal
        self.deal = 0
        self.counts = [0] * self.n  # cards in each hand (for card backs)
        self.trick = 0
        self.card_width = 2
        self.play_started = False
        self.ended = False
        self.lines: list[Text] = []
        self.frame: Frame | None = None
        self.event_index = 0
        self.rules = log.rules
        self.memo: dict[str, Any] = {}  # the game's hooks' scratch, emptied when a deal starts
        self.drawers = log.game.text.events

    # ------------------------------------------------------------ output helpers

    def name(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < self.n else f"seat {seat}"

    def pad(self, seat: int) -> str:
        return self.name(seat).ljust(self.width)

    def emit(self, *parts: Part | Text, style: str = "") -> None:
        """One line; its plain-text parts (which may quote a bot: failure
        messages, what it wrote) have their control characters made visible."""
        if not self.muted:
            self.lines.append(Text.assemble(*(_drawn(p) for p in parts), style=style))

    def sees_hand(self, seat: int) -> bool:
        return self.viewer.sees_hand(seat)

    def step(self) -> tuple[int | None, Any, list[Any]]:
        assert self.frame is not None
        return self.frame.seat, self.frame.action, [e for _, e in self.frame.events]

    def reason(self, reason: str) -> str:
        """A score or end reason in words: the game's own, else the code read aloud."""
        return self.log.game.text.reasons.get(reason, reason.replace("_", " "))

    def hand(self, seat: int) -> list[str] | None:
        """The seat's hand after this frame, from its view; None if the view has no
        hand or a new deal starts later in this frame (the view shows that one)."""
        assert self.frame is not None
        later = self.frame.events[self.event_index + 1 :]
        if any(type(e).__struct_config__.tag == "deal_started" for _, e in later):
            return None
        hand = getattr(self.frame.state.view(seat), "hand", None)
        return list(hand) if hand is not None else None

    def hand_or_backs(self, seat: int, cards: Sequence[str] | None) -> Text:
        if self.viewer.sees_hand(seat) and cards is not None:
            return cards_text(cards, sort=True)
        return backs_text(self.counts[seat] if cards is None else len(cards))

    # ------------------------------------------------------------ frames

    def header(self) -> list[Text]:
        h = self.log.header
        game = self.log.game
        seats = " · ".join(f"{s} {n}" for s, n in enumerate(self.names))
        lines = [
            Text.assemble((f"{game.title}", "bold"), f" · game {h.game_id} · {h.n_players} seats · seed {h.seed}"),
            Text(f"rules: {self.rules_summary()}"),
            Text(f"seats: {seats}"),
            Text(f"showing: {self.viewer.describe(self.names)}", style="dim"),
        ]
        if self.log.start is not None:
            lines.append(start_header(self))
        if self.start_deal > self.first_deal:
            lines.append(Text(f"starting at deal {self.start_deal}", style="dim"))
        return lines

    def rules_summary(self) -> str:
        game, rules = self.log.game, self.log.rules
        for preset in game.presets:
            try:
                if build_rules(game, preset) == rules:
                    return f"preset {preset}"
            except Exception:
                continue
        diff = rules_diff(game, rules)
        if not diff:
            return "defaults"
        return "defaults with " + ", ".join(f"{k}={msgspec.json.encode(v).decode()}" for k, v in diff.items())

    def render(self, frame: Frame) -> list[Text]:
        """The lines for one frame (read the frame's state now: it is live)."""
        self.lines = []
        self.frame = frame
        if frame.kind == "start" and self.log.start is not None:
            render_start(self, frame.state)  # no deal events before a start position: show the position
        for i, failure in enumerate(frame.failures):
            self.on_failure(failure, frame)
            if i < len(frame.evidence) and frame.evidence[i] and self.viewer.sees_hand(failure.seat):
                self.emit("      ", "what the bot wrote: ", evidence_text(frame.evidence[i]), style="dim")
        for self.event_index, (audience, event) in enumerate(frame.events):
            kind = str(type(event).__struct_config__.tag)
            if not self.viewer.sees(audience):
                self.on_hidden(audience, kind, event)
            elif kind in self.drawers:
                self.drawers[kind](self, event)
            else:
                getattr(self, f"on_{kind}", self.on_other)(event)
        self.event_index = len(frame.events)
        if frame.kind == "end":
            self.on_end(frame)
        return self.lines

    # ------------------------------------------------------------ common events

    def on_failure(self, failure: Any, frame: Frame) -> None:
        detail = f": {failure.message}" if self.viewer.sees_hand(failure.seat) else ""
        then = (
            "; the referee played the first legal action"
            if frame.source == "default" and frame.seat == failure.seat
            else ""
        )
        self.emit("  ! ", self.name(failure.seat), f" {failure.reason}{detail}{then}", style="yellow")

    def on_hidden(self, audience: int, kind: str, event: Any) -> None:
        """A private event of another seat: only its public shape is shown."""
        if kind == "hand_dealt":
            self.counts[event.seat] = len(event.cards)
            self.emit("    ", self.pad(event.seat), "  ", backs_text(len(event.cards)))

    def on_deal_started(self, ev: Any) -> None:
        self.deal = ev.deal
        if self.muted and ev.deal >= self.start_deal:
            self.muted = False
            scores = self.frame.state.scores() if self.frame is not None else []
            first = self.first_deal
            skipped = f"deal {first}" if ev.deal == first + 1 else f"deals {first}-{ev.deal - 1}"
            self.emit(f"({skipped} skipped; scores: {self.scores_text(scores)})", style="dim")
        self.counts = [0] * self.n
        self.trick = 0
        self.play_started = False
        self.memo.clear()
        self.emit("")
        tie = f" · tie-break between {', '.join(self.name(s) for s in ev.active)}" if ev.tiebreak else ""
        self.emit((f"Deal {ev.deal}", "bold"), f" · dealer {self.name(ev.dealer)}{tie}")

    def on_hand_dealt(self, ev: Any) -> None:
        self.counts[ev.seat] = len(ev.cards)
        self.emit("    ", self.pad(ev.seat), "  ", self.hand_or_backs(ev.seat, ev.cards))

    def on_card_played(self, ev: Any) -> None:
        if not self.play_started:
            self.play_started = True
            self.on_play_start(ev)
        self.counts[ev.seat] = max(0, self.counts[ev.seat] - 1)
        number = f"{ev.trick}".rjust(2) if ev.trick != self.trick else "  "
        self.trick = ev.trick
        card = card_text(ev.card)
        self.card_width = card.cell_len
        self.emit(f"  {number}  ", self.pad(ev.seat), "  ", card)

    def on_play_start(self, first: Any) -> None:
        """Before the first card of a deal: the hands going into the play."""
        self.emit("  Play")
        if not self.viewer.private:
            return
        assert self.frame is not None
        active = getattr(self.frame.state.view(first.seat), "active", None) or range(self.n)
        for seat in active:
            cards = self.hand(seat) if self.viewer.sees_hand(seat) else None
            if cards is not None and seat == first.seat:
                cards = cards + [first.card]
            count = self.counts[seat] if cards is None else len(cards)
            self.emit(
                "    ", self.pad(seat), "  ", cards_text(cards, sort=True) if cards is not None else backs_text(count)
            )

    def on_trick_won(self, ev: Any) -> None:
        if self.lines and not self.muted:
            gap = " " * max(0, 3 - self.card_width)
            self.lines[-1].append(Text(f"{gap}   → {self.name(ev.seat)}", style="bold"))
        else:
            self.emit(f"      trick {ev.trick} → {self.name(ev.seat)}")

    def on_score(self, ev: Any) -> None:
        why = self.reason(ev.reason)
        style = "green" if ev.points > 0 else "red" if ev.points < 0 else ""
        self.emit("      ", (f"{ev.points:+d}", style), f" {self.name(ev.seat)} ({why}) = {ev.total}")

    def scores_text(self, scores: Sequence[int]) -> str:
        return " · ".join(f"{self.name(s)} {v}" for s, v in enumerate(scores))

    def on_deal_ended(self, ev: Any) -> None:
        self.emit(f"  scores after deal {ev.deal}: {self.scores_text(ev.scores)}", style="bold")

    def on_game_ended(self, ev: Any) -> None:
        self.ended = True
        self.muted = False
        self.emit("")
        why = self.reason(ev.reason)
        who = f"{self.name(ev.winner)} wins" if ev.winner is not None else "no single winner"
        self.emit(("Game over", "bold"), f" ({why}): ", (who, "bold"))
        self.emit("  " + self.placements_text(ev.placements, ev.scores))

    def placements_text(self, placements: Sequence[int], scores: Sequence[int]) -> str:
        order = sorted(range(len(placements)), key=lambda s: (placements[s], s))
        return "  ".join(f"{_ordinal(placements[s])} {self.name(s)} {scores[s]}" for s in order)

    def on_end(self, frame: Frame) -> None:
        res = frame.result
        self.muted = False
        if res is None:
            self.emit("")
            self.emit("(the log ends here, without a result: truncated?)", style="yellow")
            return
        if res.reason == "forfeit":
            self.emit("")
            who = f"{self.name(res.winner)} wins" if res.winner is not None else "no single winner"
            self.emit(("Result", "bold"), " (forfeit): ", (who, "bold"))
            self.emit("  " + self.placements_text(res.placements, res.scores))
            for s in res.forfeited:
                last = next((f for f in reversed(res.failures) if f.seat == s), None)
                why = f" ({last.reason})" if last is not None else ""
                self.emit(f"  {self.name(s)} forfeited{why}", style="yellow")
        elif not self.ended:
            self.emit("")
            self.emit(("Result", "bold"), f" ({res.reason}): " + self.placements_text(res.placements, res.scores))

    def on_other(self, ev: Any) -> None:
        """An event without a renderer: its type and fields, cards drawn as cards."""
        data = msgspec.to_builtins(ev)
        kind = data.pop("type", type(ev).__name__)
        parts: list[Part | Text] = ["  ", (kind.replace("_", " "), "italic")]
        for key, value in data.items():
            parts.append(f" {key}=")
            parts.append(self.value_text(key, value))
        self.emit(*parts)

    def value_text(self, key: str, value: Any) -> Text:
        if key == "seat" and isinstance(value, int):
            return Text(self.name(value))
        if isinstance(value, str) and len(value) == 2 and value[1] in SUITS and value[0] in "23456789TJQKA":
            return card_text(value)
        if isinstance(value, list) and value and all(isinstance(v, str) and len(v) == 2 for v in value):
            return cards_text(value)
        return Text(visible(msgspec.json.encode(value).decode()))


def renderer_for(log: GameLog, viewer: Viewer, start_deal: int = 1) -> Renderer:
    return Renderer(log, viewer, start_deal)


def render_replay(
    log: GameLog,
    console: Console,
    viewer: Viewer | None = None,
    *,
    start_deal: int = 1,
    pause: Callable[[], bool] | None = None,
    width: int | None = None,
) -> int:
    """Print the whole replay; returns the number of frames shown.

    `pause` is called after each frame that printed something (step mode);
    it returns False to stop early. With `width`, long lines are wrapped to it
    with a hanging indent; without, they are left to the terminal.
    """
    renderer = renderer_for(log, viewer or Viewer.everything(), start_deal)

    def emit(line: Any) -> None:
        if width is None:
            console.print(line, highlight=False, soft_wrap=True)
        else:
            for part in wrap_line(line, width):
                console.print(part, highlight=False, soft_wrap=True)

    for line in renderer.header():
        emit(line)
    shown = 0
    for frame in frames(log):
        lines = renderer.render(frame)
        for line in lines:
            emit(line)
        if lines:
            shown += 1
            if pause is not None and frame.kind != "end" and not pause():
                break
    return shown


def wrap_line(line: Text | str, width: int) -> list[Text]:
    """`line` cut at spaces into pieces of at most `width` cells; the pieces
    after the first are indented four cells deeper than the line itself."""
    text = line if isinstance(line, Text) else Text(line)
    if text.cell_len <= width:
        return [text]
    plain = text.plain
    indent = len(plain) - len(plain.lstrip(" ")) + 4
    indent = indent if indent < width // 2 else 0
    first, *rest = text.wrap(_WRAP_CONSOLE, width, no_wrap=False)
    pieces = [first]
    if rest:
        tail = Text(" ").join(rest)
        for piece in tail.wrap(_WRAP_CONSOLE, width - indent):
            pieces.append(Text(" " * indent) + piece)
    return pieces


_WRAP_CONSOLE = Console(width=10_000, color_system=None)


def render_to_text(log: GameLog, viewer: Viewer | None = None, *, start_deal: int = 1, width: int = 100) -> str:
    """The replay as plain text (no colour), e.g. for tests and files."""
    console = Console(width=width, color_system=None, force_terminal=False, record=True, file=io.StringIO())
    render_replay(log, console, viewer, start_deal=start_deal)
    return console.export_text(styles=False)
