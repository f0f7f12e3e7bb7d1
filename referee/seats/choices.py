"""A person's choices at the table: what they type read into an action, and
the game's words for actions, events and phases, through its `GameDef`.

Shared by the terminal and the browser seat; pure functions of protocol
objects (no I/O). What differs between games is the game's own
(`GameDef.words`, beside its engine); here is only what every game's table
shares: choice numbers, typed cards, and the rules' footer line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.base import GameDef
from referee.games.show import RANKS, ChoiceError, card_from_word, seat_name

__all__ = ["ChoiceError", "action_text", "event_text", "parse_choice", "phase_rules"]


def action_text(game: GameDef, action: Any) -> str:
    """One action in words: `discard Kh Kd`, `play 9h`, `bid 4`."""
    return game.words.action_text(action)


def event_text(game: GameDef, ev: Any, names: Sequence[str], me: int) -> str | None:
    """One event in words for seat `me`; None for events not worth a line."""
    return game.words.event_text(ev, lambda s: seat_name(s, names, me), me)


def parse_choice(game: GameDef, text: str, legal: Sequence[Any]) -> Any:
    """The action a person typed: a choice number, cards (`Kh Kd`, `9h`, `10h`)
    or the game's words (`pass`, `chicago`, `bid 4`, `hearts`). The result
    may still be illegal: the caller asks the engine. Raises ChoiceError for
    text that names nothing."""
    words = text.replace(",", " ").split()
    if not words:
        raise ChoiceError("type a choice")
    if len(words) == 1 and words[0].isdigit():
        n = int(words[0])
        meant = game.words.parse_number(n, legal)
        if meant is not None:
            return meant
        if 1 <= n <= len(legal):
            return legal[n - 1]
        raise ChoiceError(f"there is no choice {n}: choose 1-{len(legal)}")
    chosen = [card_from_word(w) for w in words]
    if all(c is not None for c in chosen):
        action = game.words.parse_cards([c for c in chosen if c is not None], legal)
        if action is None:
            raise ChoiceError("no cards are chosen now: " + ", ".join(action_text(game, a) for a in legal[:4]))
        return action
    action = game.words.parse_words(words, legal)
    if action is not None:
        return action
    bad = next((w for w, c in zip(words, chosen, strict=True) if c is None), words[0])
    if len(bad) == 2 and bad[0].upper() in RANKS + "1":
        raise ChoiceError(f"{bad!r} is not a card: a rank 2-9 T J Q K A and a suit s h d c, like 9h or Td")
    raise ChoiceError(
        f"{bad!r} is not a choice: type a number 1-{len(legal)}, or cards like 9h (? rules, h history, q resign)"
    )


def phase_rules(game: GameDef, view: Any) -> list[str]:
    """The rules of the phase this view is in, in a few lines (for `?`)."""
    return [
        *game.words.phase_help(view),
        f"Game to {view.target_score} points. The full rules: docs/rules.md, or `chicago-referee rules`.",
    ]
