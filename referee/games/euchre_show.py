"""How people see and type Ghost Hand Euchre: its events and actions in
words, typed choices, the rules of each phase, how the terminal replay draws
its own events (bids, the ghost swap, trump, reneges, hand scores) and a
position it started from, and what the HTML pages need. Pure: see show.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from protocol.common import PlayCard
from protocol.euchre import Bid, NameTrump, Pass, SwapGhost
from referee.games.show import (
    SUIT_NAMES,
    ChoiceError,
    GamePage,
    GameText,
    GameWords,
    ReplayPen,
    SuitMark,
    cards,
    common_event_text,
    sort_cards,
    verb,
)


def _bid_words(bid: Any) -> str:
    return "the moon" if bid == "moon" else str(bid)


# ------------------------------------------------------------------ words at the table


def event_text(ev: Any, who: Callable[[int], str], me: int) -> str | None:
    kind = type(ev).__struct_config__.tag
    if kind == "bid_made":
        return f"{who(ev.seat)} " + ("passed" if ev.bid is None else f"bid {ev.bid}")
    if kind == "ghost_swapped":
        return f"{who(ev.seat)} took the ghost hand"
    if kind == "ghost_hand_taken":
        return f"{who(ev.seat)} {verb(ev.seat, me, 'holds', 'hold')} now " + " ".join(sort_cards(ev.cards))
    if kind == "all_passed":
        return f"everyone passed; {who(ev.next_dealer)} {verb(ev.next_dealer, me, 'deals', 'deal')} next"
    if kind == "trump_named":
        return f"{who(ev.seat)} contracted {ev.contract} with {SUIT_NAMES[ev.suit]} trump"
    if kind == "renege":
        return f"{who(ev.seat)} reneged with {ev.card} in trick {ev.trick}: -{ev.penalty}"
    if kind == "hand_scored":
        made = "made" if ev.made else "failed"
        return f"{who(ev.declarer)} {made} {ev.contract}; scores " + " ".join(str(s) for s in ev.scores)
    return common_event_text(ev, who, me)


def action_text(action: Any) -> str:
    if isinstance(action, PlayCard):
        return f"play {action.card}"
    if isinstance(action, Pass):
        return "pass"
    if isinstance(action, Bid):
        return "bid the moon (all six tricks)" if action.bid == "moon" else f"bid {action.bid}"
    if isinstance(action, SwapGhost):
        return "swap for the ghost hand"
    if isinstance(action, NameTrump):
        return f"name {SUIT_NAMES[action.suit]} trump"
    return str(action)


def parse_words(words: list[str], legal: Sequence[Any]) -> Any:
    first, word = legal[0], words[0].lower()
    bidding = isinstance(first, Bid | Pass | SwapGhost)
    if word in ("pass", "keep", "stand", "none") and bidding:
        return Pass()
    if word in ("swap", "ghost"):
        return SwapGhost()
    if word == "moon":
        return Bid(bid="moon")
    if word == "bid" and len(words) == 2:
        value = words[1].lower()
        if value.isdigit() and 1 <= int(value) <= 5:
            return Bid(bid=int(value))
        if value == "moon":
            return Bid(bid="moon")
        raise ChoiceError(f"bid {words[1]!r} is not a bid: bid 1-5 or moon")
    suit = next((s for s, name in SUIT_NAMES.items() if word in (name, name[:-1], s)), None)
    if suit is not None and isinstance(first, NameTrump):
        return NameTrump(suit=suit)  # type: ignore[arg-type]
    return None


def parse_number(n: int, legal: Sequence[Any]) -> Any:
    """A bare number while bidding is a bid when it is no choice number (`4` with three choices)."""
    if (
        isinstance(legal[0], Bid | Pass | SwapGhost)
        and n > len(legal)
        and any(isinstance(a, Bid) and a.bid == n for a in legal)
    ):
        return Bid(bid=n)
    return None


def parse_cards_typed(chosen: list[str], legal: Sequence[Any]) -> Any:
    if isinstance(legal[0], PlayCard):
        if len(chosen) != 1:
            raise ChoiceError("play one card at a time")
        return PlayCard(card=chosen[0])
    return None


_PHASE_HELP = {
    "bidding": [
        "Bidding: bid how many of the six tricks you will take, higher than the bid before, or pass (GE-05).",
        "Once per hand someone may swap for the unseen ghost hand before bidding (GE-06).",
    ],
    "name_trump": ["Name trump: the declarer names the trump suit and leads (GE-08). Type hearts, spades, ..."],
    "trick": [
        "Trick play: follow the suit led if you can (the left bower counts as trump); "
        "trump beats the led suit (GE-09).",
        "Type the card (9h) or its number.",
    ],
}


def phase_help(view: Any) -> list[str]:
    return list(_PHASE_HELP.get(view.phase, ["No decision in this phase."]))


def table_lines(view: Any, who: Callable[[int], str]) -> list[str]:
    if not view.trump:
        return []
    declarer = "" if view.declarer is None else f", declarer {who(view.declarer)}"
    return [f"trump: {SUIT_NAMES[view.trump]} (contract {view.contract}{declarer})"]


WORDS = GameWords(
    event_text=event_text,
    action_text=action_text,
    parse_words=parse_words,
    parse_cards=parse_cards_typed,
    phase_help=phase_help,
    parse_number=parse_number,
    table_lines=table_lines,
)


# ------------------------------------------------------------------ the terminal replay


def _bid_made(pen: ReplayPen, ev: Any) -> None:
    if ev.bid is None:
        pen.emit("  ", pen.name(ev.seat), " passes", style="dim")
    else:
        bid = "shoots the moon" if ev.bid == "moon" else f"bids {ev.bid}"
        pen.emit("  ", (pen.name(ev.seat), "bold"), f" {bid}")


def _ghost_swapped(pen: ReplayPen, ev: Any) -> None:
    pen.emit("  ", (pen.name(ev.seat), "bold"), " swaps its hand for the ghost hand")


def _ghost_hand_taken(pen: ReplayPen, ev: Any) -> None:
    pen.emit("    ", pen.name(ev.seat), " now holds ", cards(*ev.cards, sort=True))


def _all_passed(pen: ReplayPen, ev: Any) -> None:
    pen.emit("  everybody passed: the hand is dealt again by ", pen.name(ev.next_dealer))


def _trump_named(pen: ReplayPen, ev: Any) -> None:
    pen.emit(
        "  ", (pen.name(ev.seat), "bold"), " names trump ", SuitMark(ev.suit), f", contract {_bid_words(ev.contract)}"
    )


def _renege(pen: ReplayPen, ev: Any) -> None:
    pen.emit(
        "  ",
        (pen.name(ev.seat), "bold red"),
        f" reneged in trick {ev.trick} with ",
        cards(ev.card),
        f" ({ev.penalty} points)",
    )


def _hand_scored(pen: ReplayPen, ev: Any) -> None:
    tricks = ", ".join(f"{pen.name(s)} {t}" for s, t in enumerate(ev.tricks_won))
    pen.emit(f"  contract {'made' if ev.made else 'set'}; tricks: {tricks}")


def position_text(pen: ReplayPen, view: Any) -> None:
    """What the hand a game started in has shown: bids, the swap, trump."""
    if view.bids:
        bids = ", ".join(f"{pen.name(b.seat)} " + ("passed" if b.bid is None else _bid_words(b.bid)) for b in view.bids)
        pen.emit(f"  bids: {bids}")
    if view.swapped_by is not None:
        pen.emit("  ", pen.name(view.swapped_by), " swapped its hand for the ghost hand")
    if view.trump is not None and view.declarer is not None:
        pen.emit(
            "  ",
            (pen.name(view.declarer), "bold"),
            " named trump ",
            SuitMark(view.trump),
            f", contract {_bid_words(view.contract)}",
        )


TEXT = GameText(
    events={
        "bid_made": _bid_made,
        "ghost_swapped": _ghost_swapped,
        "ghost_hand_taken": _ghost_hand_taken,
        "all_passed": _all_passed,
        "trump_named": _trump_named,
        "renege": _renege,
        "hand_scored": _hand_scored,
    },
    position=position_text,
    reasons={
        "target": "reached the target score",
        "tiebreak": "won the tie-break",
        "hand_limit": "hand limit reached",
        "contract_made": "contract made",
        "set": "set",
        "tricks": "tricks taken",
        "moon": "shot the moon",
        "moon_failed": "the moon failed",
        "renege": "renege",
    },
)


# ------------------------------------------------------------------ the web pages


def page_start(view: Any, state: Any) -> dict[str, Any]:
    """The table of a position's start for the HTML replay (what every seat sees)."""
    return {
        "phase": "bidding" if view.phase == "name_trump" else view.phase,
        "stock": None,
        "round": 0,
        "declarer": view.declarer,
        "contract": view.contract,
        "trump": view.trump,
        "bids": [{"seat": b.seat, "bid": b.bid} for b in view.bids],
        "swapped": view.swapped_by,
        "shown": [],
        "open": None,
    }


PAGE = GamePage(start_fields=page_start, hints={"first_phase": "bidding", "declarer_badge": None, "hidden_hand": True})
