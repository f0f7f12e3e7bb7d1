"""The search bots' two-seat Chicago endgame (`referee/bots/search_tricks.py`):
the exact solver against hand-worked deals and a naive minimax, the
keep model behind the sampled hands, and the Chicago call from positions."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from positions_helpers import chicago_call_position

from protocol.chicago import CallChicago, ChicagoRules
from referee.bots import search
from referee.bots.search_model import PlausibleHands, card_bits, hand_plausible
from referee.bots.search_tricks import Solver, chicago_call, two_seat
from referee.games import seat_knowledge
from referee.games.cards import CARD_INT, CARD_STR

RULES = ChicagoRules()


def _bits(cards: str) -> int:
    return card_bits([CARD_INT[c] for c in cards.split()])


def _value(mine: str, theirs: str, i_lead: bool = True, declarer: int = 0, rules: ChicagoRules = RULES) -> int:
    return Solver(rules).value((_bits(mine), _bits(theirs), i_lead, -1, declarer))


def test_one_card_each_the_leader_wins_unless_beaten_in_suit() -> None:
    assert _value("Ah", "Kh") == 5
    assert _value("2h", "Kh") == -5
    assert _value("2h", "Ac") == 5  # the other seat cannot follow: the led suit wins
    assert _value("Kh", "2c", i_lead=False) == -5


def test_the_leader_gives_up_trick_four_to_win_the_last() -> None:
    """Ah 2c against Kh 3c, leading: Ah first wins trick four, but then 2c
    loses to 3c; 2c first loses it, and the other seat must lead Kh into Ah."""
    assert _value("Ah 2c", "Kh 3c") == 5


def test_the_follower_ducks_to_keep_its_ace() -> None:
    # The other seat leads a heart: playing 2h under it keeps Ah for the last trick.
    assert _value("Ah 2h", "Kh Qh", i_lead=False) == 5
    # Nothing to duck with: Kh must follow Ah, and 2c must follow 3c.
    assert _value("Kh 2c", "Ah 3c", i_lead=False) == -5


def test_a_chicago_needs_every_trick() -> None:
    assert _value("As Ks", "Qs 2h", declarer=1) == 15
    assert _value("Ah Kd", "Qh Ad", declarer=1) == -15  # Kd loses to Ad: the call fails
    assert _value("Qs 2h", "As Ks", i_lead=False, declarer=-1) == -15
    assert _value("Qh Ad", "Ah Kd", i_lead=False, declarer=-1) == 15  # breaking the other seat's call


def test_the_deuce_bonus_counts_when_the_last_trick_is_won_with_a_two() -> None:
    rules = ChicagoRules(last_trick_two_bonus=10)
    assert _value("2h", "Kc", rules=rules) == 10
    assert _value("3h", "Kc", rules=rules) == 5


def _naive(mine: frozenset[int], theirs: frozenset[int], my_turn: bool, led: int, declarer: int) -> int:
    """Plain minimax over every legal card, no memo, no cut-off: the reference."""
    hand = mine if my_turn else theirs
    cards = sorted(hand)
    if led >= 0 and any(c & 3 == led & 3 for c in cards):
        cards = [c for c in cards if c & 3 == led & 3]
    values = []
    for c in cards:
        m, t = (mine - {c}, theirs) if my_turn else (mine, theirs - {c})
        if led < 0:
            values.append(_naive(m, t, not my_turn, c, declarer))
            continue
        follower_wins = c & 3 == led & 3 and c > led
        i_win = follower_wins == my_turn
        if declarer and (declarer == 1) != i_win:
            values.append(-15 if declarer == 1 else 15)
        elif not m:
            values.append((15 if declarer == 1 else -15) if declarer else (5 if i_win else -5))
        else:
            values.append(_naive(m, t, i_win, -1, declarer))
    return max(values) if my_turn else min(values)


@pytest.mark.parametrize("declarer", [0, 1, -1])
def test_the_solver_agrees_with_plain_minimax_on_random_deals(declarer: int) -> None:
    rng = random.Random(declarer + 7)
    for _ in range(150):
        n = rng.randint(1, 4)
        cards = rng.sample(range(52), 2 * n)
        mine, theirs = cards[:n], cards[n:]
        i_lead = declarer == 1 or (declarer == 0 and rng.random() < 0.5)
        solver = Solver(RULES)
        got = solver.value((card_bits(mine), card_bits(theirs), i_lead, -1, declarer))
        assert got == _naive(frozenset(mine), frozenset(theirs), i_lead, -1, declarer), (
            [CARD_STR[c] for c in mine],
            [CARD_STR[c] for c in theirs],
            i_lead,
        )


def test_the_keep_model_reads_a_hand_as_its_exchange_left_it() -> None:
    hand = [CARD_INT[c] for c in ["5h", "5d", "Kc", "9s", "2h"]]
    assert hand_plausible(hand, 2)  # changed three: kept the fives
    assert hand_plausible(hand, 3)  # changed two: the fives and a king kicker
    junk = [CARD_INT[c] for c in ["9h", "7d", "5c", "3s", "2h"]]
    assert not hand_plausible(junk, 2)  # nothing in it a player keeps two of
    assert hand_plausible(junk, 0)  # changed all five
    assert not hand_plausible([CARD_INT[c] for c in ["As", "Ks", "7d", "7c", "2h"]], 5)  # one pair does not stand pat
    assert hand_plausible([CARD_INT[c] for c in ["As", "Ad", "7d", "7c", "2h"]], 5)  # two pair does


def _call_position(mine: str, theirs: str, exchanged: tuple[int, ...]) -> tuple[object, object]:
    state = chicago_call_position((tuple(mine.split()), tuple(theirs.split())), exchanged)
    return state, state.rules


def _decision(state: object, rules: object, seed: int = 1) -> search.Decision:
    view = state.view(0)  # type: ignore[attr-defined]
    knowledge = seat_knowledge(view, [], rules)
    deadline = search.Deadline(float("inf"), 1000)
    return search.Decision(
        view,
        state.legal_actions(),
        knowledge,
        rules,  # type: ignore[attr-defined]
        random.Random(seed),
        400,
        deadline,
    )


def test_the_other_seats_sampled_hand_follows_its_last_exchange() -> None:
    """After changing three cards a seat holds a pair far more often than a
    random five of the unseen cards does; its sampled cards are never ours."""
    state, rules = _call_position("Ah Kh Qd 9c 4s", "2s 2d 7c 8h Jd", (2, 3, 1, 1, 0, 3))
    decision = _decision(state, rules)
    view = decision.view
    rng = random.Random(5)
    hands = PlausibleHands(decision.knowledge, view)
    biased, uniform = Counter(), Counter()
    ours = {CARD_INT[c] for c in view.hand}
    for _ in range(400):
        hand = hands.draw(rng)[1]
        assert len(hand) == 5 and not ours & set(hand)
        biased[len({c >> 2 for c in hand}) < 5] += 1
        plain = decision.knowledge.sample_cards(rng)[1]
        uniform[len({c >> 2 for c in plain}) < 5] += 1
    assert biased[True] > uniform[True] + 100  # about 90 % against about 50 % for a random hand


def test_the_chicago_question_is_played_out_exactly_only_at_two_seats() -> None:
    """Two seats: the exact search answers it; three seats: the table's hand
    models do (`search_table`), as playouts in uniform worlds call Chicagos
    that fail; tricks are searched."""
    state, _ = _call_position("Ah Kh Qd 9c 4s", "2s 2d 7c 8h Jd", (2, 3, 1, 1, 0, 3))
    assert not search.heuristic(state.view(0)) and two_seat(state.view(0))
    hands = (("Ah", "Kh", "Qd", "9c", "4s"), ("2s", "2d", "7c", "7h", "Jd"), ("3c", "5d", "8s", "Ts", "Kc"))
    state3 = chicago_call_position(hands, (2, 0, 3, 1, 0, 2, 1, 0, 3))
    assert state3.view(0).phase == "chicago_call" and not two_seat(state3.view(0))
    assert not search.heuristic(state3.view(0))
    state3.apply_action(CallChicago(call=False))
    while state3.view(state3.current_player()).phase == "chicago_call":
        state3.apply_action(CallChicago(call=False))
    assert state3.view(state3.current_player()).phase == "trick"
    assert not search.heuristic(state3.view(state3.current_player()))


def test_a_sure_chicago_is_called_and_a_weak_hand_is_not() -> None:
    state, rules = _call_position("Ah Kh Ad Kd Ac", "2s 3s 4s 5c 7d", (2, 3, 1, 1, 0, 3))
    assert chicago_call(_decision(state, rules), Solver(rules)) == CallChicago(call=True)
    state, rules = _call_position("Ah 9h 8d 5c 3s", "2s 3c 4s 5s 7d", (2, 3, 1, 1, 0, 3))
    assert chicago_call(_decision(state, rules), Solver(rules)) == CallChicago(call=False)


def test_every_keep_size_is_reachable_from_some_hand() -> None:
    """The keep model never rules an exchange count out altogether."""
    rng = random.Random(3)
    for kept in range(6):
        assert any(hand_plausible(rng.sample(range(52), 5), kept) for _ in range(500)), kept
