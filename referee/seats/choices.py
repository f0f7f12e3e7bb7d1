"""Words for a person at the table: actions and events described in plain
English, typed choices parsed into actions, and the rules of each phase.

Shared by the terminal and the browser seat; pure functions of protocol
objects (no I/O). Cards stay in the protocol's notation (`9h`, `Td`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from protocol.chicago import CallChicago, Exchange, TakeOpen
from protocol.common import PlayCard
from protocol.euchre import Bid, NameTrump, Pass, SwapGhost

HAND_NAMES = {"1P": "a pair", "2P": "two pair", "3K": "three of a kind", "ST": "a straight", "FL": "a flush",
              "FH": "a full house", "4K": "four of a kind", "SF": "a straight flush", "RF": "a royal flush"}
SUIT_NAMES = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}
RANKS = "23456789TJQKA"
_CARD = re.compile(r"^(10|[2-9TJQKA])([SHDC])$", re.IGNORECASE)
_WORDS = {
    "pass": "pass", "keep": "pass", "stand": "pass", "none": "pass",
    "chicago": "chicago", "declare": "chicago", "yes": "yes", "y": "yes", "no": "no", "n": "no",
    "take": "take", "draw": "draw", "swap": "swap", "ghost": "swap", "moon": "moon",
}


class ChoiceError(ValueError):
    """Typed text that names no action; the message says why."""


def card_key(card: str) -> tuple[int, int]:
    """Sort order for a hand: by suit (s h d c), then rank high to low."""
    return ("shdc".index(card[1]), -RANKS.index(card[0]))


def sort_cards(cards: Sequence[str]) -> list[str]:
    return sorted(cards, key=card_key)


def action_text(action: Any) -> str:
    """One action in words: `discard Kh Kd`, `play 9h`, `bid 4`."""
    if isinstance(action, Exchange):
        return "discard " + " ".join(action.discard) if action.discard else "keep all five cards"
    if isinstance(action, PlayCard):
        return f"play {action.card}"
    if isinstance(action, CallChicago):
        return "declare Chicago" if action.call else "no Chicago"
    if isinstance(action, TakeOpen):
        return "take the open card" if action.take else "draw the next card face down"
    if isinstance(action, Pass):
        return "pass"
    if isinstance(action, Bid):
        return "bid the moon (all six tricks)" if action.bid == "moon" else f"bid {action.bid}"
    if isinstance(action, SwapGhost):
        return "swap for the ghost hand"
    if isinstance(action, NameTrump):
        return f"name {SUIT_NAMES[action.suit]} trump"
    return str(action)


def parse_card(token: str) -> str | None:
    m = _CARD.match(token)
    if m is None:
        return None
    rank = "T" if m.group(1) == "10" else m.group(1).upper()
    return rank + m.group(2).lower()


def parse_choice(text: str, legal: Sequence[Any]) -> Any:
    """The action a person typed: a choice number, cards (`Kh Kd`, `9h`) or a word
    (`pass`, `chicago`, `bid 4`, `hearts`). The result may still be illegal:
    the caller asks the engine. Raises ChoiceError for text that names nothing."""
    words = text.replace(",", " ").split()
    if not words:
        raise ChoiceError("type a choice")
    first = legal[0]
    if len(words) == 1 and words[0].isdigit():
        n = int(words[0])
        if isinstance(first, Bid | Pass | SwapGhost) and any(isinstance(a, Bid) and a.bid == n for a in legal) and n > len(legal):
            return Bid(bid=n)
        if 1 <= n <= len(legal):
            return legal[n - 1]
        raise ChoiceError(f"there is no choice {n}: choose 1-{len(legal)}")
    cards = [parse_card(w) for w in words]
    if all(c is not None for c in cards):
        if isinstance(first, Exchange):
            return Exchange(discard=[c for c in cards if c is not None])
        if isinstance(first, PlayCard):
            if len(cards) != 1:
                raise ChoiceError("play one card at a time")
            return PlayCard(card=cards[0] or "")
        raise ChoiceError("no cards are chosen now: " + ", ".join(action_text(a) for a in legal[:4]))
    word = _WORDS.get(words[0].lower())
    suit = next((s for s, name in SUIT_NAMES.items() if words[0].lower() in (name, name[:-1], s)), None)
    if word == "pass":
        return Pass() if isinstance(first, Bid | Pass | SwapGhost) else Exchange(discard=[])
    if word in ("chicago", "yes", "no") and isinstance(first, CallChicago):
        return CallChicago(call=word != "no")
    if word in ("take", "draw", "yes", "no") and isinstance(first, TakeOpen):
        return TakeOpen(take=word in ("take", "yes"))
    if word == "swap":
        return SwapGhost()
    if word == "moon":
        return Bid(bid="moon")
    if words[0].lower() == "bid" and len(words) == 2:
        value = words[1].lower()
        if value.isdigit() and 1 <= int(value) <= 5:
            return Bid(bid=int(value))
        if value == "moon":
            return Bid(bid="moon")
        raise ChoiceError(f"bid {words[1]!r} is not a bid: bid 1-5 or moon")
    if suit is not None and isinstance(first, NameTrump):
        return NameTrump(suit=suit)  # type: ignore[arg-type]
    bad = next((w for w, c in zip(words, cards, strict=True) if c is None), words[0])
    if len(bad) == 2 and bad[0].upper() in RANKS + "1":
        raise ChoiceError(f"{bad!r} is not a card: a rank 2-9 T J Q K A and a suit s h d c, like 9h or Td")
    raise ChoiceError(f"{bad!r} is not a choice: type a number 1-{len(legal)}, or cards like 9h "
                      "(? rules, h history, q resign)")


def seat_name(seat: int, names: Sequence[str], me: int) -> str:
    return "you" if seat == me else f"{names[seat]} (seat {seat})"


def event_text(ev: Any, names: Sequence[str], me: int) -> str | None:
    """One event in words for seat `me`; None for events not worth a line."""
    who = (lambda s: seat_name(s, names, me))  # noqa: E731
    kind = type(ev).__struct_config__.tag
    if kind == "deal_started":
        extra = " (tie-break)" if ev.tiebreak else ""
        return f"deal {ev.deal} begins{extra}; {who(ev.dealer)} dealt"
    if kind == "hand_dealt":
        return f"{who(ev.seat)} got " + " ".join(sort_cards(ev.cards))
    if kind == "exchanged":
        n = ev.count
        return f"{who(ev.seat)} exchanged {n} card{'s' if n != 1 else ''} (round {ev.round})"
    if kind == "drew":
        return f"{who(ev.seat)} drew " + (" ".join(ev.cards) or "nothing")
    if kind == "stock_reshuffled":
        return f"the discards were shuffled into a new stock of {ev.stock_size}"
    if kind == "open_card":
        return f"open card for {who(ev.seat)}: {ev.card}"
    if kind == "open_card_decision":
        return f"{who(ev.seat)} {'took the open card' if ev.take else 'drew face down'}"
    if kind == "hand_revealed":
        return f"{who(ev.seat)} showed " + " ".join(ev.cards) + f" ({ev.reason.replace('_', ' ')})"
    if kind == "showdown":
        label = "final showdown" if ev.round == 0 else f"showdown after round {ev.round}"
        if not ev.winners:
            return f"{label}: nobody scores" + (" (tied)" if ev.tied else "")
        winners = ", ".join(who(s) for s in ev.winners)
        return f"{label}: {winners} with {ev.description or HAND_NAMES.get(ev.category or '', ev.category)}, {ev.points} point{'s' if ev.points != 1 else ''}"
    if kind == "chicago_decision":
        return f"{who(ev.seat)} {'declared Chicago' if ev.call else 'declined Chicago'}"
    if kind == "card_played":
        return f"{who(ev.seat)} played {ev.card}"
    if kind == "trick_won":
        return f"{who(ev.seat)} won trick {ev.trick} with {ev.card}"
    if kind == "score":
        sign = "+" if ev.points >= 0 else ""
        return f"{who(ev.seat)} {sign}{ev.points} ({ev.reason.replace('_', ' ')}), total {ev.total}"
    if kind == "deal_ended":
        return f"deal {ev.deal} over; scores " + " ".join(str(s) for s in ev.scores)
    if kind == "game_ended":
        return "the game is over"
    if kind == "first_dealer_cut":
        return f"cut for the deal: {who(ev.dealer)} {'deal' if ev.dealer == me else 'deals'} first"
    if kind == "bid_made":
        return f"{who(ev.seat)} " + ("passed" if ev.bid is None else f"bid {ev.bid}")
    if kind == "ghost_swapped":
        return f"{who(ev.seat)} took the ghost hand"
    if kind == "ghost_hand_taken":
        return f"{who(ev.seat)} {'hold' if ev.seat == me else 'holds'} now " + " ".join(sort_cards(ev.cards))
    if kind == "all_passed":
        return f"everyone passed; {who(ev.next_dealer)} {'deal' if ev.next_dealer == me else 'deals'} next"
    if kind == "trump_named":
        return f"{who(ev.seat)} contracted {ev.contract} with {SUIT_NAMES[ev.suit]} trump"
    if kind == "renege":
        return f"{who(ev.seat)} reneged with {ev.card} in trick {ev.trick}: -{ev.penalty}"
    if kind == "hand_scored":
        made = "made" if ev.made else "failed"
        return f"{who(ev.declarer)} {made} {ev.contract}; scores " + " ".join(str(s) for s in ev.scores)
    return None


_CHICAGO_RULES = {
    "exchange": [
        "Exchange: discard 0-5 cards and draw as many from the stock (CH-05).",
        "Type the cards to throw away (Kh Kd), 'pass' to keep all, or a choice number.",
        "After a scored round the best poker hand takes its points (CH-10, CH-11).",
    ],
    "take_open": ["The top stock card is face up: take it, or draw the next card face down."],
    "chicago_call": [
        "Chicago: declare that you will take all five tricks (CH-14).",
        "Made: you score the Chicago points; failed: you lose them. Declaring leads the first trick.",
    ],
    "trick": [
        "Trick play: follow the suit led if you can; the highest card of the led suit wins (CH-15).",
        "Only the last trick scores (CH-16); type the card (9h) or its number.",
    ],
    "bidding": [
        "Bidding: bid how many of the six tricks you will take, higher than the bid before, or pass (GE-05).",
        "Once per hand someone may swap for the unseen ghost hand before bidding (GE-06).",
    ],
    "name_trump": ["Name trump: the declarer names the trump suit and leads (GE-08). Type hearts, spades, ..."],
}


def phase_rules(view: Any) -> list[str]:
    """The rules of the phase this view is in, in a few lines (for `?`)."""
    lines = list(_CHICAGO_RULES.get(view.phase, ["No decision in this phase."]))
    if view.phase == "trick" and hasattr(view, "trump"):
        lines = ["Trick play: follow the suit led if you can (the left bower counts as trump); "
                 "trump beats the led suit (GE-09).", "Type the card (9h) or its number."]
    lines.append(f"Game to {view.target_score} points. The full rules: docs/rules.md, or `chicago-referee rules`.")
    return lines
