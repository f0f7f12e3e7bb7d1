"""`state.clone()` and the accessors playout policies read (the built-in
search bots' `referee/bots/rollout.py`).

A clone must play on exactly as the original would (same legal actions,
views, events and result) and share nothing with it; the accessors must say
what the view and the legal actions say.
"""

from __future__ import annotations

import random

import pytest

from protocol.chicago import Exchange
from protocol.common import PlayCard
from protocol.euchre import Bid
from referee.games import new_game
from referee.games.cards import CARD_INT, SUITS

GAMES = [("chicago", 2), ("chicago", 3), ("chicago", 4), ("ghost_euchre", 3)]


def _advance(state, rng: random.Random, steps: int) -> None:
    for _ in range(steps):
        if state.is_terminal():
            return
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])


@pytest.mark.parametrize(("game", "seats"), GAMES)
def test_a_clone_plays_on_like_the_original(game: str, seats: int) -> None:
    for seed in range(12):
        rng = random.Random(seed)
        state = new_game(game, seats, seed)
        _advance(state, rng, rng.randrange(60))
        twin = state.clone()
        a, b = random.Random(seed * 7), random.Random(seed * 7)
        while not state.is_terminal():
            assert twin.current_player() == state.current_player()
            legal = list(state.legal_actions())
            assert list(twin.legal_actions()) == legal
            seat = state.current_player()
            assert twin.view(seat) == state.view(seat)
            state.apply_action(legal[a.randrange(len(legal))])
            twin.apply_action(legal[b.randrange(len(legal))])
        assert twin.is_terminal()
        assert twin.result() == state.result()
        assert twin.events == state.events
        assert twin.dealt_decks() == state.dealt_decks()


@pytest.mark.parametrize(("game", "seats"), GAMES)
def test_playing_a_clone_leaves_the_original_alone(game: str, seats: int) -> None:
    rng = random.Random(3)
    state = new_game(game, seats, 3)
    _advance(state, rng, 5)
    seat = state.current_player()
    before = (state.view(seat), list(state.legal_actions()), len(state.events), state.scores())
    twin = state.clone()
    _advance(twin, random.Random(1), 200)
    assert (state.view(seat), list(state.legal_actions()), len(state.events), state.scores()) == before


def _bid_value(bid: object) -> int:
    return 6 if bid == "moon" else int(bid)  # type: ignore[call-overload]


@pytest.mark.parametrize(("game", "seats"), GAMES)
def test_the_playout_accessors_say_what_the_view_and_the_legal_actions_say(game: str, seats: int) -> None:
    for seed in range(6):
        rng = random.Random(seed)
        state = new_game(game, seats, seed)
        while not state.is_terminal():
            seat = state.current_player()
            view = state.view(seat)
            legal = list(state.legal_actions())
            assert state.phase() == view.phase
            assert sorted(state.hand(seat)) == sorted(CARD_INT[c] for c in view.hand)
            assert [(p.seat, CARD_INT[p.card]) for p in view.trick] == state.trick()
            plays = sorted(CARD_INT[a.card] for a in legal if isinstance(a, PlayCard))
            if view.phase == "trick":
                assert sorted(state.playable_cards(seat)) == plays
            if game == "chicago":
                assert state.exchange_round() == view.exchange_round
                assert state.declarer() == view.chicago_declarer
                if view.phase == "exchange":
                    assert state.exchange_allowed(seat) == (legal != [Exchange(discard=[])])
            else:
                assert state.trump() == (None if view.trump is None else SUITS.index(view.trump))
                if view.phase == "bidding":
                    assert state.open_bids() == [_bid_value(a.bid) for a in legal if isinstance(a, Bid)]
            state.apply_action(legal[rng.randrange(len(legal))])
        assert state.phase() == "game_over"
