"""The opening records of the HTML replay of a game started from a position.

The replay page builds its table from the logged events, and a game started
from a position (`match --start`) logs none for the deal it starts in. So the
page gets two kinds of records in front of the log's: one public `@start`
with what the table shows everyone (deal, dealer, scores, phase, stock, the
trick so far, tricks won, shown hands, bids and trump), and one `@hand` per
seat, seen by that seat only, with its cards. They come from the rebuilt
state's views, so each seat's record holds what that seat may see and no more.
"""

from __future__ import annotations

from typing import Any

import msgspec

from referee.errors import CorruptLog, RefereeError
from referee.games import get_game
from referee.logs.records import LogHeader
from referee.play.deals import parse_deals
from referee.play.start import check_logged_start, initial_state

START, HAND = "@start", "@hand"


def start_records(header: LogHeader, where: str) -> list[tuple[str, int, dict[str, Any]]]:
    """(type, audience, fields) rows for the page; none for a game dealt from the start.
    A header whose start does not rebuild is a CorruptLog naming `where`."""
    if header.start is msgspec.UNSET:
        return []
    try:
        game = get_game(header.game)
        rules = msgspec.convert(header.rules, type=game.rules_type)
        deals = parse_deals(header.deals, game, where="header deals") if header.deals else ()
        check_logged_start(header.start, game, header.n_players, header.seed)
        state = initial_state(game, rules, header.n_players, header.seed, deals, header.start)
    except (RefereeError, msgspec.ValidationError, ValueError) as exc:
        raise CorruptLog(f"{where}:1: the start position does not rebuild: {exc}") from None
    views = [state.view(seat) for seat in range(header.n_players)]
    v = views[0]
    fields: dict[str, Any] = {
        "deal": v.deal,
        "dealer": v.dealer,
        "scores": list(v.scores),
        "active": list(getattr(v, "active", range(header.n_players))),
        "tiebreak": v.tiebreak,
        "trick": [{"seat": pc.seat, "card": pc.card} for pc in v.trick],
        "trick_no": v.trick_number if v.trick else 0,
        "tricks_won": list(v.tricks_won),
        **game.page.start_fields(v, state),  # what the game's own table shows: phase, stock, bids, ...
    }
    rows: list[tuple[str, int, dict[str, Any]]] = [(START, -1, fields)]
    for seat, view in enumerate(views):
        rows.append((HAND, seat, {"seat": seat, "cards": list(view.hand)}))
    return rows
