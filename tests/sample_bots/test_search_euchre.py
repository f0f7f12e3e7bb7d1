"""The search bots in Ghost Hand Euchre: which search answers which decision.

ismcts bids (and swaps) by pimc's paired flat search, because its tree
judged bids worse; trump and trick play stay the tree's. These tests build
positions through the public position API and call the bots' search
functions directly."""

from __future__ import annotations

import random

import pytest

from protocol.common import PlayCard
from protocol.euchre import Bid, EuchreRules, Pass, SwapGhost
from referee.bots import ismcts, pimc, search
from referee.games import EuchrePosition, seat_knowledge, state_from_position

RULES = EuchreRules()
# Seat 1 (eldest under dealer 0) holds both black jacks and the top spades;
# the others and the ghost share the rest of the 24 cards.
STRONG = ("Ah Kh Qh Th 9h 9s", "Js Jc As Ks Qs Ts", "Ad Kd Qd Td 9d Jd")
GHOST = "Jh Ac Kc Qc Tc 9c"


def _decision(position: EuchrePosition, seed: int = 3, iterations: int = 200) -> search.Decision:
    state = state_from_position(position, RULES)
    seat = state.current_player()
    view = state.view(seat)
    knowledge = seat_knowledge(view, [], RULES)
    deadline = search.Deadline(float("inf"), 1000)
    share = iterations / (search.DEFAULT_BUDGET_MS * ismcts.ITERATIONS_PER_MS)
    return search.Decision(
        view, state.legal_actions(), knowledge, RULES, random.Random(seed), iterations, deadline, share
    )


def _bidding() -> EuchrePosition:
    hands = tuple(tuple(h.split()) for h in STRONG)
    return EuchrePosition(dealer=0, hands=hands, ghost=tuple(GHOST.split()))


def test_ismcts_bids_by_the_flat_search_at_its_share_of_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def flat(decision: search.Decision) -> object:
        calls.append(decision.iterations)
        return decision.legal[-1]

    monkeypatch.setattr(pimc, "pimc", flat)
    decision = _decision(_bidding())
    assert decision.view.phase == "bidding" and decision.seat == 1
    assert ismcts.ismcts(decision) == decision.legal[-1]
    # 200 tree iterations are 100 ms of the tree's budget: 250 playouts of pimc's.
    assert calls == [round(200 / ismcts.ITERATIONS_PER_MS * pimc.ITERATIONS_PER_MS)]


def test_a_hand_with_both_bowers_bids_and_a_hand_of_nines_does_not() -> None:
    strong = ismcts.ismcts(_decision(_bidding()))
    assert isinstance(strong, Bid)
    weak_hands = (
        ("Js", "Jc", "As", "Ks", "Qs", "Ts"),
        ("9s", "9h", "9d", "9c", "Th", "Td"),
        ("Ad", "Kd", "Qd", "Jd", "Jh", "Ah"),
    )
    rest = ("Kh", "Qh", "Ac", "Kc", "Qc", "Tc")
    weak = ismcts.ismcts(_decision(EuchrePosition(dealer=0, hands=weak_hands, ghost=rest)))
    assert isinstance(weak, (Pass, SwapGhost))


def test_ismcts_plays_tricks_with_its_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(decision: search.Decision) -> object:
        raise AssertionError("trick play is the tree's")

    monkeypatch.setattr(pimc, "pimc", refuse)
    hands = tuple(tuple(h.split()) for h in STRONG)
    position = EuchrePosition(
        dealer=0, hands=hands, ghost=tuple(GHOST.split()), phase="trick", bids=(4, None, None), trump="s"
    )
    decision = _decision(position)
    assert decision.view.phase == "trick"
    assert isinstance(ismcts.ismcts(decision), PlayCard)
