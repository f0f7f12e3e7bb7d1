"""A state built from a position plays on exactly like the game it was taken
from: positions met in seeded random play are described, rebuilt, and both
states are played on with the same actions to the end of the game."""

from __future__ import annotations

import copy
import itertools
import random

import pytest
from positions_helpers import TABLES, random_positions

from referee.games import PUBLIC, new_game, position_of, state_from_position


def play_in_lockstep(original, rebuilt, rng: random.Random, max_steps: int | None = None) -> int:
    """Play both on with the same random actions (to the end, or `max_steps`);
    compare views, legal lists, events and, at the end, the results."""
    start = len(original.events)
    steps = 0
    while max_steps is None or steps <= max_steps:
        assert rebuilt.current_player() == original.current_player()
        assert rebuilt.is_terminal() == original.is_terminal()
        for seat in [PUBLIC, *range(original.n_players)]:
            assert rebuilt.view(seat) == original.view(seat)
        assert len(rebuilt.events) == len(original.events) - start
        recent = min(8, len(rebuilt.events))  # the newest events, each step; all of them at the end
        assert rebuilt.events[len(rebuilt.events) - recent :] == original.events[len(original.events) - recent :]
        if original.is_terminal():
            break
        legal = list(original.legal_actions())
        assert list(rebuilt.legal_actions()) == legal
        action = legal[rng.randrange(len(legal))]
        original.apply_action(action)
        rebuilt.apply_action(action)
        steps += 1
    assert rebuilt.events == original.events[start:]
    if original.is_terminal():
        assert rebuilt.result() == original.result()
    return steps


@pytest.mark.parametrize(("game", "n", "preset"), TABLES)
def test_rebuilt_positions_play_on_like_the_original(game: str, n: int, preset: str | None) -> None:
    checked = 0
    for seed in range(4):
        for state in itertools.islice(random_positions(game, n, preset, seed, every=0.02), 6):
            position = position_of(state)
            rebuilt = state_from_position(position, state.rules)
            assert position_of(rebuilt) == position
            fork = copy.deepcopy(state)  # the game itself plays on unchanged
            play_in_lockstep(fork, rebuilt, random.Random(checked), max_steps=60)
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize(("game", "n", "preset"), TABLES)
def test_a_rebuilt_game_ends_with_the_same_result(game: str, n: int, preset: str | None) -> None:
    state = next(random_positions(game, n, preset, seed=11, every=0.05))
    rebuilt = state_from_position(position_of(state), state.rules)
    assert play_in_lockstep(state, rebuilt, random.Random(3)) > 0
    assert rebuilt.is_terminal()


@pytest.mark.parametrize(("game", "n", "preset"), TABLES)
def test_every_phase_of_the_game_is_met_and_rebuilt(game: str, n: int, preset: str | None) -> None:
    phases = set()
    for seed in range(4):
        for state in itertools.islice(random_positions(game, n, preset, seed, every=0.5), 400):
            position = position_of(state)
            phases.add(position.phase)
            rebuilt = state_from_position(position, state.rules)
            assert rebuilt.view(state.current_player()) == state.view(state.current_player())
            assert list(rebuilt.legal_actions()) == list(state.legal_actions())
    wanted = {"exchange", "trick"} if game == "chicago" else {"bidding", "name_trump", "trick"}
    if preset == "swedish_common":
        wanted |= {"take_open", "chicago_call"}
    assert wanted <= phases


def test_later_deals_and_reshuffles_come_from_the_seed_as_in_play() -> None:
    """A four-seat Chicago game reshuffles its discards now and then; the rebuilt
    state draws the same cards after the position and deals the same next decks."""
    reshuffled = 0
    for seed in range(30):
        for state in random_positions("chicago", 4, None, seed, every=0.05):
            if any(type(e).__name__ == "StockReshuffled" for _, e in state.events[-30:]):
                reshuffled += 1
            rebuilt = state_from_position(position_of(state), state.rules)
            fork = copy.deepcopy(state)
            decks_before = len(fork.dealt_decks())
            play_in_lockstep(fork, rebuilt, random.Random(seed), max_steps=150)
            assert rebuilt.dealt_decks() == fork.dealt_decks()[decks_before:]
            break
    assert reshuffled >= 1


def test_explicit_deals_after_the_position_are_used() -> None:
    from referee.games import Deal

    state = new_game("chicago", 2, 5)
    deck = Deal(dealer=0, deck=tuple(range(51, -1, -1)))
    rebuilt = state_from_position(position_of(state), state.rules, deals=[deck])
    while rebuilt.deal_number == 1:
        rebuilt.apply_action(rebuilt.legal_actions()[0])
    assert rebuilt.dealt_decks()[0] == deck
    assert new_game("ghost_euchre", 3, 1).deal_number == 1
