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

from referee.games.notation import parse_position
from referee.replay.cardtext import card_text


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
    tie = (
        f" · tie-break between {', '.join(r.name(s) for s in public.active)}"
        if getattr(public, "active", None) and public.tiebreak
        else ""
    )
    r.emit((f"Deal {public.deal}", "bold"), f" · dealer {r.name(public.dealer)}{tie} · the game starts here")
    r.emit("  scores: " + r.scores_text(public.scores))
    r.log.game.text.position(r, public)  # what this deal has shown: the game's own
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
