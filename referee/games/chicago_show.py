"""How people see and type Swedish Chicago: its events and actions in words,
typed choices, the rules of each phase, how the terminal replay draws its
own events (the cut, exchanges, the open card, showdowns, Chicago calls) and
a position it started from, and what the HTML pages need. Pure: see show.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from protocol.chicago import CallChicago, Exchange, TakeOpen
from protocol.common import PlayCard
from referee.games.cards import parse_cards
from referee.games.poker import CATEGORY_CODES, CATEGORY_NAMES, describe, evaluate
from referee.games.show import (
    RANKS,
    ChoiceError,
    GamePage,
    GameText,
    GameWords,
    ReplayPen,
    cards,
    common_event_text,
    sort_cards,
    verb,
)

HAND_NAMES = {
    "1P": "a pair",
    "2P": "two pair",
    "3K": "three of a kind",
    "ST": "a straight",
    "FL": "a flush",
    "FH": "a full house",
    "4K": "four of a kind",
    "SF": "a straight flush",
    "RF": "a royal flush",
}
_CATEGORY_PHRASES = tuple(
    name if name.startswith(("two", "three", "four", "high")) else f"a {name}" for name in CATEGORY_NAMES
)
_REVEALS = {
    "break_up": "broke up its scoring hand",
    "scoring_hand": "its scoring hand",
    "final_showdown": "final showdown",
}


# ------------------------------------------------------------------ words at the table


def _exchanged_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    n = ev.count
    return f"{who(ev.seat)} exchanged {n} card{'s' if n != 1 else ''} (round {ev.round})"


def _drew_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    return f"{who(ev.seat)} drew " + (" ".join(ev.cards) or "nothing")


def _stock_reshuffled_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    return f"the discards were shuffled into a new stock of {ev.stock_size}"


def _open_card_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    return f"open card for {who(ev.seat)}: {ev.card}"


def _open_card_decision_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    return f"{who(ev.seat)} {'took the open card' if ev.take else 'drew face down'}"


def _hand_revealed_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    return f"{who(ev.seat)} showed " + " ".join(ev.cards) + f" ({ev.reason.replace('_', ' ')})"


def _showdown_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    label = "final showdown" if ev.round == 0 else f"showdown after round {ev.round}"
    if not ev.winners:
        return f"{label}: nobody scores" + (" (tied)" if ev.tied else "")
    winners = ", ".join(who(s) for s in ev.winners)
    points = f"{ev.points} point{'s' if ev.points != 1 else ''}"
    return f"{label}: {winners} with {ev.description or HAND_NAMES.get(ev.category or '', ev.category)}, {points}"


def _chicago_decision_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    return f"{who(ev.seat)} {'declared Chicago' if ev.call else 'declined Chicago'}"


def _first_dealer_cut_words(ev: Any, who: Callable[[int], str], me: int) -> str:
    return f"cut for the deal: {who(ev.dealer)} {verb(ev.dealer, me, 'deals', 'deal')} first"


# Chicago's own events in words, by wire tag; the rest are every trick game's (`common_event_text`).
_EVENT_WORDS: dict[str, Callable[[Any, Callable[[int], str], int], str]] = {
    "exchanged": _exchanged_words,
    "drew": _drew_words,
    "stock_reshuffled": _stock_reshuffled_words,
    "open_card": _open_card_words,
    "open_card_decision": _open_card_decision_words,
    "hand_revealed": _hand_revealed_words,
    "showdown": _showdown_words,
    "chicago_decision": _chicago_decision_words,
    "first_dealer_cut": _first_dealer_cut_words,
}


def event_text(ev: Any, who: Callable[[int], str], me: int) -> str | None:
    words = _EVENT_WORDS.get(type(ev).__struct_config__.tag)
    return words(ev, who, me) if words is not None else common_event_text(ev, who, me)


def action_text(action: Any) -> str:
    if isinstance(action, Exchange):
        return "discard " + " ".join(action.discard) if action.discard else "keep all five cards"
    if isinstance(action, PlayCard):
        return f"play {action.card}"
    if isinstance(action, CallChicago):
        return "declare Chicago" if action.call else "no Chicago"
    if isinstance(action, TakeOpen):
        return "take the open card" if action.take else "draw the next card face down"
    return str(action)


_WORDS = {
    "pass": "pass",
    "keep": "pass",
    "stand": "pass",
    "none": "pass",
    "chicago": "chicago",
    "declare": "chicago",
    "yes": "yes",
    "y": "yes",
    "no": "no",
    "n": "no",
    "take": "take",
    "draw": "draw",
}


def parse_words(words: list[str], legal: Sequence[Any]) -> Any:
    first, word = legal[0], _WORDS.get(words[0].lower())
    if word == "pass" and isinstance(first, Exchange):
        return Exchange(discard=[])
    if word in ("chicago", "yes", "no") and isinstance(first, CallChicago):
        return CallChicago(call=word != "no")
    if word in ("take", "draw", "yes", "no") and isinstance(first, TakeOpen):
        return TakeOpen(take=word in ("take", "yes"))
    return None


def parse_cards_typed(chosen: list[str], legal: Sequence[Any]) -> Any:
    if isinstance(legal[0], Exchange):
        return Exchange(discard=chosen)
    if isinstance(legal[0], PlayCard):
        if len(chosen) != 1:
            raise ChoiceError("play one card at a time")
        return PlayCard(card=chosen[0])
    return None


_PHASE_HELP = {
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
}


def phase_help(view: Any) -> list[str]:
    return list(_PHASE_HELP.get(view.phase, ["No decision in this phase."]))


EXCHANGES_SHOWN = 6


def keep_strength(hand: Sequence[str], discard: Sequence[str]) -> tuple[Any, ...]:
    """How promising the cards an exchange keeps are, for ordering the choices
    shown (a hint for a person, not advice from a bot): a made hand first
    (quads, full house, a kept flush or straight, trips, two pair, a pair),
    then four to a flush or a straight, then the highest card kept; of equals,
    the one that draws more cards."""
    kept = [c for c in hand if c not in discard]
    counts = Counter(RANKS.index(c[0]) for c in kept)
    groups = sorted(((n, r) for r, n in counts.items()), reverse=True)  # (how many, rank), pairs before singles
    suited = len(kept) >= 4 and len({c[1] for c in kept}) == 1
    run = len(kept) >= 4 and len(counts) == len(kept) and _in_a_row(sorted(counts))
    made = _made_hand([n for n, _ in groups], suited, run, len(kept))
    draw = 2 if suited and made < 4 else 1 if run and made < 4 else 0
    return made, draw, _core_ranks(groups, made, draw), -len(kept)


def _in_a_row(ranks: list[int]) -> bool:
    """Four or five different ranks within a straight's span, A-2-3-4(-5) too."""
    return ranks[-1] - ranks[0] <= 4 or (ranks[-1] == 12 and ranks[-2] <= 3)


