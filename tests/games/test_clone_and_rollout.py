"""`state.clone()`, the accessors playout policies read, and the playout
policies search bots use (`referee.games.rollout`).

A clone must play on exactly as the original would (same legal actions,
views, events and result) and share nothing with it; the accessors must say
what the view and the legal actions say; the playout policies must only
ever pick legal actions and always finish a deal.
"""

from __future__ import annotations

import random

import pytest

from protocol.chicago import Exchange
from protocol.common import PlayCard
from protocol.euchre import Bid
from referee.games import new_game, parse_cards
from referee.games.cards import CARD_INT, SUITS
from referee.games.rollout import chicago_keep, exchange_candidates, finish_deal, playout_action

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
    finish_deal(twin, random.Random(1))
    assert (state.view(seat), list(state.legal_actions()), len(state.events), state.scores()) == before


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
