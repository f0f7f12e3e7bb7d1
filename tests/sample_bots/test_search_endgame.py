"""The search bots' exact endgame at three and four Chicago seats
(`referee/bots/search_endgame.py`): hand-worked positions, a plain max^n
without memo as the reference, and the engine's own scoring of the lines
the solver plays, and pimc's use of it."""

from __future__ import annotations

import random

import pytest

from protocol.chicago import ChicagoRules
from protocol.common import PlayCard
from referee.bots import search
from referee.bots.pimc import pimc
from referee.bots.rollout import playout_action
from referee.bots.search_endgame import EndgameSolver, endgame
from referee.games import seat_knowledge
from referee.games.cards import CARD_INT, CARD_STR
from referee.games.playout import new_game

RULES = ChicagoRules()


def _node(solver: EndgameSolver, hands: dict[int, str], to_act: int) -> tuple:
    return solver.node({s: [CARD_INT[c] for c in cards.split()] for s, cards in hands.items()}, to_act, [])


def _solve(hands: dict[int, str], to_act: int, me: int = 0, declarer: int | None = None, rules=RULES):
    solver = EndgameSolver(rules, sorted(hands), len(hands), me, declarer)
    points, card = solver.solve(_node(solver, hands, to_act))
    return points, CARD_STR[card]


def test_the_leader_gives_up_trick_four_to_lead_into_its_ace() -> None:
    """As first wins trick four, but then 2h loses to 3h. 2h first loses
    trick four to 3h, and seat 1 must lead 4s into the As."""
    assert _solve({0: "2h As", 1: "3h 4s", 2: "5c 6c"}, to_act=0) == ((5, 0, 0), "2h")
    solver = EndgameSolver(RULES, [0, 1, 2], 3, 0, None)
    node = _node(solver, {0: "2h As", 1: "3h 4s", 2: "5c 6c"}, 0)
    final, after_ace = solver.after(node, CARD_INT["As"])
    assert final is None and solver.solve(after_ace)[0] == (0, 5, 0)


def test_a_seat_that_cannot_win_plays_against_the_searching_seat() -> None:
    """Seat 1 leads and takes nothing either way: 2c lets seat 2's clubs take
    both tricks, 2d lets seat 0's diamonds. The tie goes against the seat
    searching."""
    hands = {0: "Ad Kd", 1: "2c 2d", 2: "Ac Kc"}
    assert _solve(hands, to_act=1, me=0) == ((0, 0, 5), "2c")
    assert _solve(hands, to_act=1, me=2) == ((5, 0, 0), "2d")


def test_a_chicago_at_three_seats_needs_every_trick() -> None:
    assert _solve({0: "As Ks", 1: "Qs 2h", 2: "3d 4d"}, to_act=0, declarer=0) == ((15, 0, 0), "Ks")
    points, _ = _solve({0: "Ah Kd", 1: "Qh Ad", 2: "2c 3c"}, to_act=0, declarer=0)
    assert points == (-15, 0, 0)  # Kd loses to Ad whichever is led first


def test_the_deuce_bonus_counts_at_three_seats() -> None:
    rules = ChicagoRules(last_trick_two_bonus=10)
    assert _solve({0: "2h", 1: "Kc", 2: "Qd"}, to_act=0, rules=rules) == ((10, 0, 0), "2h")
    assert _solve({0: "3h", 1: "Kc", 2: "Qd"}, to_act=0, rules=rules) == ((5, 0, 0), "3h")


def _utility(points: tuple[int, ...], seat: int, active: list[int]) -> float:
    return points[seat] - (sum(points) - points[seat]) / (len(active) - 1)