def _made_hand(shape: list[int], suited: bool, run: bool, kept: int) -> int:
    """7 quads, 6 full house, 5 flush, 4 straight, 3 trips, 2 two pair, 1 a pair, 0 nothing."""
    if shape[:1] == [4]:
        return 7
    if shape[:2] == [3, 2]:
        return 6
    if suited and kept == 5:
        return 5
    if run and kept == 5:
        return 4
    return {3: 3, 2: 2 if shape[1:2] == [2] else 1}.get(shape[0], 0) if shape else 0


def _core_ranks(groups: list[tuple[int, int]], made: int, draw: int) -> list[int]:
    """The ranks that make the hand (extra kickers only take the place of draws),
    or those of a draw, or the highest card kept."""
    if made:
        return [r for n, r in groups if n >= 2] if made < 4 else [r for _, r in groups]
    return [r for _, r in groups] if draw else [r for _, r in groups][:1]


def shortlist(view: Any, legal: Sequence[Any]) -> tuple[list[int], str] | None:
    """An exchange offers 32 discard sets, too many for a screen: keeping all
    five and the few likeliest, by number in the full list, and how to type any other."""
    if len(legal) <= EXCHANGES_SHOWN or not all(isinstance(a, Exchange) for a in legal):
        return None
    ranked = sorted(range(1, len(legal)), key=lambda i: keep_strength(view.hand, legal[i].discard), reverse=True)
    example = " ".join(sort_cards(view.hand)[:2])
    return [0, *ranked[: EXCHANGES_SHOWN - 1]], f"type the cards to discard, e.g. {example}; pass keeps all five"


WORDS = GameWords(
    event_text=event_text,
    action_text=action_text,
    parse_words=parse_words,
    parse_cards=parse_cards_typed,
    phase_help=phase_help,
    shortlist=shortlist,
)


# ------------------------------------------------------------------ the terminal replay


