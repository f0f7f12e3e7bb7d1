"""The first frame of a game that began from a position, in the terminal.

A game started from a position (`match --start`) logs no deal events for the
deal it starts in: the bots learn it from their views. So the replay draws
the position itself, as the viewer may see it: the deal, dealer and scores,
what this deal has shown so far (Chicago's exchanges, showdowns, shown hands
and open card; Euchre's bids, swap and trump), the hands going on, and the
tricks played. Everything comes from the rebuilt state's views, so a seat's
replay shows nothing that seat could not see.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from referee.games.cards import SUIT_SYMBOLS, SUITS
from referee.games.notation import parse_position
from referee.replay.cardtext import RED_SUITS, card_text, cards_text

_REASONS = {"break_up": "broke up its scoring hand", "scoring_hand": "its scoring hand",
            "final_showdown": "final showdown"}


def start_header(r: Any) -> Text:
    """The header line: where the game starts; the position's text only for a
    viewer who may see every hand (it holds them all)."""
    position = parse_position(r.log.start)
    where = f"started from a position in deal {position.deal} ({position.phase})"
    if r.viewer.everything_visible:
        return Text(f"{where}: {r.log.start}", style="dim")
    return Text(where, style="dim")


def render_start(r: Any, state: Any) -> None:
    """Emit the start position's lines through renderer `r` and set its
    counters (deal, cards per hand, trick, exchange round) to go on from it."""
    views = [state.view(seat) for seat in range(r.n)]
    public = views[0]
    r.deal = public.deal
    r.emit("")
    tie = f" · tie-break between {', '.join(r.name(s) for s in public.active)}" \
        if getattr(public, "active", None) and public.tiebreak else ""
    r.emit((f"Deal {public.deal}", "bold"), f" · dealer {r.name(public.dealer)}{tie} · the game starts here")
    r.emit("  scores: " + r.scores_text(public.scores))
    details = _DETAILS.get(r.log.game.name)
    if details is not None:
        details(r, public)
    seats = getattr(public, "active", None) or range(r.n)
    for seat in seats:
        hand = list(views[seat].hand)
        r.counts[seat] = len(hand)
        r.emit("    ", r.pad(seat), "  ", r.hand_or_backs(seat, hand))
    if public.phase == "trick":
        _tricks(r, public)


def _tricks(r: Any, public: Any) -> None:
    r.play_started = True
    r.emit("  Play")
    for record in public.tricks:
        for i, pc in enumerate(record.cards):
            number = f"{record.number}".rjust(2) if i == 0 else "  "
            r.emit(f"  {number}  ", r.pad(pc.seat), "  ", card_text(pc.card))
        if r.lines and not r.muted:
            r.lines[-1].append(Text(f"   → {r.name(record.winner)}", style="bold"))
    r.trick = public.trick_number if public.trick else 0
    for i, pc in enumerate(public.trick):
        number = f"{public.trick_number}".rjust(2) if i == 0 else "  "
        card = card_text(pc.card)
        r.card_width = card.cell_len
        r.emit(f"  {number}  ", r.pad(pc.seat), "  ", card)


def _chicago(r: Any, view: Any) -> None:
    for record in view.exchanges:
        what = f"discarded {record.count}" if record.count else "stood pat"
        r.emit(f"  exchange {record.round}: ", r.name(record.seat), f" {what}")
    for showdown in view.showdowns:
        when = "final showdown" if showdown.round == 0 else f"showdown after exchange {showdown.round}"
        if showdown.winners:
            who = " and ".join(r.name(s) for s in showdown.winners)
            r.emit(f"  {when}: {who} won with {showdown.description or showdown.category} ({showdown.points})")
        else:
            r.emit(f"  {when}: nobody scored")
    for reveal in view.revealed:
        r.emit("  ", r.name(reveal.seat), " showed ", cards_text(reveal.cards, sort=True),
               f" ({_REASONS.get(reveal.reason, reveal.reason.replace('_', ' '))})")
    if view.phase in ("exchange", "take_open"):
        r.round = view.exchange_round if any(e.round == view.exchange_round for e in view.exchanges) else 0
        r.emit(f"  exchange round {view.exchange_round} · stock {view.stock_size} · discards {view.discard_size}")
    if view.open_card is not None:
        r.emit("  the open card: ", card_text(view.open_card))
    if view.chicago_declarer is not None:
        r.emit("  ", (r.name(view.chicago_declarer), "bold"), " has called ", ("Chicago!", "bold magenta"))


def _euchre(r: Any, view: Any) -> None:
    if view.bids:
        bids = ", ".join(f"{r.name(b.seat)} " + ("passed" if b.bid is None else "the moon" if b.bid == "moon" else str(b.bid))
                         for b in view.bids)
        r.emit(f"  bids: {bids}")
    if view.swapped_by is not None:
        r.emit("  ", r.name(view.swapped_by), " swapped its hand for the ghost hand")
    if view.trump is not None and view.declarer is not None:
        contract = "the moon" if view.contract == "moon" else str(view.contract)
        suit = Text(SUIT_SYMBOLS[SUITS.index(view.trump)], style="red" if view.trump in RED_SUITS else "")
        r.emit("  ", (r.name(view.declarer), "bold"), " named trump ", suit, f", contract {contract}")


_DETAILS = {"chicago": _chicago, "ghost_euchre": _euchre}
