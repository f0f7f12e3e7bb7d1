"""Decks built to deal chosen hands deal exactly those hands, for every seat
count and dealer; a request that cannot be dealt is an error."""

from __future__ import annotations

import random

import pytest

from referee.games import PositionError, chicago_deck, euchre_deck, new_game
from referee.games.cards import CARD_STR


def pick(rng: random.Random, pack: list[str], k: int) -> list[str]:
    got = rng.sample(pack, k)
    for c in got:
        pack.remove(c)
    return got


@pytest.mark.parametrize("n", [2, 3, 4])
def test_chicago_deals_the_chosen_hands_and_stock(n: int) -> None:
    rng = random.Random(n)
    for dealer in range(n):
        pack = list(CARD_STR)
        hands = {s: pick(rng, pack, 5) for s in range(n) if s != (dealer + 1) % n}  # one seat left to chance
        stock = pick(rng, pack, 4)
        state = new_game("chicago", n, seed=9, deals=[chicago_deck(n, dealer, hands, stock=stock, seed=dealer)])
        assert state._dealer == dealer
        for s, cards in hands.items():
            assert [CARD_STR[c] for c in state._hands[s]] == cards
        assert len(state._hands[(dealer + 1) % n]) == 5
        assert [CARD_STR[c] for c in state._stock[::-1][:4]] == stock
        state.apply_action(state.legal_actions()[-1])  # the eldest discards all five: drawn from the top
        eldest = (dealer + 1) % n
        assert next(e.cards for a, e in state.events if a == eldest and type(e).__name__ == "Drew")[:4] == stock


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_euchre_deals_the_chosen_hands_and_ghost(dealer: int) -> None:
    rng = random.Random(dealer)
    pack = [CARD_STR[c] for c in range(28, 52)]
    hands = {0: pick(rng, pack, 6), 2: pick(rng, pack, 6)}
    ghost = pick(rng, pack, 6)
    state = new_game("ghost_euchre", 3, seed=4, deals=[euchre_deck(dealer, hands, ghost=ghost)])
    assert state._dealer == dealer
    for s, cards in hands.items():
        assert [CARD_STR[c] for c in state._hands[s]] == cards
    assert [CARD_STR[c] for c in state._ghost] == ghost
    assert len(state._hands[1]) == 6  # the seat left to chance gets six of the cards not chosen
    assert {CARD_STR[c] for c in state._hands[1]} <= set(pack)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: chicago_deck(3, 0, {0: "As Ks Qs Js Ts", 1: "As 2h 3h 4h 5h"}), "chosen twice"),
        (lambda: chicago_deck(2, 0, {0: "As Ks Qs Js"}), "a hand is 5 cards, not 4"),
        (lambda: chicago_deck(2, 2, {}), "no seat 2"),
        (lambda: chicago_deck(2, 0, {3: "As Ks Qs Js Ts"}), "no seat 3"),
        (lambda: chicago_deck(5, 0, {}), "2-4 players"),
        (lambda: chicago_deck(2, 0, {0: "As Ks Qs Js Tx"}), "bad card"),
        (lambda: euchre_deck(0, {0: "As Ks Qs Js Ts 2s"}), "not in this game's pack"),
        (lambda: euchre_deck(0, {}, ghost="As Ks"), "ghost hand is 6 cards"),
        (lambda: euchre_deck(0, {1: "As Ks Qs Js Ts 9s"}, ghost="As Kh Qh Jh Th 9h"), "chosen twice"),
    ],
)
def test_a_deal_that_cannot_be_is_an_error(call, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        call()