def _first_dealer_cut(pen: ReplayPen, ev: Any) -> None:
    if not ev.rounds:
        pen.emit(f"{pen.name(ev.dealer)} deals first (drawn by lot)")
        return
    parts: list[Any] = ["Cut for the first deal: "]
    for i, rnd in enumerate(ev.rounds):
        if i:
            parts.append(" / again: ")
        for j, pc in enumerate(rnd):
            parts.extend([" · " if j else "", f"{pen.name(pc.seat)} ", cards(pc.card)])
    parts.append(f"  → {pen.name(ev.dealer)} deals")
    pen.emit(*parts)


def _new_round(pen: ReplayPen, rnd: int) -> None:
    if rnd != pen.memo.get("round", 0):
        pen.memo["round"] = rnd
        pen.emit(f"  Exchange {rnd}")


def _exchanged(pen: ReplayPen, ev: Any) -> None:
    _new_round(pen, ev.round)
    parts: list[Any] = ["    ", pen.pad(ev.seat), "  "]
    if ev.count == 0:
        pen.emit(*parts, "stands pat")
        return
    parts.append(f"discards {ev.count}")
    if pen.sees_hand(ev.seat):
        seat, action, events = pen.step()
        discard = getattr(action, "discard", None) if seat == ev.seat else None
        if discard:
            parts.extend(["  ", cards(*discard, sort=True)])
        drew = next(
            (e for e in events if getattr(e, "seat", None) == ev.seat and type(e).__struct_config__.tag == "drew"), None
        )
        if drew is not None:
            parts.extend(["  draws ", cards(*drew.cards)])
            hand = pen.hand(ev.seat)
            if hand is not None:
                parts.extend(["  → ", cards(*hand, sort=True)])
    pen.emit(*parts)


def _drew(pen: ReplayPen, ev: Any) -> None:
    """Shown with the exchange; alone only after declining an open card."""
    _seat, _action, events = pen.step()
    if any(type(e).__struct_config__.tag == "exchanged" and e.seat == ev.seat for e in events):
        return
    parts: list[Any] = ["    ", pen.pad(ev.seat), "  draws ", cards(*ev.cards)]
    hand = pen.hand(ev.seat)
    if hand is not None:
        parts.extend(["  → ", cards(*hand, sort=True)])
    pen.emit(*parts)


def _open_card(pen: ReplayPen, ev: Any) -> None:
    pen.emit("    ", pen.pad(ev.seat), "  is offered the open card ", cards(ev.card))


def _open_card_decision(pen: ReplayPen, ev: Any) -> None:
    if not ev.take:
        pen.emit("    ", pen.pad(ev.seat), "  declines it and draws face down")
        return
    parts: list[Any] = ["    ", pen.pad(ev.seat), "  takes it"]
    hand = pen.hand(ev.seat) if pen.sees_hand(ev.seat) else None
    if hand is not None:
        parts.extend(["  → ", cards(*hand, sort=True)])
    pen.emit(*parts)


def _stock_reshuffled(pen: ReplayPen, ev: Any) -> None:
    pen.emit(f"    (the discards are shuffled into a new stock of {ev.stock_size} cards)", style="dim")


def _final_showdown(pen: ReplayPen) -> None:
    if not pen.memo.get("final_showdown"):
        pen.memo["final_showdown"] = True
        pen.emit("  Final showdown")


def _hand_revealed(pen: ReplayPen, ev: Any) -> None:
    if ev.reason == "break_up":  # revealed as its owner exchanges: under that round
        _seat, _action, events = pen.step()
        rnd = next(
            (e.round for e in events if type(e).__struct_config__.tag == "exchanged" and e.seat == ev.seat), None
        )
        if rnd is not None:
            _new_round(pen, rnd)
    if ev.reason == "final_showdown":
        _final_showdown(pen)
    note = {"break_up": "  (breaks up its scoring hand)", "scoring_hand": "  (its scoring hand)"}.get(ev.reason, "")
    pen.emit("    ", pen.pad(ev.seat), "  shows ", cards(*ev.cards, sort=True), note)


def hand_words(ev: Any, pen: ReplayPen) -> str:
    """A showdown's hand: named by the engine when its cards are shown; else,
    for a viewer who sees that hand, named here; else just its category."""
    if ev.description:
        return str(ev.description)
    seats = ev.winners or ev.tied
    if seats and ev.round != 0 and pen.sees_hand(seats[0]):
        hand = pen.hand(seats[0])
        if hand is not None and len(hand) == 5:
            return describe(evaluate(parse_cards(hand), pen.rules.ace_low_straight))
    if ev.category in CATEGORY_CODES:
        return _CATEGORY_PHRASES[CATEGORY_CODES.index(ev.category)]
    return str(ev.category or "high card")


