"""Chicago at three and four seats (`referee/bots/search_table.py`): every
other seat's hand from its history model, joined into worlds, and the
Chicago call judged in them."""

from __future__ import annotations

import itertools
import random

from positions_helpers import chicago_call_position
from seat_decisions import decision_points

from protocol.chicago import CallChicago, ShowdownRecord
from referee.bots.search_table import table_call, table_hands
from referee.games import get_game
from referee.games.cards import CARD_INT
from referee.games.poker import category_code, evaluate
from referee.games.rules import build_rules

RULES = build_rules(get_game("chicago"), None, None)


def _ints(cards: str) -> list[int]:
    return [CARD_INT[c] for c in cards.split()]


def _three_seats(mine: str, flush: str) -> tuple[object, dict[int, list[int]]]:
    """Seat 0 to call; seat 1 won both showdowns with `flush` (a flush) and
    stood pat in the last exchange; seat 2 changed three cards in it."""
    hands = (tuple(mine.split()), tuple(flush.split()), ("3h", "4h", "8h", "Jc", "7c"))
    won = {"winners": [1], "category": "FL", "description": "a flush", "points": 5, "tied": []}
    state = chicago_call_position(
        hands,
        (3, 1, 2, 2, 0, 1, 5, 0, 3),
        showdowns=(ShowdownRecord(round=1, **won), ShowdownRecord(round=2, **won)),
    )
    my_hands = {1: _ints("3c 4d 9c Th 2c"), 2: _ints("9c 9h 4d Th Qd"), 3: _ints("9c 9h Qd Th 6d")}
    return state, my_hands


def test_a_seat_that_won_with_a_flush_and_stood_pat_holds_one_in_every_world() -> None:
    state, my_hands = _three_seats("Ah Kh Qd 9c 9s", "2s 5s 7s Js Ks")
    view = state.view(0)
    hands = table_hands(view, [], my_hands, RULES, random.Random(3))
    assert hands is not None
    rng = random.Random(5)
    mine = set(_ints(" ".join(view.hand))) | {c for h in my_hands.values() for c in h}
    for _ in range(100):
        world = hands.draw(rng)
        assert world is not None and set(world) == {1, 2}
        assert category_code(evaluate(world[1])) == "FL"
        assert not (set(world[1]) & set(world[2])) and not (set(world[1]) | set(world[2])) & mine


def test_a_sure_chicago_is_called_and_a_hopeless_one_passed() -> None:
    state, my_hands = _three_seats("As Ks Qs Js Ts", "2d 5d 7d 9d Kd")
    legal = state.legal_actions()
    assert table_call(state.view(0), legal, [], my_hands, RULES, random.Random(1)) == CallChicago(call=True)
    state, my_hands = _three_seats("Ah Kh Qd 9c 9s", "2s 5s 7s Js Ks")
    legal = state.legal_actions()
    assert table_call(state.view(0), legal, [], my_hands, RULES, random.Random(1)) == CallChicago(call=False)
    assert table_call(state.view(0), legal, [], None, RULES, random.Random(1)) == CallChicago(call=False)


def _calls(seed: int, seats: int):
    return ((v, e, h) for v, e, h in decision_points(seed, seats) if v.phase == "chicago_call")


def test_joined_worlds_fit_what_the_seat_has_seen() -> None:
    """In real deals at three and four seats: no card in two hands, none this
    seat holds or has held (until a reshuffle), each hand its seat's size,
    and the models give worlds for most calls."""
    asked = modelled = 0
    for seats in (3, 4):
        for seed in range(2):
            for view, events, my_hands in itertools.islice(_calls(seed, seats), 8):
                asked += 1
                hands = table_hands(view, events, my_hands, RULES, random.Random(seed))
                world = hands.draw(random.Random(seed)) if hands is not None else None
                if world is None:
                    continue
                modelled += 1
                held = set(_ints(" ".join(view.hand)))
                if not any(type(e).__name__ == "StockReshuffled" for e in events):
                    held |= {c for h in my_hands.values() for c in h}
                assert set(world) == set(view.active) - {0}
                seen: set[int] = set()
                for cards in world.values():
                    assert len(cards) == 5 and not set(cards) & (held | seen)
                    seen |= set(cards)
    assert asked >= 24
    assert modelled >= asked * 0.7
