"""Seat 0's decisions in Chicago games of random moves, as a search bot sees
them: the helper the tests of the search bots' hand models share."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from referee.games import PUBLIC, new_game
from referee.games.cards import CARD_INT


def decision_points(seed: int, seats: int = 2) -> Iterator[tuple[Any, list[Any], dict[int, list[int]]]]:
    """(view, the deal's events as seat 0 saw them, seat 0's hands at its
    exchanges of the deal) at each of seat 0's decisions."""
    state = new_game("chicago", seats, seed)
    rng = random.Random(seed)
    events: list[Any] = []
    my_hands: dict[int, list[int]] = {}
    cursor = 0
    while not state.is_terminal():
        for audience, event in state.events[cursor:]:
            if type(event).__name__ == "DealStarted":
                events, my_hands = [], {}
            if audience in (PUBLIC, 0):
                events.append(event)
        cursor = len(state.events)
        seat = state.current_player()
        legal = state.legal_actions()
        if seat == 0:
            view = state.view(0)
            if view.phase == "exchange":
                my_hands[view.exchange_round] = [CARD_INT[c] for c in view.hand]
            yield view, list(events), dict(my_hands)
        state.apply_action(rng.choice(legal))
