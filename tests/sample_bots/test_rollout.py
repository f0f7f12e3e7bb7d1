"""The playout policies of the built-in search bots (`referee/bots/rollout.py`):
they only ever pick legal actions, always finish a deal, replay from a seed,
and keep what a plain poker player keeps.
"""

from __future__ import annotations

import random

import pytest

from protocol.chicago import Exchange
from referee.bots.rollout import chicago_keep, exchange_candidates, finish_deal, playout_action
from referee.games import new_game, parse_cards

GAMES = [("chicago", 2), ("chicago", 3), ("chicago", 4), ("ghost_euchre", 3)]


def _advance(state, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        if state.is_terminal():
            return
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])


@pytest.mark.parametrize(("game", "seats"), GAMES)
def test_playouts_are_legal_and_finish_the_deal(game: str, seats: int) -> None:
    for seed in range(30):
        rng = random.Random(seed)
        state = new_game(game, seats, seed)
        _advance(state, rng, rng.randrange(40))
        if state.is_terminal():
            continue
        deal = state.deal_number
        probe = state.clone()
        while not probe.is_terminal() and probe.deal_number == deal:
            action = playout_action(probe, rng)
            probe.verify_action(action)  # raises IllegalAction if the policy cheats
            probe.apply_action(action)
        before = state.scores()
        gains = finish_deal(state, random.Random(seed))
        assert state.is_terminal() or state.deal_number == deal + 1
        assert gains == [a - b for a, b in zip(state.scores(), before)]


def test_playouts_are_seeded() -> None:
    state = new_game("chicago", 3, 17)
    one, two = state.clone(), state.clone()
    finish_deal(one, random.Random(5))
    finish_deal(two, random.Random(5))
    assert one.events == two.events


@pytest.mark.parametrize(
    ("hand", "last", "kept"),
    [
        ("5s 5h Kd Ac 3c", False, "5s 5h"),
        ("5s 5h Kd Ac 3c", True, "5s 5h Ac"),
        ("Ks 9s 8s 5s 3h", False, "Ks 9s 8s 5s"),
        ("9c Th Jd Qs Kc", False, "9c Th Jd Qs Kc"),
        ("2c 7h 9d Qs Kc", False, "Kc Qs"),
        ("2c 7h 9d Js 4c", False, "Js"),
    ],
)
def test_the_plain_exchange_keep(hand: str, last: bool, kept: str) -> None:
    assert sorted(chicago_keep(parse_cards(hand), last)) == sorted(parse_cards(kept))


def test_exchange_candidates_are_legal_and_distinct() -> None:
    for seed in range(20):
        state = new_game("chicago", 2, seed)
        candidates = exchange_candidates(state)
        legal = list(state.legal_actions())
        assert all(isinstance(c, Exchange) and c in legal for c in candidates)
        assert len({frozenset(c.discard) for c in candidates}) == len(candidates)
        assert Exchange(discard=[]) in candidates and 4 <= len(candidates) <= 14
