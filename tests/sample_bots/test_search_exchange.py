"""The search bots' Chicago exchange (`sample_bots/python/search_exchange.py`):
it keeps what a poker player keeps, answers with an element of `legal`, and
gives the same answer for the same random stream."""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path
from types import SimpleNamespace

from protocol.chicago import ChicagoRules, Exchange

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sample_bots" / "python"))
from search_exchange import best_exchange  # noqa: E402


def _all_exchanges(hand: list[str]) -> list[Exchange]:
    return [Exchange(discard=list(cards)) for n in range(6) for cards in itertools.combinations(hand, n)]


def _choose(hand: str, round_number: int = 1, seed: int = 1) -> Exchange:
    cards = hand.split()
    view = SimpleNamespace(hand=cards, exchange_round=round_number, active=[0, 1])
    legal = _all_exchanges(cards)
    action = best_exchange(view, legal, ChicagoRules(), random.Random(seed))
    assert action in legal
    return action


def test_a_made_flush_stands_pat() -> None:
    assert _choose("As Js 8s 5s 2s").discard == []


def test_a_pair_of_aces_is_kept_and_the_rest_drawn_to() -> None:
    action = _choose("Ah Ad 7c 4s 2h")
    assert set(action.discard) == {"7c", "4s", "2h"}


def test_the_last_round_keeps_the_ace_for_the_last_trick() -> None:
    """Before trick play the lone ace is worth keeping; a 7-high hand throws everything else."""
    action = _choose("Ac 9d 7h 4s 2h", round_number=3)
    assert "Ac" not in action.discard


def test_the_same_random_stream_gives_the_same_exchange() -> None:
    hands = ["Kh Qd 9c 6s 3h", "Th 9h 8d 7c 2s", "5h 5d Kc Ks 2s"]
    for hand in hands:
        assert _choose(hand, seed=7) == _choose(hand, seed=7)
