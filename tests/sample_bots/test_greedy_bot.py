"""The built-in bot `greedy`: unit tests of `choose` on hand-built views, a
strength test against the uniform-random bot, and a protocol round trip."""

from __future__ import annotations

import ast
from pathlib import Path

import msgspec
import pytest
from botsession import imported_modules, one_request

from protocol.chicago import CallChicago, ChicagoView, Exchange, TakeOpen, TrickRecord
from protocol.common import PlayCard, PlayedCard
from referee.bots import greedy
from referee.games.base import Deal
from referee.games.cards import parse_cards
from referee.games.playout import new_game, play_game, random_policy

choose = greedy.choose


# ------------------------------------------------------------------ helpers


def explicit_deal(dealer: int, hands: dict[int, str], n: int) -> Deal:
    """A deck that deals `hands[seat]` to each named seat (rest in order)."""
    fixed = {s: parse_cards(h) for s, h in hands.items()}
    used = {c for cards in fixed.values() for c in cards}
    rest = [c for c in range(52) if c not in used]
    deck = []
    for i in range(5 * n):
        seat = (dealer + 1 + i) % n
        cards = fixed.get(seat)
        deck.append(cards[i // n] if cards else rest.pop(0))
    return Deal(dealer, tuple(deck + rest))


def engine_decision(hand: str, n: int = 2, preset: str | None = None):
    """State at the first exchange decision, eldest (seat 1, dealer 0) holding `hand`."""
    state = new_game("chicago", n, 7, preset=preset, deals=[explicit_deal(0, {1: hand}, n)])
    assert state.current_player() == 1
    return state, state.view(1), state.legal_actions()


def discard_of(hand: str, **kw) -> set[str]:
    _, view, legal = engine_decision(hand, **kw)
    action = choose(view, legal)
    assert isinstance(action, Exchange)
    return set(action.discard)


def make_view(**fields) -> ChicagoView:
    base = dict(
        seat=0,
        n_players=2,
        phase="trick",
        deal=1,
        dealer=1,
        active=[0, 1],
        tiebreak=False,
        target_score=52,
        scores=[0, 0],
        hand=[],
        exchange_round=0,
        stock_size=32,
        discard_size=10,
        open_card=None,
        exchanges=[],
        showdowns=[],
        revealed=[],
        chicago_declarer=None,
        trick_number=1,
        leader=0,
        trick=[],
        tricks=[],
        tricks_won=[0, 0],
    )
    base.update(fields)
    return ChicagoView(**base)


def plays(hand: str, legal: str | None = None, **fields) -> str:
    """The card `choose` plays; `legal` defaults to every card in `hand`."""
    view = make_view(hand=hand.split(), **fields)
    options = [PlayCard(card=c) for c in (legal or hand).split()]
    action = choose(view, options)
    assert action in options
    return action.card


def led(seat: int, card: str) -> list[PlayedCard]:
    return [PlayedCard(seat=seat, card=card)]


# ------------------------------------------------------------------ exchange


def test_keeps_a_pair_and_draws_three():
    assert discard_of("Ks Kd 7c 4h 2s") == {"7c", "4h", "2s"}


def test_keeps_trips_and_two_pair():
    assert discard_of("9s 9h 9d 5c 2h") == {"5c", "2h"}
    assert discard_of("Js Jh 4d 4c 8s") == {"8s"}


@pytest.mark.parametrize(
    "hand",
    ["5s 6h 7d 8c 9s", "As 9s 6s 3s 2s", "Qs Qh Qd 7c 7s", "8s 8h 8d 8c 2s", "Ah 2h 3h 4h 5h"],
)
def test_breaks_nothing_good(hand):
    assert discard_of(hand) == set()


def test_draws_to_a_flush_or_open_straight_early():
    assert discard_of("As 9s 6s 3s Kd") == {"Kd"}
    assert discard_of("5s 6h 7d 8c Kd") == {"Kd"}


def test_no_pair_keeps_high_cards():
    assert discard_of("As Kd 8c 5h 2s") == {"8c", "5h", "2s"}


def test_last_round_keeps_a_high_kicker_for_the_last_trick():
    state, view, legal = engine_decision("8s 8h Ac 5d 2h")
    # A scored round that is not the last draws three to the pair ...
    assert set(choose(view, legal).discard) == {"Ac", "5d", "2h"}
    # ... the last round (unscored, then tricks) keeps the ace for the last trick.
    last = msgspec.structs.replace(view, exchange_round=3)
    assert set(choose(last, legal).discard) == {"5d", "2h"}
    # With the rules known, round 2 of cardgames_zone (2 rounds) is the last one.
    zone = new_game("chicago", 2, 1, preset="cardgames_zone").rules
    round2 = msgspec.structs.replace(view, exchange_round=2)
    assert set(choose(round2, legal, zone).discard) == {"5d", "2h"}
    assert set(choose(round2, legal, state.rules).discard) == {"Ac", "5d", "2h"}


def test_kopstopp_passes():
    view = make_view(phase="exchange", exchange_round=1, hand=["8s", "8h", "Ac", "5d", "2h"], trick_number=0)
    assert choose(view, [Exchange(discard=[])]) == Exchange(discard=[])


def test_take_open_only_when_it_improves():
    def take(hand: str, card: str) -> bool:
        view = make_view(phase="take_open", exchange_round=1, hand=hand.split(), open_card=card, trick_number=0)
        action = choose(view, [TakeOpen(take=False), TakeOpen(take=True)])
        return action.take

    assert take("9s 9h 5d 5c", "9d")  # full house
    assert not take("9s 9h 5d 5c", "2h")  # a hidden card may still fill it
    assert take("As 9s 6s 3s", "Ks")  # flush
    assert not take("As 9s 6s 3s", "Kd")


# ------------------------------------------------------------------ chicago


def _calls(hand: str, n: int = 2) -> bool:
    view = make_view(
        phase="chicago_call",
        hand=hand.split(),
        scores=[20] + [0] * (n - 1),
        n_players=n,
        active=list(range(n)),
        tricks_won=[0] * n,
        trick_number=0,
        leader=None,
    )
    return choose(view, [CallChicago(call=False), CallChicago(call=True)]).call


def test_calls_chicago_only_with_a_monster_hand():
    assert _calls("As Ah Ad Ac Ks")
    assert _calls("Ah Kh Qh Jh 2h")
    assert _calls("As Ks Ah Kh Ad", n=4)
    weak = ["Ah Kh Qd Jc 9s", "As Ks 7h 5d 2c", "Ac Ad Ah 9s 4c", "Ks Kh Kd Kc Qs", "As Ah Kd 7c 2s"]
    for hand in weak:
        assert not _calls(hand), hand


def test_ineligible_never_calls():
    view = make_view(phase="chicago_call", hand=["As", "Ah", "Ad", "Ac", "Ks"], trick_number=0)
    assert choose(view, [CallChicago(call=False)]) == CallChicago(call=False)


# ------------------------------------------------------------------ tricks


def test_follows_suit_with_the_lowest_card():
    card = plays("As Kd 9d 5d 4c", legal="Kd 9d 5d", trick=led(1, "3d"), leader=1)
    assert card == "5d"


def test_void_sheds_the_lowest_card_not_the_winner():
    assert plays("Ah 9h 7d 5d 3s", trick=led(1, "8c"), leader=1) == "3s"


def test_leads_low_and_saves_the_ace():
    assert plays("Ah Kd 7d 5s 3c") == "3c"


def test_keeps_the_winner_for_the_last_trick():
    # Trick 4: win it cheaply with the 7 and lead the ace to the last trick.
    history = [
        TrickRecord(
            number=i + 1,
            leader=lead,
            winner=1,
            cards=[PlayedCard(seat=lead, card=a), PlayedCard(seat=1 - lead, card=b)],
        )
        for i, (lead, a, b) in enumerate([(0, "2s", "3s"), (1, "4h", "2h"), (1, "4d", "2d")])
    ]
    card = plays("Ac 7c", trick=led(1, "5c"), leader=1, trick_number=4, tricks=history, tricks_won=[0, 3])
    assert card == "7c"


def test_breaks_an_opponents_chicago_when_it_can():
    card = plays("Ac 7c 2h", legal="Ac 7c", trick=led(1, "Kc"), leader=1, chicago_declarer=1)
    assert card == "Ac"


def test_own_chicago_leads_the_top_cards():
    assert plays("As Ks Ah Kh Ad", chicago_declarer=0) in {"As", "Ah", "Ad"}


# ------------------------------------------------------------------ whole games


def _greedy(rules=None):
    def policy(d):
        action = choose(d.view, d.legal, rules)
        assert any(action == a for a in d.legal)
        return action

    return policy


def _first_place_rate(n: int, games: int, base_seed: int, preset: str | None = None) -> float:
    firsts = 0
    for i in range(games):
        seed = base_seed + i
        me = i % n  # rotate greedy through the seats
        state = new_game("chicago", n, seed, preset=preset)
        policies = [_greedy(state.rules) if s == me else random_policy(seed * 7 + s) for s in range(n)]
        result = play_game(state, policies)
        firsts += result.winner == me
    return firsts / games


def test_beats_random_heads_up():
    rate = _first_place_rate(2, 300, base_seed=1000)
    assert rate >= 0.65, rate


@pytest.mark.parametrize("n", [3, 4])
def test_first_more_often_than_fair_share_with_more_players(n):
    rate = _first_place_rate(n, 60, base_seed=2000 + 100 * n)
    assert rate > 1 / n + 0.25, rate


@pytest.mark.parametrize("preset", ["cardgames_zone", "cardgames_zone_short", "swedish_common"])
@pytest.mark.parametrize("n", [2, 4])
def test_plays_every_preset_legally(preset, n):
    for seed in range(4):
        state = new_game("chicago", n, seed, preset=preset)
        # Without the rules (as a bare `choose(view, legal)`) and with them.
        policies = [_greedy(state.rules if s % 2 else None) for s in range(n)]
        play_game(state, policies)
        assert state.is_terminal()


# ------------------------------------------------------------------ packaging


def test_imports_only_protocol_stdlib_and_its_own_hands():
    """No engine: greedy reads as a bot writer would write one."""
    source = Path(greedy.__file__)
    referee_imports = {
        node.module
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("referee")
    }
    assert referee_imports == {"referee.bots.greedy_hands"}
    assert imported_modules(source) <= {"__future__", "protocol", "random", "sys", "collections", "referee"}
    assert imported_modules(source.with_name("greedy_hands.py")) <= {"__future__", "collections"}


def test_speaks_the_protocol(tmp_path):
    state = new_game("chicago", 2, 3)
    hello, reply = one_request("greedy", state, "chicago", ["greedy", "random"], tmp_path)
    assert hello.name == "greedy"
    assert reply.id == 5
    state.verify_action(reply.action)
