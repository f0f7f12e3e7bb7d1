"""The search bots' Chicago exchange (`referee/bots/search_exchange.py`):
it keeps what a poker player keeps, answers with an element of `legal`, and
gives the same answer for the same random stream."""

from __future__ import annotations

import itertools
import random
from types import SimpleNamespace

import pytest

from protocol.chicago import ChicagoRules, Exchange
from referee.bots.search_exchange import best_exchange
from referee.games.cards import CARD_INT, CARD_STR


def _all_exchanges(hand: list[str]) -> list[Exchange]:
    return [Exchange(discard=list(cards)) for n in range(6) for cards in itertools.combinations(hand, n)]


def _choose(hand: str, round_number: int = 1, seed: int = 1) -> Exchange:
    cards = hand.split()
    view = SimpleNamespace(hand=cards, exchange_round=round_number, active=[0, 1], seat=0, dealer=1, scores=[0, 0])
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


def test_a_two_seat_last_round_values_trick_winners_exactly() -> None:
    """The exact trick figure of the last round: keeping aces is worth more than
    drawing five new cards, and with 15 points a sure Chicago hand is worth more
    than the last trick alone."""
    from referee.bots.search_exchange import _two_seat_trick_values
    from referee.bots.search_tricks import CALL_MARGIN_POINTS

    hand = [CARD_INT[c] for c in ["Ah", "Kh", "Ad", "Kd", "Ac"]]
    keep_all, change_all = Exchange(discard=[]), Exchange(discard=["Ah", "Kh", "Ad", "Kd", "Ac"])
    rng = random.Random(3)
    unseen = [c for c in range(52) if c not in hand]
    refills = [rng.sample(unseen, 5) for _ in range(60)]
    values = {}
    for points in (0, 20):
        view = SimpleNamespace(hand=[CARD_STR[c] for c in hand], active=[0, 1], seat=0, dealer=1, scores=[points, 0])
        values[points] = _two_seat_trick_values(
            view, ChicagoRules(), hand, [keep_all, change_all], refills, unseen, random.Random(4), None
        )
    assert values[0][0] > values[0][1] + 1.5  # a random five, leading, takes it about 60 % of the time
    assert values[0][0] == pytest.approx(2.5)  # the top cards of three suits: the last trick every time (half of +5)
    assert values[20][0] == pytest.approx((15 - CALL_MARGIN_POINTS) / 2)  # a sure Chicago, less the call's margin


def test_the_rounds_ahead_value_a_kept_pair_over_a_fresh_hand() -> None:
    """Before the last round the hand goes on: a kept pair of aces keeps scoring
    in the later showdowns and takes last tricks; five new cards seldom do as well."""
    from referee.bots.search_exchange import _later_rounds, _opponent_values

    hand = [CARD_INT[c] for c in ["Ah", "Ad", "7c", "4s", "2h"]]
    unseen = [c for c in range(52) if c not in hand]
    rng = random.Random(2)
    opponents = _opponent_values(unseen, rng, True, False)
    actions = [Exchange(discard=["7c", "4s", "2h"]), Exchange(discard=["Ah", "Ad", "7c", "4s", "2h"])]
    pair, fresh = _later_rounds(ChicagoRules(), 0, hand, actions, unseen, opponents, 1, rng)
    assert pair > fresh + 0.5


def _later_two_seat(hand: list[str], points: int, deadline=None) -> tuple[list[float], list[float]]:
    """The rounds-ahead figures of keeping all and changing all, at a two-seat
    table with `points` to the seat (the exact trick phase) and without a view
    (the rough last-trick odds), on the same random stream."""
    from referee.bots.search_exchange import _later_rounds, _opponent_values

    cards = [CARD_INT[c] for c in hand]
    unseen = [c for c in range(52) if c not in cards]
    actions = [Exchange(discard=[]), Exchange(discard=list(hand))]
    view = SimpleNamespace(hand=hand, active=[0, 1], seat=0, dealer=1, scores=[points, 0])
    figures = []
    for v in (view, None):
        rng = random.Random(5)
        opponents = _opponent_values(unseen, rng, True, False)
        figures.append(_later_rounds(ChicagoRules(), 1, cards, actions, unseen, opponents, 1, rng, v, None, deadline))
    return figures[0], figures[1]


def test_the_rounds_ahead_play_a_two_seat_trick_phase_out_exactly() -> None:
    """A royal flush kept to the end is a sure Chicago for the seat that leads:
    played out exactly it is worth the Chicago less the call's margin, half of
    the swing, where the rough odds give its ace 60 % of the last trick."""
    from referee.bots.search_tricks import CALL_MARGIN_POINTS

    royal = ["As", "Ks", "Qs", "Js", "Ts"]
    exact, rough = _later_two_seat(royal, 20)
    assert exact[0] - rough[0] == pytest.approx((15 - CALL_MARGIN_POINTS) / 2 - 0.6 * 5)
    exact, rough = _later_two_seat(royal, 0)  # no points to call: the last trick, every time
    assert exact[0] - rough[0] == pytest.approx(5 / 2 - 0.6 * 5)
    assert exact[1] != rough[1]  # a fresh hand is played out too, not given the odds


def test_the_rounds_ahead_fall_back_to_the_odds_when_the_clock_runs_short() -> None:
    passed = SimpleNamespace(passed=lambda: True)
    exact, rough = _later_two_seat(["Kh", "Qd", "9c", "6s", "3h"], 20, deadline=passed)
    assert exact == rough