def _showdown(pen: ReplayPen, ev: Any) -> None:
    head = "    →" if ev.round == 0 else f"  Showdown after exchange {ev.round}:"
    if ev.round == 0:
        _final_showdown(pen)
    hand = hand_words(ev, pen)
    if ev.winners:
        who = " and ".join(pen.name(s) for s in ev.winners)
        pen.emit(head, " ", (who, "bold"), f" {'win' if len(ev.winners) > 1 else 'wins'} with {hand}")
    elif ev.tied:
        pen.emit(head, f" exact tie ({', '.join(pen.name(s) for s in ev.tied)}) with {hand}: nobody scores")
    else:
        pen.emit(head, " nobody has a scoring hand")


def _chicago_decision(pen: ReplayPen, ev: Any) -> None:
    if ev.call:
        pen.emit("  ", (pen.name(ev.seat), "bold"), " calls ", ("Chicago!", "bold magenta"))
    else:
        pen.emit("  ", pen.name(ev.seat), " does not call Chicago", style="dim")


def position_text(pen: ReplayPen, view: Any) -> None:
    """What the deal a game started in has shown: exchanges, showdowns, shown hands, the open card, a call."""
    for record in view.exchanges:
        what = f"discarded {record.count}" if record.count else "stood pat"
        pen.emit(f"  exchange {record.round}: ", pen.name(record.seat), f" {what}")
    for showdown in view.showdowns:
        when = "final showdown" if showdown.round == 0 else f"showdown after exchange {showdown.round}"
        if showdown.winners:
            who = " and ".join(pen.name(s) for s in showdown.winners)
            pen.emit(f"  {when}: {who} won with {showdown.description or showdown.category} ({showdown.points})")
        else:
            pen.emit(f"  {when}: nobody scored")
    for reveal in view.revealed:
        pen.emit(
            "  ",
            pen.name(reveal.seat),
            " showed ",
            cards(*reveal.cards, sort=True),
            f" ({_REVEALS.get(reveal.reason, reveal.reason.replace('_', ' '))})",
        )
    if view.phase in ("exchange", "take_open"):
        pen.memo["round"] = view.exchange_round if any(e.round == view.exchange_round for e in view.exchanges) else 0
        pen.emit(f"  exchange round {view.exchange_round} · stock {view.stock_size} · discards {view.discard_size}")
    if view.open_card is not None:
        pen.emit("  the open card: ", cards(view.open_card))
    if view.chicago_declarer is not None:
        pen.emit("  ", (pen.name(view.chicago_declarer), "bold"), " has called ", ("Chicago!", "bold magenta"))


TEXT = GameText(
    events={
        "first_dealer_cut": _first_dealer_cut,
        "exchanged": _exchanged,
        "drew": _drew,
        "open_card": _open_card,
        "open_card_decision": _open_card_decision,
        "stock_reshuffled": _stock_reshuffled,
        "hand_revealed": _hand_revealed,
        "showdown": _showdown,
        "chicago_decision": _chicago_decision,
    },
    position=position_text,
    reasons={
        "target": "reached the target score",
        "royal_flush": "royal flush",
        "tiebreak": "won the tie-break",
        "deal_limit": "deal limit reached",
        "showdown": "showdown",
        "last_trick": "last trick",
        "chicago": "Chicago made",
        "chicago_failed": "Chicago failed",
        "four_kind_reset": "four of a kind resets it",
    },
    hand_words=hand_words,
)


# ------------------------------------------------------------------ the web pages


_PAGE_PHASES = {"take_open": "exchange", "chicago_call": "chicago"}


def page_start(view: Any, state: Any) -> dict[str, Any]:
    """The table of a position's start for the HTML replay (what every seat sees)."""
    return {
        "phase": _PAGE_PHASES.get(view.phase, view.phase),
        "stock": view.stock_size,
        "round": view.exchange_round,
        "declarer": view.chicago_declarer,
        "contract": None,
        "trump": None,
        "bids": [],
        "swapped": None,
        "shown": [{"seat": r.seat, "cards": list(r.cards), "reason": r.reason} for r in view.revealed],
        "open": (
            {"seat": state.current_player(), "card": view.open_card}
            if view.open_card is not None and not state.is_terminal()
            else None
        ),
    }


PAGE = GamePage(start_fields=page_start, hints={"first_phase": "exchange", "declarer_badge": "Chicago"})


__all__ = ["HAND_NAMES", "PAGE", "TEXT", "WORDS", "sort_cards"]
