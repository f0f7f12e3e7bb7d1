"""A game's final outcome once forfeits are taken into account.

Shared by the runner (which decides it) and `verify` (which re-derives it).
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.games.base import GameState, placements_from


def final_outcome(
    state: GameState, forfeited: Sequence[int], n_players: int
) -> tuple[int | None, list[int], list[int], str]:
    """(winner, scores, placements, reason).

    Without forfeits: the engine's result. With forfeits: the seats still in
    keep the engine's order, then the forfeiters, the first forfeiter last;
    the winner is the best seat still in (if it is alone in first place) and
    the reason is "forfeit". When every seat forfeited (say, no bot started)
    the game has no result: no winner, and every seat shares one place, so
    no report can read a win for anybody out of the seat order.
    """
    res = state.result() if state.is_terminal() else None
    scores = state.scores()
    if not forfeited and res is not None:
        return res.winner, list(res.scores), list(res.placements), res.reason
    base = res.placements if res is not None else placements_from(scores, None)
    if all(s in forfeited for s in range(n_players)):
        return None, scores, [1] * n_players, "forfeit"
    alive = sorted((s for s in range(n_players) if s not in forfeited), key=lambda s: base[s])
    order = alive + list(reversed(forfeited))
    placements = [0] * n_players
    for i, s in enumerate(order):
        same = i > 0 and s in alive and order[i - 1] in alive and base[s] == base[order[i - 1]]
        placements[s] = placements[order[i - 1]] if same else i + 1
    winner = alive[0] if alive and placements.count(1) == 1 else None
    return winner, scores, placements, "forfeit"
