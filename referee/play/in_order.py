"""Deal sets finished in any order, handed on in schedule order.

With `match --concurrency N` the deal sets of a match play at once and
finish in whatever order the bots allow. Everything that looks at results
(the progress callback, the SPRT stop, the summary) sees them in schedule
order instead: game by game, set after set, exactly as one slot playing
alone would have produced them. That is what makes a concurrent match
identical to a sequential one with deterministic bots, SPRT stop included.

Game ids also fix each game's request ids (`request_id_base`), so a log
does not depend on which bot process played it or what that process played
before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

REQUEST_ID_STRIDE = 10_000
"""Game g's request ids are (g - 1) * 10,000 + 1, + 2, ...: the same whatever the
concurrency, and larger than every id of an earlier game on the same bot
process (a game that issued more requests than the stride is followed by a
fresh process), so a late reply from an earlier game is recognisably stale."""

INT32_MAX = 2**31 - 1
MAX_MATCH_GAMES = (INT32_MAX + 1 - 2**24) // REQUEST_ID_STRIDE + 1
"""Keeps every request id inside int32, with 16 million ids spare for the last game."""

R = TypeVar("R")


def request_id_base(game_id: int) -> int:
    """The id before game `game_id`'s first request (game 1's ids start at 1)."""
    return (game_id - 1) * REQUEST_ID_STRIDE


class InOrder(Generic[R]):
    """Collects each deal set's games as they finish; emits them in order.

    `emit(record)` is called for every game in schedule order, as soon as all
    games before it have finished. `stop_after(set_index)` is asked after each
    whole deal set has been emitted; when it answers with a reason, nothing
    later is emitted and `stopped` holds the reason: the results are those
    of a sequential run that stopped there.
    """

    def __init__(self, n_sets: int, set_size: int, emit: Callable[[R], None], stop_after: Callable[[int], str]) -> None:
        self.n_sets = n_sets
        self.set_size = set_size
        self._emit = emit
        self._stop_after = stop_after
        self._sets: dict[int, list[R]] = {}
        self._next_set = 0  # the first set not handed to a slot yet
        self._set = 0  # emission cursor: deal set and game within it
        self._game = 0
        self.emitted: list[R] = []
        self.stopped = ""

    def take(self) -> int | None:
        """The next deal set to play, or None when all are taken (or a stop came)."""
        if self.stopped or self._next_set >= self.n_sets:
            return None
        k = self._next_set
        self._next_set += 1
        return k

    def finished(self, deal_set: int, record: R) -> None:
        """One game of `deal_set` finished (games of one set arrive in order)."""
        self._sets.setdefault(deal_set, []).append(record)
        while not self.stopped and self._set < self.n_sets:
            done = self._sets.get(self._set, [])
            if self._game < len(done):
                rec = done[self._game]
                self._game += 1
                self.emitted.append(rec)
                self._emit(rec)
                continue
            if self._game < self.set_size:
                return  # waiting for this set's next game
            self.stopped = self._stop_after(self._set)
            self._sets.pop(self._set, None)
            self._set += 1
            self._game = 0

    def unemitted(self) -> list[R]:
        """Games that finished but come after a stop: a sequential run never played them."""
        return [rec for k, recs in sorted(self._sets.items()) for rec in recs[self._game if k == self._set else 0 :]]