def _naive(hands: dict[int, frozenset[int]], order: list[int], trick: list[tuple[int, int]], me: int, declarer):
    """Plain max^n over every legal card, no memo: (points, card) for the seat to act."""
    n = len(order)
    seat = order[len(trick)]
    cards = sorted(hands[seat])
    if trick and any(c & 3 == trick[0][1] & 3 for c in cards):
        cards = [c for c in cards if c & 3 == trick[0][1] & 3]
    best = None
    for c in cards:
        after = {s: (h - {c} if s == seat else h) for s, h in hands.items()}
        played = trick + [(seat, c)]
        if len(played) < n:
            points = _naive(after, order, played, me, declarer)[0]
        else:
            led = played[0][1] & 3
            winner = max(((s, x) for s, x in played if x & 3 == led), key=lambda sx: sx[1])[0]
            out = [0] * (max(order) + 1)
            if declarer is not None and winner != declarer:
                out[declarer] = -RULES.chicago_penalty
            elif not after[winner]:
                out[declarer if declarer is not None else winner] = (
                    RULES.chicago_points if declarer is not None else RULES.last_trick_points
                )
            else:
                turn = order.index(winner)
                out = list(_naive(after, order[turn:] + order[:turn], [], me, declarer)[0])
            points = tuple(out)
        key = (_utility(points, seat, order), -_utility(points, me, order) if seat != me else 0.0)
        if best is None or key > best[0]:
            best = (key, points, c)
    assert best is not None
    return best[1], best[2]


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("declarer", [None, 0])
def test_the_solver_agrees_with_plain_max_n_on_random_deals(n: int, declarer: int | None) -> None:
    rng = random.Random(n * 10 + (declarer or 0))
    for _ in range(150):
        size = rng.randint(1, 3)
        deck = rng.sample(range(52), size * n)
        hands = {s: frozenset(deck[s * size : (s + 1) * size]) for s in range(n)}
        leader = rng.randrange(n)
        me = rng.randrange(n)
        order = [(leader + k) % n for k in range(n)]
        bits = tuple(sum(1 << c for c in hands[s]) for s in range(n))
        solver = EndgameSolver(RULES, list(range(n)), n, me, declarer)
        assert solver.solve((bits, leader, -1, -1, -1, 0)) == _naive(hands, order, [], me, declarer)


def _state_node(state, solver: EndgameSolver, active: list[int]) -> tuple:
    """The node of an engine state: the trick so far played through `after`, as the bot builds it."""
    return solver.node({s: state.hand(s) for s in active}, state.current_player(), state.trick())


def _late_trick(state) -> bool:
    return state.phase() == "trick" and len(state.hand(state.current_player())) <= 3


@pytest.mark.parametrize("n", [3, 4])
def test_the_engine_scores_the_solved_line_as_the_solver_said(n: int) -> None:
    """Real deals played by the playout rule to the last three tricks, then
    by the solver: the engine's last-trick or Chicago score is the one the
    solver predicted, and the deal is over."""
    rng = random.Random(n)
    checked = 0
    for seed in range(60):
        state = new_game("chicago", n, seed)
        while not state.is_terminal() and not _late_trick(state):
            state.apply_action(playout_action(state, rng))
        if state.is_terminal():
            continue
        view = state.view(state.current_player())
        assert endgame(view)
        solver = EndgameSolver(state.rules, view.active, n, view.seat, state.declarer())
        predicted = solver.solve(_state_node(state, solver, view.active))[0]
        deal = state.deal_number
        state.events.clear()
        while not state.is_terminal() and state.deal_number == deal:  # the trick phase ends the deal
            state.apply_action(PlayCard(card=CARD_STR[solver.solve(_state_node(state, solver, view.active))[1]]))
        scored = [0] * n
        for _, event in state.events:
            if type(event).__name__ == "ScoreChanged" and event.reason in ("last_trick", "chicago", "chicago_failed"):
                scored[event.seat] += event.points
        assert tuple(scored) == predicted
        checked += 1
    assert checked >= 40


def test_only_late_tricks_at_three_and_four_seats_are_played_exactly() -> None:
    state = new_game("chicago", 3, 1)
    rng = random.Random(1)
    while state.phase() != "trick":
        state.apply_action(playout_action(state, rng))
    assert not endgame(state.view(state.current_player()))  # five cards: playouts
    while len(state.hand(state.current_player())) > 3:
        state.apply_action(playout_action(state, rng))
    assert endgame(state.view(state.current_player()))
    two = new_game("chicago", 2, 1)
    while two.phase() != "trick":
        two.apply_action(playout_action(two, rng))
    while len(two.hand(two.current_player())) > 3:
        two.apply_action(playout_action(two, rng))
    assert not endgame(two.view(two.current_player()))  # two seats: `search_tricks` solves all of it


def test_pimc_keeps_the_boss_for_the_last_trick_and_throws_the_deuce() -> None:
    """Last to play to trick four, void in the led suit, holding the highest
    heart left and a deuce: the deuce can never take the last trick and the
    ace takes it whenever hearts are led, so in every world the deuce goes."""
    state = new_game("chicago", 3, 14)
    rng = random.Random(14)
    view = state.view(state.current_player())
    while not (view.deal == 49 and view.phase == "trick" and len(view.hand) == 2 and len(view.trick) == 2):
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        view = state.view(state.current_player())
    assert sorted(view.hand) == ["2d", "Ah"] and [p.card for p in view.trick] == ["7s", "Jh"]
    assert endgame(view)
    decision = search.Decision(
        view,
        state.legal_actions(),
        seat_knowledge(view, [], state.rules),
        state.rules,
        random.Random(1),
        400,
        search.Deadline(float("inf"), 1000),
    )
    assert pimc(decision) == PlayCard(card="2d")
