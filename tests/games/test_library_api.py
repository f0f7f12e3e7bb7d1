"""The engine as a library: the public view, order-free exchanges, decks as
card strings, and rule errors in plain words."""

from __future__ import annotations

import pytest

from protocol.chicago import Exchange
from referee.errors import ConfigError
from referee.games import (
    PUBLIC,
    Deal,
    get_game,
    new_game,
    parse_cards,
    play_game,
    random_policy,
)
from referee.games.rules import build_rules

DECK = (
    "As Ks Qs Js Ts 9s 8s 7s 6s 5s 4s 3s 2s Ah Kh Qh Jh Th 9h 8h 7h 6h 5h 4h 3h 2h "
    "Ad Kd Qd Jd Td 9d 8d 7d 6d 5d 4d 3d 2d Ac Kc Qc Jc Tc 9c 8c 7c 6c 5c 4c 3c 2c"
)


@pytest.mark.parametrize(("game", "players"), [("chicago", 2), ("chicago", 4), ("ghost-euchre", 3)])
def test_the_public_view_holds_no_hand_during_and_after_the_game(game: str, players: int) -> None:
    state = new_game(game, players, seed=3)
    assert state.view(state.current_player()).hand  # a seat sees its own hand
    assert state.view(PUBLIC).hand == []
    assert state.view(PUBLIC).seat == PUBLIC
    play_game(state, [random_policy(s) for s in range(players)])
    assert state.current_player() == PUBLIC  # after game over
    assert state.view(PUBLIC).hand == []


@pytest.mark.parametrize("seat", [-2, 2, 7])
def test_a_seat_that_does_not_exist_has_no_view(seat: int) -> None:
    state = new_game("chicago", 2, seed=3)
    with pytest.raises(ValueError, match="seats are 0-1"):
        state.view(seat)


def test_an_exchange_is_legal_whatever_the_order_of_its_cards() -> None:
    state = new_game("chicago", 2, seed=1)
    legal = state.legal_actions()
    pair = next(a for a in legal if len(a.discard) == 3)
    backwards = Exchange(discard=list(reversed(pair.discard)))
    assert backwards == pair
    assert backwards in legal
    state.apply_action(backwards)


def test_a_deck_may_be_given_as_card_strings() -> None:
    as_string = Deal(0, DECK)
    as_list = Deal(0, DECK.split())
    as_ints = Deal(0, tuple(parse_cards(DECK)))
    assert as_string == as_list == as_ints
    a = new_game("chicago", 2, seed=1, deals=[as_string])
    b = new_game("chicago", 2, seed=1, deals=[as_ints])
    assert a.view(0).hand == b.view(0).hand and len(a.view(0).hand) == 5


@pytest.mark.parametrize("deck", [("x",) * 52, (52,) + tuple(range(51)), (True,) * 52])
def test_a_bad_deck_says_what_a_deck_is(deck: tuple) -> None:
    with pytest.raises(ConfigError, match="card"):
        Deal(0, deck)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"target_score": 0}, "rule option 'target_score' is 0; it must be a whole number from 1 to 10000"),
        ({"exact_tie_policy": "suit"}, "(did you mean 'suit_order'?); it must be one of all_tied, nobody, suit_order"),
        ({"one_open": "yes"}, "rule option 'one_open' is \"yes\"; it must be true or false"),
        ({"score_floor": "x"}, "it must be a whole number (or null for none)"),
        ({"hand_points": {"XX": 1}}, "unknown key 'XX'; valid keys: 1P"),
        ({"target": 30}, "unknown chicago rule option 'target' (did you mean 'target_score'?)"),
    ],
)
def test_rule_errors_are_in_plain_words(options: dict, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_rules(get_game("chicago"), None, options)
    assert words in str(info.value)
    assert "Expected `" not in str(info.value) and "$." not in str(info.value)


def test_an_unknown_preset_gets_a_did_you_mean() -> None:
    with pytest.raises(ConfigError, match=r"did you mean 'cardgames_zone'\?"):
        build_rules(get_game("chicago"), "cardgame_zone")
