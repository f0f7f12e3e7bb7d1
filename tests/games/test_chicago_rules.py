"""Swedish Chicago rules CH-01..CH-25, the presets and every rule option (rules.md §1, §2, §5.1, §7).

Every scenario uses explicit deals (real cards) and scripted actions. Every
expected score was computed by hand from rules.md, never copied from the
engine. Seats are numbered clockwise; with dealer P0 the exchange/lead order
is P1, P2, ..., P0. `start(..., scores=[...])` sets the scores a game is
resumed from (a fixture shortcut for "P1 has 20 points" in §5.1).
"""

from __future__ import annotations

import random

import pytest

from protocol.chicago import (
    CallChicago,
    ChicagoDecision,
    ChicagoRules,
    Drew,
    Exchange,
    Exchanged,
    FirstDealerCut,
    HandRevealed,
    OpenCard,
    OpenCardDecision,
    Showdown,
    StockReshuffled,
    TakeOpen,
)
from protocol.common import (
    CardPlayed,
    DealEnded,
    DealStarted,
    GameEnded,
    HandDealt,
    PlayCard,
    ScoreChanged,
    TrickWon,
)
from referee.errors import ConfigError, IllegalAction, RefereeError
from referee.games import CHICAGO
from referee.games.base import PUBLIC, TERMINAL, Deal
from referee.games.cards import CARD_STR, RANKS, parse_cards
from referee.games.playout import new_game
from referee.games.rules import build_rules, parse_option

# ---------------------------------------------------------------- helpers


def seat_order(n: int, dealer: int, active: list[int] | None = None) -> list[int]:
    """Eldest first, dealer last (CH-05), among the active seats."""
    seats = sorted(active) if active is not None else list(range(n))
    order, s = [], dealer
    for _ in seats:
        s = next((s + k) % n for k in range(1, n + 1) if (s + k) % n in seats)
        order.append(s)
    return order


def deck_for(n: int, dealer: int, hands: dict[int, str], stock: str = "", active=None) -> tuple[int, ...]:
    """A 52-card deck dealing `hands` one card at a time from eldest (CH-05);
    the stock starts with `stock` (top first), then the unused cards in ascending order."""
    order = seat_order(n, dealer, active)
    k = len(order)
    deck: list[int] = [-1] * (5 * k)
    for idx, seat in enumerate(order):
        cards = parse_cards(hands[seat])
        assert len(cards) == 5, hands[seat]
        for j, c in enumerate(cards):
            deck[j * k + idx] = c
    top = parse_cards(stock)
    deck += top + [c for c in range(52) if c not in deck and c not in top]
    assert sorted(deck) == list(range(52)), "duplicate card in the scenario"
    return tuple(deck)


def start(n, hands, *, dealer=0, stock="", preset=None, options=None, scores=None, seed=1, then=()):
    """A game whose first deal is `hands`; later deals are `then` (then seeded shuffles)."""
    deals = [Deal(dealer, deck_for(n, dealer, hands, stock))] + list(then)
    state = new_game("chicago", n, seed, preset=preset, options=options, deals=deals)
    if scores is not None:
        state._scores[:] = scores  # resume from these scores (fixture shortcut)
    return state


def ex(state, seat: int, discard: str = "") -> None:
    """Seat `seat` exchanges `discard` (empty = pass)."""
    assert state.current_player() == seat, (state.current_player(), seat)
    state.apply_action(Exchange(discard=discard.split()))


def pass_round(state, order) -> None:
    for seat in order:
        ex(state, seat)


def call(state, seat: int, yes: bool) -> None:
    assert state.view(seat).phase == "chicago_call"
    assert state.current_player() == seat
    state.apply_action(CallChicago(call=yes))


def play(state, *tricks: str) -> None:
    """Each trick is 'seat:card seat:card ...' in playing order."""
    for trick in tricks:
        for item in trick.split():
            seat, card = item.split(":")
            assert state.current_player() == int(seat), (trick, state.current_player())
            state.apply_action(PlayCard(card=card))


def evs(state, kind, audience=None):
    return [e for a, e in state.events if isinstance(e, kind) and (audience is None or a == audience)]


def deal_events(state, deal: int = 1):
    """(audience, event) pairs of one deal, DealStarted to DealEnded inclusive."""
    out, inside = [], False
    for a, e in state.events:
        if isinstance(e, DealStarted):
            inside = e.deal == deal
        if inside:
            out.append((a, e))
        if isinstance(e, DealEnded) and e.deal == deal:
            break
    return out


def score_log(state, deal: int | None = None):
    events = state.events if deal is None else deal_events(state, deal)
    return [(e.seat, e.points, e.total, e.reason) for _, e in events if isinstance(e, ScoreChanged)]


def showdowns(state, deal: int | None = None):
    events = state.events if deal is None else deal_events(state, deal)
    return [e for _, e in events if isinstance(e, Showdown)]


def scores_after_deal(state, deal: int = 1):
    return next(e.scores for e in evs(state, DealEnded) if e.deal == deal)


def same_cards(a, b) -> bool:
    return sorted(parse_cards(list(a))) == sorted(parse_cards(b if isinstance(b, str) else list(b)))


# Frequently used hands (3 players, dealer P0: P1 and P2 and P0 in that order).
PAIR_K = "Kh Kd 9c 5s 2h"  # one pair, kings
HC_A = "Ac Qd 8h 6s 3c"  # ace high
HC_Q = "Qs 9d 8s 5c 3h"  # queen high
HC_J = "Jh Td 7c 4s 2d"  # jack high


# ================================================================ §5.1 worked examples


def test_c01_trips_score_three_and_nobody_else_scores():
    """C01 (CH-10, CH-11): SD1 with four hands; only the best (3K) scores."""
    s = start(4, {1: "Kh Kd 8c 5s 2h", 2: "7c 7d 4h 4s Qc", 3: "9s 9h 9d Ah 3c", 0: "Ac Kc Qd Js 9c"})
    pass_round(s, [1, 2, 3, 0])
    assert s.scores() == [0, 0, 0, 3]
    (sd,) = showdowns(s)
    assert (sd.round, sd.winners, sd.category, sd.points, sd.tied) == (1, [3], "3K", 3, [])
    assert sd.description is None  # CH-24: the hand is not shown, so not named
    assert score_log(s) == [(3, 3, 3, "showdown")]


C03 = {1: "Kh Kd 9c 5s 2h", 2: "Ks Kc 9d 5h 2c", 0: "Qs Qd 8h 7c 3d"}


@pytest.mark.parametrize(
    "policy, expected",
    [("nobody", [0, 0, 0]), ("all_tied", [0, 1, 1]), ("suit_order", [0, 0, 1])],
)
def test_c03_exact_tie_at_the_top_under_each_exact_tie_policy(policy, expected):
    """C03 (CH-10, exact_tie_policy): nobody scores, P0's lower pair included.
    all_tied gives both kings +1; suit_order (c<d<h<s) gives P2 (Ks beats Kh)."""
    s = start(3, C03, options={"exact_tie_policy": policy})
    pass_round(s, [1, 2, 0])
    assert s.scores() == expected
    (sd,) = showdowns(s)
    assert sd.category == "1P" and sd.tied == [1, 2]
    assert sd.winners == {"nobody": [], "all_tied": [1, 2], "suit_order": [2]}[policy]
    assert sd.points == (0 if policy == "nobody" else 1)


def test_c04_queen_high_flush_beats_nine_high_flush():
    """C04 (CH-10, §3): flushes compare card by card."""
    s = start(3, {1: "9h 7h 5h 3h 2h", 2: "Qd 8d 6d 4d 3d", 0: "As Ac Kh Ks 7c"})
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 0, 5]
    assert showdowns(s)[0].category == "FL" and showdowns(s)[0].description is None


def test_ch10_hand_is_named_only_when_its_cards_are_shown():
    """CH-10/CH-24: with reveal_scoring_hand the scoring hand is shown and named."""
    s = start(3, {1: "9h 7h 5h 3h 2h", 2: "Qd 8d 6d 4d 3d", 0: "As Ac Kh Ks 7c"}, options={"reveal_scoring_hand": True})
    pass_round(s, [1, 2, 0])
    assert showdowns(s)[0].description == "flush, queen high"


C07 = {1: "Ac 2d 3h 4s 5c", 2: "Kh Kd 7c 6s 2h", 0: "Js 9d 8h 6c 3s"}


@pytest.mark.parametrize("ace_low, expected", [(True, [0, 4, 0]), (False, [0, 0, 1])])
def test_c07_wheel_straight_depends_on_ace_low_straight(ace_low, expected):
    """C07 (§3, ace_low_straight): A-2-3-4-5 is a straight (+4) or only ace high (P2's kings +1)."""
    s = start(3, C07, options={"ace_low_straight": ace_low})
    pass_round(s, [1, 2, 0])
    assert s.scores() == expected


C14 = {1: "Ah Kh 7c 7d 2s", 2: "Qh 9h 9c 4d 3s", 0: "Jh Th 8c 5d 6s"}
C14_TRICKS = ("1:Ah 2:Qh 0:Jh", "1:Kh 2:9h 0:Th", "1:7c 2:9c 0:8c", "2:4d 0:5d 1:7d", "1:2s 2:3s 0:6s")


def test_c14_last_trick_and_final_showdown_on_trick_start_hands():
    """C14 (CH-15, CH-16, CH-19): winners P1 P1 P2 P1 P0; P0 +5; final SD pair of 9s +1.
    Holding the same hands, P2 also wins SD1 and SD2 (+1 each): final 5/0/3."""
    s = start(3, C14)
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    assert s.view(1).phase == "trick"  # nobody has 15: no Chicago question
    play(s, *C14_TRICKS)
    assert [e.seat for e in evs(s, TrickWon)] == [1, 1, 2, 1, 0]
    assert score_log(s, 1) == [
        (2, 1, 1, "showdown"),
        (2, 1, 2, "showdown"),
        (0, 5, 5, "last_trick"),
        (2, 1, 3, "showdown"),
    ]
    final = showdowns(s, 1)[-1]
    assert (final.round, final.winners, final.category, final.description) == (0, [2], "1P", "pair of nines")
    assert scores_after_deal(s) == [5, 0, 3]
    assert s.deal_number == 2 and s.view(0).dealer == 1  # the deal passes clockwise


C15 = {1: "As Ks Qs Ah Kh", 2: "2s 3s 4h 5h 9d", 0: "Js 9s 8h 6h 4c"}
C15_TRICKS = ("1:As 2:2s 0:9s", "1:Ks 2:3s 0:Js", "1:Qs 2:9d 0:4c", "1:Ah 2:4h 0:6h", "1:Kh 2:5h 0:8h")


@pytest.mark.parametrize("after_chicago, final", [(True, 37), (False, 35)])
def test_c15_chicago_success(after_chicago, final):
    """C15 (CH-14, CH-17, CH-19): P1 at 20 declares and takes all five: +15 (no +5), then 2P +2 = 37.
    P1 starts at 16 and holds aces and kings through SD1 and SD2 (+2, +2) to have 20 at the call.
    With showdown_after_chicago=false the deal ends at 35."""
    s = start(3, C15, scores=[0, 16, 0], options={"showdown_after_chicago": after_chicago})
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 20, 0]
    call(s, 1, True)  # only P1 is eligible, so only P1 is asked
    play(s, *C15_TRICKS)
    log = score_log(s, 1)
    assert log[2] == (1, 15, 35, "chicago")
    assert not any(r == "last_trick" for *_, r in log)
    assert scores_after_deal(s) == [0, final, 0]
    assert len(showdowns(s, 1)) == (3 if after_chicago else 2)


C16 = {1: "As Ks Qs Jd 2c", 2: "3s 4s Ac 8h 9h", 0: "5s 5h 7h Kd Td"}


def test_c16_chicago_failure_stops_trick_play():
    """C16 (CH-17, CH-19): P2 takes trick 4, P1 18-15 = 3, no trick 5, nobody gets +5; final SD P0 +1.
    P0's pair of fives also wins SD1 and SD2: P0 ends with 3."""
    s = start(3, C16, scores=[0, 18, 0])
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    assert s.scores() == [2, 18, 0]
    call(s, 1, True)
    play(s, "1:As 2:3s 0:5s", "1:Ks 2:4s 0:7h", "1:Qs 2:8h 0:Td", "1:2c 2:Ac 0:5h")
    assert [e.seat for e in evs(s, TrickWon)] == [1, 1, 1, 2]
    assert score_log(s, 1)[2:] == [(1, -15, 3, "chicago_failed"), (0, 1, 3, "showdown")]
    assert len([e for _, e in deal_events(s) if isinstance(e, CardPlayed)]) == 12
    assert scores_after_deal(s) == [3, 3, 0]
    assert s.deal_number == 2


def test_c26_four_players_stock_runs_out_in_exchange_two():
    """C26 (CH-09): the 30 older discards become the stock, never P3's own 5; final 20/22/10."""
    deck = list(range(52))
    random.Random(26).shuffle(deck)
    s = new_game("chicago", 4, 7, deals=[Deal(0, tuple(deck))])

    def swap_all(seat):
        ex(s, seat, " ".join(s.view(seat).hand))

    for seat in (1, 2, 3, 0):
        swap_all(seat)
    v = s.view(0)
    assert (v.stock_size, v.discard_size) == (12, 20) and not s.is_terminal()
    swap_all(1)
    assert s.view(0).stock_size == 7
    swap_all(2)
    assert s.view(0).stock_size == 2
    p3_old = s.view(3).hand
    assert same_cards(p3_old, [CARD_STR[c] for c in deck[30:35]])
    swap_all(3)
    (reshuffle,) = evs(s, StockReshuffled)
    assert reshuffle.stock_size == 30
    v = s.view(0)
    assert (v.stock_size, v.discard_size) == (27, 5)
    p3 = set(parse_cards(s.view(3).hand))
    assert {deck[50], deck[51]} <= p3  # the 2 cards left in the old stock
    assert len(p3 & set(deck[:30])) == 3  # 3 from the 30 older discards
    assert not p3 & set(deck[30:35])  # never its own discards
    assert sorted(s._discards) == sorted(deck[30:35])  # P3's 5 start the new pile
    swap_all(0)
    v = s.view(0)
    hands = sum(len(s.view(x).hand) for x in range(4))
    assert (hands, v.stock_size, v.discard_size) == (20, 22, 10)
    assert hands + v.stock_size + v.discard_size == 52


# ================================================================ CH-01 components, CH-02 players


def test_ch01_explicit_deck_must_be_one_52_card_pack():
    """CH-01: 52 distinct cards; a deck with a duplicate or a missing card is refused."""
    good = list(range(52))
    with pytest.raises(ConfigError, match="52 cards"):
        new_game("chicago", 3, 0, deals=[Deal(0, tuple(good[:51] + [0]))])
    with pytest.raises(ConfigError, match="52 cards"):
        new_game("chicago", 3, 0, deals=[Deal(0, tuple(good[:51]))])
    s = new_game("chicago", 3, 0, deals=[Deal(0, tuple(good))])
    assert sorted(s.dealt_decks()[0].deck) == good


def test_ch01_ch23_aces_high_no_trumps_two_players():
    """CH-01/CH-15/CH-23: a 2 of the led suit beats an off-suit ace; 2 players, stock 42, eldest = non-dealer.
    P0 has aces full of kings: SD1 +6, SD2 +6, last trick +5, final SD +6 = 23."""
    s = start(2, {1: "2c 3d 4d 5d 6h", 0: "As Ah Ad Kh Ks"})
    v = s.view(1)
    assert (v.dealer, v.stock_size, v.discard_size) == (0, 42, 0)
    assert evs(s, DealStarted)[0].stock_size == 42
    for _ in range(3):
        pass_round(s, [1, 0])
    # P1's 6-high straight loses to the full house each time; P0 has 12 < 15 at the window.
    assert s.scores() == [12, 0] and s.view(0).phase == "trick" and s.current_player() == 1
    play(s, "1:2c 0:As", "1:3d 0:Ad", "0:Ah 1:6h", "0:Ks 1:4d", "0:Kh 1:5d")
    assert [(e.seat, e.card) for e in evs(s, TrickWon)] == [(1, "2c"), (0, "Ad"), (0, "Ah"), (0, "Ks"), (0, "Kh")]
    assert scores_after_deal(s) == [23, 0]


def test_ch23_two_players_eldest_is_the_non_dealer():
    """CH-23: with dealer P1, P0 exchanges first in every round and leads trick 1; the stock holds 42.
    P0's kings win SD1 and SD2 (+2)."""
    s = start(2, {0: PAIR_K, 1: HC_A}, dealer=1)
    assert s.view(0).stock_size == 42 and s.current_player() == 0
    for _ in range(3):
        pass_round(s, [0, 1])
    assert s.scores() == [2, 0] and s.view(1).phase == "trick" and s.current_player() == 0


@pytest.mark.parametrize("n", [0, 1, 5, 6])
def test_ch02_player_count_outside_2_to_4_is_rejected(n):
    """CH-02: N = 2..4 only."""
    with pytest.raises(RefereeError, match="2-4"):
        new_game("chicago", n, 0)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_ch02_two_to_four_players_deal_five_each(n):
    s = new_game("chicago", n, 5)
    assert [len(s.view(x).hand) for x in range(n)] == [5] * n
    assert s.view(0).stock_size == 52 - 5 * n


# ================================================================ CH-03 first dealer, CH-04 rotation


def _rank(card: str) -> int:
    return RANKS.index(card[0])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_ch03_low_cut_chooses_first_dealer_and_ties_cut_again(n):
    """CH-03 (first_dealer=low_cut): each seat cuts; the lowest rank deals; tied lowest cut again."""
    recuts = 0
    for seed in range(150):
        s = new_game("chicago", n, seed)
        audience, cut = s.events[0]
        assert audience == PUBLIC and isinstance(cut, FirstDealerCut)
        cutters = list(range(n))
        seen: list[str] = []
        for rnd in cut.rounds:
            assert [p.seat for p in rnd] == cutters
            seen += [p.card for p in rnd]
            low = min(_rank(p.card) for p in rnd)
            cutters = [p.seat for p in rnd if _rank(p.card) == low]
        assert len(set(seen)) == len(seen)  # cut from one deck
        assert cutters == [cut.dealer]
        recuts += len(cut.rounds) > 1
        assert evs(s, DealStarted)[0].dealer == cut.dealer == s.view(0).dealer
        # reproducible from the seed
        assert new_game("chicago", n, seed).events[0][1] == cut
    assert recuts > 0  # some seed had a tie for lowest


def test_ch03_seeded_random_first_dealer():
    """CH-03 option first_dealer=seeded_random: no cut cards, reproducible, every seat possible."""
    dealers = set()
    for seed in range(60):
        s = new_game("chicago", 4, seed, options={"first_dealer": "seeded_random"})
        cut = s.events[0][1]
        assert isinstance(cut, FirstDealerCut) and cut.rounds == []
        assert new_game("chicago", 4, seed, options={"first_dealer": "seeded_random"}).view(0).dealer == cut.dealer
        dealers.add(cut.dealer)
    assert dealers == {0, 1, 2, 3}


def _cautious(state) -> None:
    """Pass, never call Chicago, play the first legal card."""
    state.apply_action(state.legal_actions()[0])


@pytest.mark.parametrize("n, first", [(2, 1), (3, 2), (4, 2)])
def test_ch04_deal_passes_clockwise(n, first):
    """CH-04: after an explicit first deal by `first`, the dealers continue clockwise."""
    deck = tuple(random.Random(n).sample(range(52), 52))
    s = new_game("chicago", n, 3, deals=[Deal(first, deck)])
    while s.deal_number < 6 and not s.is_terminal():
        _cautious(s)
    dealers = [e.dealer for e in evs(s, DealStarted)]
    assert len(dealers) >= 5
    assert dealers == [(first + k) % n for k in range(len(dealers))]


# ================================================================ CH-05 deal, CH-06 exchange


def test_ch05_deal_one_at_a_time_from_eldest_and_stock_top():
    """CH-05: deck[i] goes to seat (dealer+1+i) mod N; the stock top is deck[5N]; discards empty."""
    deck = tuple(random.Random(5).sample(range(52), 52))
    s = new_game("chicago", 4, 0, deals=[Deal(2, deck)])
    for seat in range(4):
        mine = [deck[i] for i in range(20) if (2 + 1 + i) % 4 == seat]
        assert same_cards(s.view(seat).hand, [CARD_STR[c] for c in mine])
    dealt = [(a, e) for a, e in s.events if isinstance(e, HandDealt)]
    assert [a for a, _ in dealt] == [3, 0, 1, 2]  # private, eldest first
    assert all(a == e.seat for a, e in dealt)
    assert s.current_player() == 3
    assert s.view(3).stock_size == 32 and s.view(3).discard_size == 0
    hand = s.view(3).hand
    ex(s, 3, f"{hand[0]} {hand[1]}")
    drew = evs(s, Drew)[0]
    assert drew.cards == [CARD_STR[deck[20]], CARD_STR[deck[21]]]


def test_ch06_exchange_order_public_count_private_draw():
    """CH-06: one turn each from eldest to dealer; |D| is public, the drawn cards are private."""
    s = start(3, {2: PAIR_K, 0: HC_A, 1: HC_Q}, dealer=1, stock="2c 4c 6c 7s 9h Tc Jc Qc")
    assert s.current_player() == 2
    assert len(s.legal_actions()) == 32 and s.legal_actions()[0] == Exchange(discard=[])
    ex(s, 2, "9c 5s 2h")
    ex(s, 0)  # pass
    ex(s, 1, HC_Q)  # all five
    assert same_cards(s.view(2).hand, "Kh Kd 2c 4c 6c")
    assert same_cards(s.view(0).hand, HC_A)
    assert same_cards(s.view(1).hand, "7s 9h Tc Jc Qc")
    public = [(e.seat, e.count) for a, e in s.events if isinstance(e, Exchanged) and a == PUBLIC]
    assert public == [(2, 3), (0, 0), (1, 5)]
    drew = [(a, e.seat, e.cards) for a, e in s.events if isinstance(e, Drew)]
    assert drew == [(2, 2, ["2c", "4c", "6c"]), (1, 1, ["7s", "9h", "Tc", "Jc", "Qc"])]
    assert [(r.seat, r.count) for r in s.view(0).exchanges] == [(2, 3), (0, 0), (1, 5)]
    assert s.view(0).discard_size == 8 and s.view(0).stock_size == 37 - 8


# ================================================================ CH-07 exchanges and showdowns


def _showdown_rounds_before_tricks(state, order, exchanges):
    for _ in range(exchanges):
        pass_round(state, order)
    while state.view(0).phase == "chicago_call":  # swedish_common asks everyone
        state.apply_action(CallChicago(call=False))
    assert state.view(0).phase == "trick"
    return [sd.round for sd in showdowns(state)]


@pytest.mark.parametrize(
    "preset, options, rounds, expected",
    [
        ("gamerules", None, 3, [1, 2]),
        ("cardgames_zone", None, 2, [1, 2]),
        ("cardgames_zone_short", None, 2, [1, 2]),
        ("swedish_common", None, 3, [1, 2]),
        ("gamerules", {"exchanges": 3, "showdown_after": [True, True, True]}, 3, [1, 2, 3]),
        ("gamerules", {"exchanges": 2, "showdown_after": [True, False]}, 2, [1]),
        ("gamerules", {"exchanges": 1, "showdown_after": [False]}, 1, []),
    ],
)
def test_ch07_exchange_count_and_showdown_pattern(preset, options, rounds, expected):
    """CH-07: `exchanges` rounds, a showdown after round k iff showdown_after[k]; P1's kings score each."""
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, preset=preset, options=options)
    assert _showdown_rounds_before_tricks(s, [1, 2, 0], rounds) == expected
    assert s.scores() == [0, len(expected), 0]


# ================================================================ CH-08 köpstopp


def test_ch08_zone_threshold_46_forbids_exchanging_and_counts_this_deals_points():
    """CH-08 (cardgames_zone, T=46): 46 must pass, 45 may exchange; P2 reaches 46 in SD1 and must pass in round 2."""
    s = start(3, {1: HC_A, 2: PAIR_K, 0: HC_Q}, preset="cardgames_zone", scores=[0, 46, 45])
    assert s.legal_actions() == [Exchange(discard=[])]
    with pytest.raises(IllegalAction, match="CH-08"):
        s.verify_action(Exchange(discard=["Ac"]))
    ex(s, 1)
    assert len(s.legal_actions()) == 32  # P2 at 45
    ex(s, 2)
    ex(s, 0)
    assert s.scores() == [0, 46, 46]  # P2's kings +1 in SD1
    ex(s, 1)
    assert s.current_player() == 2 and s.legal_actions() == [Exchange(discard=[])]
    with pytest.raises(IllegalAction, match="threshold 46"):
        s.apply_action(Exchange(discard=["Kh"]))


@pytest.mark.parametrize(
    "preset, options, score, may_exchange",
    [
        ("gamerules", None, 51, True),  # no threshold in gamerules
        ("swedish_common", None, 41, True),
        ("swedish_common", None, 42, False),
        ("cardgames_zone_short", None, 45, True),
        ("gamerules", {"no_exchange_threshold": 10}, 10, False),
        ("gamerules", {"no_exchange_threshold": 10}, 9, True),
    ],
)
def test_ch08_threshold_per_preset_and_option(preset, options, score, may_exchange):
    """CH-08: null in gamerules, 42 in swedish_common, 46 in the zone presets, or any option value."""
    s = start(3, {1: HC_A, 2: PAIR_K, 0: HC_Q}, preset=preset, options=options, scores=[0, score, 0])
    assert (len(s.legal_actions()) == 32) is may_exchange
    if may_exchange:
        s.verify_action(Exchange(discard=["Ac", "Qd"]))
    else:
        with pytest.raises(IllegalAction, match="CH-08"):
            s.verify_action(Exchange(discard=["Ac", "Qd"]))


# ================================================================ CH-09 stock exhaustion


def _swap_all(state, seat):
    ex(state, seat, " ".join(state.view(seat).hand))


def test_ch09_stock_exhaustion_reshuffles_older_discards():
    """CH-09 (3 players, round 3): P2 draws the 2 stock cards, then 3 of the 35 older discards, never its own."""
    deck = tuple(random.Random(9).sample(range(52), 52))
    s = new_game("chicago", 3, 11, deals=[Deal(0, deck)])
    for _ in range(2):
        for seat in (1, 2, 0):
            _swap_all(s, seat)
    assert s.view(0).stock_size == 7 and not s.is_terminal()
    _swap_all(s, 1)  # stock 2
    own = set(parse_cards(s.view(2).hand))
    older = set(s._discards)  # 35 cards discarded before P2's turn
    assert len(older) == 35 and s.view(0).stock_size == 2
    last_two = set(s._stock)
    _swap_all(s, 2)
    assert evs(s, StockReshuffled)[-1].stock_size == 35
    hand = set(parse_cards(s.view(2).hand))
    assert last_two <= hand and len(hand & older) == 3 and not hand & own
    assert set(s._discards) == own and s.view(2).stock_size == 32
    _swap_all(s, 0)
    assert s.view(0).stock_size == 27 and s.view(0).discard_size == 10


def test_ch09_stock_empty_exactly_then_reshuffle_on_next_draw():
    """CH-09: the stock runs out exactly (no reshuffle yet); the next exchanger reshuffles all older discards."""
    deck = tuple(random.Random(99).sample(range(52), 52))
    s = new_game("chicago", 4, 2, deals=[Deal(0, deck)])
    for seat in (1, 2, 3, 0):
        _swap_all(s, seat)
    _swap_all(s, 1)
    _swap_all(s, 2)  # stock 2
    hand = s.view(3).hand
    ex(s, 3, f"{hand[0]} {hand[1]}")
    assert s.view(0).stock_size == 0 and not evs(s, StockReshuffled)
    assert s.view(0).discard_size == 32
    _swap_all(s, 0)
    (reshuffle,) = evs(s, StockReshuffled)
    assert reshuffle.stock_size == 32
    assert (s.view(0).stock_size, s.view(0).discard_size) == (27, 5)


# ================================================================ CH-10 showdown


def test_ch10_high_card_best_means_nobody_scores():
    """CH-10: if the best hand is only high card, nobody scores."""
    s = start(3, {1: HC_A, 2: HC_Q, 0: HC_J})
    pass_round(s, [1, 2, 0])
    (sd,) = showdowns(s)
    assert (sd.winners, sd.category, sd.points, sd.tied, sd.description) == ([], "HC", 0, [], None)
    assert s.scores() == [0, 0, 0] and not score_log(s)


def test_ch10_showdowns_are_independent_ch13_break_up_is_revealed():
    """CH-10/CH-13: P1's full house scores SD1 (+6); P1 breaks it up (revealed first);
    P2's pair of kings then scores SD2 (+1) though it is lower than SD1's hand."""
    s = start(3, {1: "Qh Qd Qc 7s 7h", 2: "Ks Kd 9c 5s 2h", 0: "Jc 9d 7d 5c 3s"}, stock="2c 3d 4h 6s 8c")
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 6, 0]
    before = len(s.events)
    ex(s, 1, "Qh Qd Qc 7s 7h")
    new = s.events[before:]
    audience, reveal = new[0]
    assert audience == PUBLIC and isinstance(reveal, HandRevealed)
    assert reveal.seat == 1 and reveal.reason == "break_up" and same_cards(reveal.cards, "Qh Qd Qc 7s 7h")
    assert isinstance(new[1][1], Exchanged)  # revealed before the discard
    assert same_cards(s.view(1).hand, "2c 3d 4h 6s 8c")
    ex(s, 2)
    ex(s, 0)
    assert s.scores() == [0, 6, 1]
    assert [(sd.round, sd.winners, sd.category) for sd in showdowns(s)] == [(1, [1], "FH"), (2, [2], "1P")]
    assert [r.reason for r in s.view(0).revealed] == ["break_up"]


def test_ch10_kicker_decides_between_equal_pairs():
    """CH-10/§3 vector 1: aces with K Q 2 beat aces with K J T."""
    s = start(3, {1: "Ah Ac Kd Jh Ts", 2: "As Ad Kc Qh 2s", 0: "9h 8d 6c 4s 3h"})
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 0, 1]


def test_ch10_equal_straights_tie_even_with_a_lower_scoring_hand():
    """CH-10/§3 vector 5: identical 9-high straights tie; P0's two pair scores nothing.
    suit_order gives P2 (9h beats 9c) the straight's 4."""
    hands = {1: "9c 8d 7h 6s 5c", 2: "9h 8s 7d 6c 5h", 0: "Ks Kd 4c 4s 2h"}
    s = start(3, hands)
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 0, 0] and showdowns(s)[0].tied == [1, 2]
    s = start(3, hands, options={"exact_tie_policy": "suit_order"})
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 0, 4]


# ================================================================ CH-11 points, CH-12 royal flush

HC_P0 = "2d 4c 7s 9d Jc"


@pytest.mark.parametrize(
    "hand, code, points",
    [
        ("Ah As 3h 5s 8h", "1P", 1),
        ("Ah As 3h 3s 8h", "2P", 2),
        ("Ah As Ac 3s 8h", "3K", 3),
        ("9h 8s 7h 6s 5h", "ST", 4),
        ("Ah Qh 9h 6h 3h", "FL", 5),
        ("Ah As Ac 3s 3h", "FH", 6),
        ("Ah As Ac Ad 3h", "4K", 7),
        ("9h 8h 7h 6h 5h", "SF", 8),
        ("5h 4h 3h 2h Ah", "SF", 8),  # steel wheel: not royal (CH-12)
    ],
)
def test_ch11_hand_points_table(hand, code, points):
    """CH-11: 1P 1, 2P 2, 3K 3, ST 4, FL 5, FH 6, 4K 7, SF 8 (2 players, P1 vs high card)."""
    s = start(2, {1: hand, 0: HC_P0})
    pass_round(s, [1, 0])
    assert s.scores() == [0, points]
    assert showdowns(s)[0].category == code and not s.is_terminal()


def test_ch11_custom_points_table_merges_with_defaults():
    """CH-11 option hand_points: overriding two entries keeps the others."""
    rules = build_rules(CHICAGO, options={"hand_points": {"1P": 2, "SF": 25}})
    assert rules.hand_points == {"1P": 2, "2P": 2, "3K": 3, "ST": 4, "FL": 5, "FH": 6, "4K": 7, "SF": 25, "RF": 52}
    s = start(2, {1: "Ah As 3h 5s 8h", 0: HC_P0}, options={"hand_points": {"1P": 2, "SF": 25}})
    pass_round(s, [1, 0])
    assert s.scores() == [0, 2]


def test_ch12_royal_flush_scores_52_and_wins_at_once():
    """CH-12: a scoring royal flush in SD1 gives +52 and ends the game (reason royal_flush)."""
    s = start(3, {1: PAIR_K, 2: "As Ks Qs Js Ts", 0: HC_J})
    pass_round(s, [1, 2, 0])
    assert s.is_terminal() and s.current_player() == TERMINAL
    assert s.scores() == [0, 0, 52]
    res = s.result()
    assert (res.winner, res.reason, res.placements) == (2, "royal_flush", [2, 2, 1])
    assert showdowns(s)[0].category == "RF" and showdowns(s)[0].description is None
    assert isinstance(s.events[-1][1], GameEnded) and isinstance(s.events[-2][1], DealEnded)
    assert s.legal_actions() == []
    with pytest.raises(IllegalAction, match="game is over"):
        s.apply_action(Exchange(discard=[]))


def test_ch12_two_royals_tie_and_nobody_scores():
    """CH-12 with CH-10 (§3 vector 6): an exactly tied royal does not score and does not end the game."""
    s = start(3, {1: "As Ks Qs Js Ts", 2: "Ah Kh Qh Jh Th", 0: "9d 8c 6s 4d 2c"})
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 0, 0] and not s.is_terminal()
    assert showdowns(s)[0].tied == [1, 2] and showdowns(s)[0].category == "RF"


def test_ch12_royal_is_instant_even_under_end_of_deal():
    """CH-12 (cardgames_zone, win_check=end_of_deal): the royal still ends the game at SD1."""
    s = start(3, {1: "Ac Kc Qc Jc Tc", 2: PAIR_K, 0: HC_Q}, preset="cardgames_zone")
    pass_round(s, [1, 2, 0])
    assert s.is_terminal() and s.result().winner == 1 and s.result().reason == "royal_flush"
    assert s.scores() == [0, 52, 0]


def test_ch12_royal_instant_win_off_waits_for_the_end_of_the_deal():
    """CH-12 option royal_instant_win=false (zone): 52 + 52 + last trick 5 + 52 = 161, winning at deal end.
    P1 (>= 46 after SD1) must pass the second exchange (CH-08)."""
    hands = {1: "As Ks Qs Js Ts", 2: "Kh Kd 9c 5c 2h", 0: "Qh Jd 8c 7d 3c"}
    s = start(3, hands, preset="cardgames_zone", options={"royal_instant_win": False})
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 52, 0] and not s.is_terminal()
    assert s.legal_actions() == [Exchange(discard=[])]
    pass_round(s, [1, 2, 0])
    play(s, "1:As 2:2h 0:3c", "1:Ks 2:5c 0:7d", "1:Qs 2:9c 0:8c", "1:Js 2:Kd 0:Jd", "1:Ts 2:Kh 0:Qh")
    assert s.is_terminal()
    assert s.scores() == [0, 161, 0]
    assert (s.result().winner, s.result().reason) == (1, "target")


# ================================================================ CH-13 show before breaking up


FH_DEAL = {1: "Qh Qd Qc 7s 7h", 2: "Ks Kd 9c 5s 2h", 0: "Jc 9d 7d 5c 3s"}


def test_ch13_kept_scoring_hand_is_revealed_when_broken_later():
    """CH-13: P1 scored SD1 and SD2 with the same hand, passes, then breaks it in round 3: revealed.
    A pass never reveals."""
    s = start(3, FH_DEAL, stock="2c")
    pass_round(s, [1, 2, 0])
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 12, 0] and not evs(s, HandRevealed)
    ex(s, 1, "7s")
    (reveal,) = evs(s, HandRevealed)
    assert reveal.reason == "break_up" and same_cards(reveal.cards, FH_DEAL[1])
    assert same_cards(s.view(1).hand, "Qh Qd Qc 7h 2c")


def test_ch13_no_reveal_for_a_changed_hand_or_a_non_scorer():
    """CH-13: only the scorer's exact scored hand is revealed. P1 changes its hand after SD1
    (revealed once); SD2 goes to P2; P1's next exchange and P0's exchanges reveal nothing."""
    s = start(3, FH_DEAL, stock="2c 3d 4h 6s 8c 9s")
    pass_round(s, [1, 2, 0])  # SD1: P1 +6
    ex(s, 1, "Qh Qd Qc 7s 7h")  # revealed (break_up)
    ex(s, 2)
    ex(s, 0, "3s")  # P0 never scored: no reveal
    assert s.scores() == [0, 6, 1]  # SD2: P2's kings
    assert len(evs(s, HandRevealed)) == 1
    ex(s, 1, "2c")  # P1 no longer holds its scored hand: no reveal
    ex(s, 2, "2h")  # P2 scored SD2 with Ks Kd 9c 5s 2h: revealed
    reveals = evs(s, HandRevealed)
    assert [(r.seat, r.reason) for r in reveals] == [(1, "break_up"), (2, "break_up")]
    assert same_cards(reveals[1].cards, FH_DEAL[2])


def test_ch13_tied_players_did_not_score_so_no_reveal():
    """CH-13 with CH-10: an exact tie scores nobody, so breaking a tied hand reveals nothing."""
    s = start(3, C03)
    pass_round(s, [1, 2, 0])
    ex(s, 1, "2h")
    ex(s, 2, "2c")
    assert not evs(s, HandRevealed)


# ================================================================ CH-14 Chicago call


def test_ch14_asked_eldest_to_dealer_first_declaration_closes_window():
    """CH-14: only eligible seats (>= 15) are asked, in order from eldest; the first call closes the window.
    P1 (0, kings +1 +1) is never asked; P2 declines; P3 declares; P0 (16) is not asked. CH-15: P3 leads."""
    hands = {1: PAIR_K, 2: HC_A, 3: HC_J, 0: HC_Q}
    s = start(4, hands, scores=[16, 0, 20, 30])
    for _ in range(3):
        pass_round(s, [1, 2, 3, 0])
    assert s.scores() == [16, 2, 20, 30]
    assert s.legal_actions() == [CallChicago(call=False), CallChicago(call=True)]
    call(s, 2, False)
    call(s, 3, True)
    assert [(e.seat, e.call) for e in evs(s, ChicagoDecision)] == [(2, False), (3, True)]
    v = s.view(0)
    assert v.phase == "trick" and v.chicago_declarer == 3 and v.leader == 3 and s.current_player() == 3
    with pytest.raises(IllegalAction):
        s.verify_action(CallChicago(call=True))  # someone has already declared


def test_ch14_this_deals_showdown_points_count_for_eligibility():
    """CH-14: P1 at 13 wins SD1 and SD2 (+1 +1) and is asked at 15; at 14 with no scoring hand it is not."""
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, scores=[0, 13, 0])
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 15, 0] and s.view(1).phase == "chicago_call" and s.current_player() == 1
    s = start(3, {1: HC_A, 2: HC_Q, 0: HC_J}, scores=[0, 14, 0])
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    assert s.view(1).phase == "trick" and not evs(s, ChicagoDecision)


@pytest.mark.parametrize(
    "preset, options, asked",
    [
        ("gamerules", None, [1]),
        ("cardgames_zone", None, []),  # §7.2: Chicago off in the zone preset
        ("cardgames_zone", {"chicago_enabled": True}, [1]),
        ("gamerules", {"chicago_enabled": False}, []),
        ("gamerules", {"chicago_min_score": 25}, []),
        ("swedish_common", None, [1, 2, 0]),  # minimum 0: everyone at >= 0 is asked
    ],
)
def test_ch14_eligibility_per_preset_and_option(preset, options, asked):
    """CH-14: chicago_enabled and chicago_min_score decide who is asked (P1 has 20, others 0)."""
    s = start(3, {1: HC_A, 2: HC_Q, 0: HC_J}, preset=preset, options=options, scores=[0, 20, 0])
    rules = s.rules
    for _ in range(rules.exchanges):
        pass_round(s, [1, 2, 0])
    seen = []
    while s.view(0).phase == "chicago_call":
        seen.append(s.current_player())
        s.apply_action(CallChicago(call=False))
    assert seen == asked and s.view(0).phase == "trick" and s.current_player() == 1


def test_ch14_negative_score_is_below_minimum_zero():
    """CH-14 in swedish_common (min 0, no floor): a seat at -3 is not asked (literal score >= minimum)."""
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, preset="swedish_common", scores=[0, -5, 0])
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    assert s.scores() == [0, -3, 0]
    assert s.current_player() == 2 and s.view(2).phase == "chicago_call"


def test_ch14_ch25_chicago_call_outside_the_window_is_illegal():
    """CH-14/CH-25: a Chicago call during the exchange is rejected (the window is not open)."""
    s = start(3, {1: HC_A, 2: HC_Q, 0: HC_J}, scores=[0, 40, 0])
    with pytest.raises(IllegalAction, match="exchange"):
        s.verify_action(CallChicago(call=True))


# ================================================================ CH-15 trick play


@pytest.mark.parametrize("leader_rule, leader", [("declarer", 2), ("eldest", 1)])
def test_ch15_trick_one_leader_with_chicago(leader_rule, leader):
    """CH-15 (chicago_leader): the declarer P2 leads trick 1, or eldest P1 under `eldest`."""
    s = start(3, {1: HC_A, 2: HC_Q, 0: HC_J}, scores=[0, 0, 20], options={"chicago_leader": leader_rule})
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    call(s, 2, True)
    assert s.current_player() == leader and s.view(0).leader == leader and s.view(0).trick_number == 1


def test_ch15_must_follow_suit_void_may_play_anything_winner_leads():
    """CH-15: with hearts led P2 may only play hearts; a void player may play any card; the winner leads."""
    s = start(3, C16, scores=[0, 18, 0])
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    call(s, 1, False)  # no Chicago: eldest P1 leads
    assert s.current_player() == 1 and len(s.legal_actions()) == 5
    play(s, "1:Jd")
    # P2 holds no diamonds: every card is legal.
    assert sorted(a.card for a in s.legal_actions()) == sorted(["3s", "4s", "Ac", "8h", "9h"])
    play(s, "2:8h")
    # P0 holds Kd and Td: only diamonds.
    assert sorted(a.card for a in s.legal_actions()) == ["Kd", "Td"]
    with pytest.raises(IllegalAction, match="must follow suit"):
        s.verify_action(PlayCard(card="5s"))
    play(s, "0:Kd")
    assert evs(s, TrickWon)[-1].seat == 0 and s.current_player() == 0  # the winner leads
    assert s.view(0).trick_number == 2 and s.view(0).tricks_won == [1, 0, 0]


# ================================================================ CH-16 last trick

TWO_BONUS = {1: "2c Ah Kh Qh Jh", 0: "As Ks Qs Js 9s"}
TWO_BONUS_TRICKS = ("1:Ah 0:9s", "1:Kh 0:Js", "1:Qh 0:Qs", "1:Jh 0:Ks", "1:2c 0:As")


@pytest.mark.parametrize("bonus, p1", [(None, 5), (10, 10)])
def test_ch16_last_trick_points_and_two_bonus(bonus, p1):
    """CH-16 (last_trick_two_bonus): P1 takes the last trick with the 2c: 5, or 10 with the bonus.
    P0's spade flush scores SD1, SD2 and the final showdown: 15."""
    s = start(2, TWO_BONUS, options={"last_trick_two_bonus": bonus})
    for _ in range(3):
        pass_round(s, [1, 0])
    play(s, *TWO_BONUS_TRICKS)
    assert score_log(s, 1)[2] == (1, p1, p1, "last_trick")
    assert scores_after_deal(s) == [15, p1]


def test_ch16_two_bonus_needs_the_two_to_win():
    """CH-16: with the bonus on, a last trick won by a non-2 is worth the normal 5 (C14: P0 wins with 6s)."""
    s = start(3, C14, options={"last_trick_two_bonus": 10, "last_trick_points": 5})
    for _ in range(3):
        pass_round(s, [1, 2, 0])
    play(s, *C14_TRICKS)
    assert scores_after_deal(s) == [5, 0, 3]


# ================================================================ CH-17 Chicago resolution

CH17 = {1: PAIR_K, 2: HC_A, 0: HC_Q}


def _to_call(state, order=(1, 2, 0)):
    for _ in range(state.rules.exchanges):
        pass_round(state, list(order))


def test_ch17_chicago_fails_on_trick_one():
    """CH-17: P1 (20, +1 +1 = 22) declares and loses trick 1: 22-15 = 7, trick play ends; final SD +1 = 8."""
    s = start(3, CH17, scores=[0, 20, 0])
    _to_call(s)
    call(s, 1, True)
    play(s, "1:5s 2:6s 0:Qs")
    assert len(evs(s, TrickWon)) == 1
    assert score_log(s, 1)[2:] == [(1, -15, 7, "chicago_failed"), (1, 1, 8, "showdown")]
    assert scores_after_deal(s) == [0, 8, 0]


def test_ch17_chicago_fails_on_trick_five_nobody_scores_last_trick():
    """CH-17: P1 wins four tricks and loses the fifth to P0: -15, and P0 gets no +5."""
    s = start(3, CH17, scores=[0, 20, 0])
    _to_call(s)
    call(s, 1, True)
    play(s, "1:Kh 2:8h 0:3h", "1:Kd 2:Qd 0:9d", "1:9c 2:3c 0:5c", "1:2h 2:6s 0:8s", "1:5s 2:Ac 0:Qs")
    assert [e.seat for e in evs(s, TrickWon)] == [1, 1, 1, 1, 0]
    assert score_log(s, 1)[2:] == [(1, -15, 7, "chicago_failed"), (1, 1, 8, "showdown")]
    assert scores_after_deal(s) == [0, 8, 0]


def test_ch17_custom_chicago_points_and_penalty():
    """CH-17 options chicago_points=20 (C15: 16+2+2+20+2 = 42) and chicago_penalty=10 (C16: 18-10 = 8)."""
    s = start(3, C15, scores=[0, 16, 0], options={"chicago_points": 20})
    _to_call(s)
    call(s, 1, True)
    play(s, *C15_TRICKS)
    assert scores_after_deal(s) == [0, 42, 0]
    s = start(3, C16, scores=[0, 18, 0], options={"chicago_penalty": 10})
    _to_call(s)
    call(s, 1, True)
    play(s, "1:As 2:3s 0:5s", "1:Ks 2:4s 0:7h", "1:Qs 2:8h 0:Td", "1:2c 2:Ac 0:5h")
    assert scores_after_deal(s) == [3, 8, 0]


def test_ch17_declining_chicago_means_normal_last_trick():
    """CH-17/CH-16: the same cards as C15 without a call: P1 gets the ordinary +5 for trick 5.
    16 + 2 + 2 + 5 + 2 = 27."""
    s = start(3, C15, scores=[0, 16, 0])
    _to_call(s)
    call(s, 1, False)
    play(s, *C15_TRICKS)
    assert scores_after_deal(s) == [0, 27, 0]


# ================================================================ CH-18 floor


@pytest.mark.parametrize(
    "preset, options, start_score, penalty_event, final",
    [
        # min 5: P1 3 -> 5 at the call; fails: 5-15 floored to 0 (points -5); final SD +1.
        ("gamerules", {"chicago_min_score": 5}, 3, (1, -5, 0, "chicago_failed"), 1),
        ("gamerules", {"chicago_min_score": 5, "score_floor": None}, 3, (1, -15, -10, "chicago_failed"), -9),
        # swedish_common: no floor, minimum 0: P1 0 -> 2 at the call; 2-15 = -13; +1 = -12.
        ("swedish_common", None, 0, (1, -15, -13, "chicago_failed"), -12),
        ("gamerules", {"chicago_min_score": 5, "score_floor": -4}, 3, (1, -9, -4, "chicago_failed"), -3),
    ],
)
def test_ch18_score_floor(preset, options, start_score, penalty_event, final):
    """CH-18: after every scoring event score = max(floor, score); score_floor=None allows negatives."""
    s = start(3, CH17, preset=preset, options=options, scores=[0, start_score, 0])
    _to_call(s)
    call(s, 1, True)
    play(s, "1:5s 2:6s 0:Qs")
    assert score_log(s, 1)[2] == penalty_event
    assert scores_after_deal(s) == [0, final, 0]


# ================================================================ CH-19 final showdown, CH-20 order


def test_ch19_final_showdown_can_be_switched_off():
    """CH-19 option final_showdown=false: C14 ends 5/0/2 with no round-0 showdown and no reveals."""
    s = start(3, C14, options={"final_showdown": False})
    _to_call(s)
    play(s, *C14_TRICKS)
    assert scores_after_deal(s) == [5, 0, 2]
    assert [sd.round for sd in showdowns(s, 1)] == [1, 2]
    assert not [e for _, e in deal_events(s) if isinstance(e, HandRevealed)]


def test_ch19_ch24_final_showdown_hands_are_revealed_to_everyone():
    """CH-19/CH-24: the trick-start hands are shown publicly (eldest first) before the final showdown."""
    s = start(3, C14)
    _to_call(s)
    play(s, *C14_TRICKS)
    reveals = [(a, e) for a, e in deal_events(s) if isinstance(e, HandRevealed)]
    assert [(a, e.seat, e.reason) for a, e in reveals] == [
        (PUBLIC, 1, "final_showdown"),
        (PUBLIC, 2, "final_showdown"),
        (PUBLIC, 0, "final_showdown"),
    ]
    for _, e in reveals:
        assert same_cards(e.cards, C14[e.seat])


def test_ch19_royal_at_the_final_showdown_wins_at_once():
    """CH-19/CH-12: P2 draws the Ts in round 3 (no showdown) for a royal; P2 takes the last trick (+5)
    and the final royal (+52) wins: 57. P1's kings won SD1 and SD2 (+2)."""
    hands = {1: PAIR_K, 2: "As Ks Qs Js 2c", 0: "Qh 9d 8h 6c 3c"}
    s = start(3, hands, stock="Ts")
    pass_round(s, [1, 2, 0])
    pass_round(s, [1, 2, 0])
    ex(s, 1)
    ex(s, 2, "2c")
    ex(s, 0)
    assert s.scores() == [0, 2, 0] and s.view(0).phase == "trick"
    play(s, "1:Kh 2:Ts 0:8h", "1:Kd 2:Js 0:9d", "1:9c 2:Qs 0:3c", "1:5s 2:Ks 0:Qh", "2:As 0:6c 1:2h")
    assert s.is_terminal() and s.scores() == [0, 2, 57]
    assert (s.result().winner, s.result().reason) == (2, "royal_flush")


def test_ch20_event_order_showdowns_chicago_final():
    """CH-20: SD1, SD2, then the Chicago resolution, then the final showdown (C15)."""
    s = start(3, C15, scores=[0, 16, 0])
    _to_call(s)
    call(s, 1, True)
    play(s, *C15_TRICKS)
    kinds = [
        ("SD", e.round) if isinstance(e, Showdown) else ("score", e.reason)
        for _, e in deal_events(s)
        if isinstance(e, (Showdown, ScoreChanged))
    ]
    assert kinds == [
        ("SD", 1),
        ("score", "showdown"),
        ("SD", 2),
        ("score", "showdown"),
        ("score", "chicago"),
        ("SD", 0),
        ("score", "showdown"),
    ]


# ================================================================ CH-21 winning, CH-22 tie-break


def test_ch21_immediate_win_in_sd1_stops_the_deal():
    """CH-21 (immediate): P1 at 51 wins SD1 with kings: 52, game over, no round 2."""
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, scores=[0, 51, 0])
    pass_round(s, [1, 2, 0])
    assert s.is_terminal() and s.scores() == [0, 52, 0]
    assert (s.result().winner, s.result().reason) == (1, "target")
    assert not [e for e in evs(s, Exchanged) if e.round == 2]


def test_ch21_immediate_win_on_the_last_trick_skips_the_final_showdown():
    """CH-21 (immediate): P0 at 48 declines Chicago and takes C14's last trick: 53, over before
    the final showdown that would have given P2 +1."""
    s = start(3, C14, scores=[48, 0, 0])
    _to_call(s)
    call(s, 0, False)
    play(s, *C14_TRICKS)
    assert s.is_terminal() and s.scores() == [53, 0, 2]
    assert s.result().winner == 0
    assert [sd.round for sd in showdowns(s)] == [1, 2]


ZONE_END = {1: PAIR_K, 2: "Qs Qc 8d 6h 3c", 0: "Jd 9h 7s 4c 2d"}
ZONE_END_TRICKS = ("1:Kh 2:6h 0:9h", "1:Kd 2:8d 0:2d", "1:9c 2:3c 0:4c", "1:5s 2:Qs 0:7s", "2:Qc 0:Jd 1:2h")


def test_ch21_end_of_deal_highest_score_wins_not_first_to_reach():
    """CH-21 (cardgames_zone, end_of_deal): P1 reaches 52 in SD1 but play goes on;
    P1 51+1+1+1 = 54, P2 50 + last trick 5 = 55: P2 wins at the end of the deal."""
    s = start(3, ZONE_END, preset="cardgames_zone", scores=[0, 51, 50])
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 52, 50] and not s.is_terminal()
    pass_round(s, [1, 2, 0])
    play(s, *ZONE_END_TRICKS)
    assert s.is_terminal() and s.scores() == [0, 54, 55]
    assert (s.result().winner, s.result().reason, s.result().placements) == (2, "target", [3, 2, 1])


def test_ch22_tie_at_the_end_of_a_deal_goes_to_a_tiebreak_between_the_tied():
    """CH-22 (zone): P1 51+3 = 54 and P2 49+5 = 54 tie; a tie-break deal for P1 and P2 only,
    dealt by P1 (the next tied seat clockwise). In it P2's aces score SD1/SD2/final (+3) and
    P1 takes the last trick (+5): P1 59, P2 57, P1 wins."""
    tiebreak = Deal(1, deck_for(3, 1, {2: "Ah Ad 7c 5s 3h", 1: "Kc Qd 9s 6h 4c"}, active=[1, 2]))
    s = start(3, ZONE_END, preset="cardgames_zone", scores=[0, 51, 49], then=[tiebreak])
    pass_round(s, [1, 2, 0])
    pass_round(s, [1, 2, 0])
    play(s, *ZONE_END_TRICKS)
    assert scores_after_deal(s, 1) == [0, 54, 54] and not s.is_terminal()
    started = evs(s, DealStarted)[-1]
    assert (started.deal, started.dealer, started.active, started.tiebreak, started.stock_size) == (
        2,
        1,
        [1, 2],
        True,
        42,
    )
    assert s.view(0).hand == [] and s.view(0).tiebreak
    pass_round(s, [2, 1])
    pass_round(s, [2, 1])
    assert s.scores() == [0, 54, 56]
    play(s, "2:Ah 1:6h", "2:Ad 1:Qd", "2:7c 1:Kc", "1:9s 2:5s", "1:4c 2:3h")
    assert s.is_terminal() and s.scores() == [0, 59, 57]
    assert (s.result().winner, s.result().reason) == (1, "tiebreak")


def test_ch22_all_tied_policy_can_tie_at_target_under_immediate():
    """CH-22 with exact_tie_policy=all_tied and immediate: P1 and P2 (51 each) both score C03's kings
    and reach 52 together: a tie-break deal for P1 and P2 starts."""
    s = start(3, C03, options={"exact_tie_policy": "all_tied"}, scores=[0, 51, 51])
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 52, 52] and not s.is_terminal()
    started = evs(s, DealStarted)[-1]
    assert started.tiebreak and started.active == [1, 2] and started.dealer == 1


# ================================================================ CH-24 information, CH-25 illegal actions


def test_ch24_views_hold_only_own_hand_and_public_records():
    """CH-24: a view has its own hand, counts, public records; draws are private, counts public."""
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, stock="2c 4c")
    ex(s, 1, "9c 5s")
    for seat in range(3):
        v = s.view(seat)
        assert v.seat == seat and v.stock_size == 35 and v.discard_size == 2
        assert [(r.seat, r.count) for r in v.exchanges] == [(1, 2)]
    assert same_cards(s.view(1).hand, "Kh Kd 2h 2c 4c")
    assert same_cards(s.view(2).hand, HC_A) and same_cards(s.view(0).hand, HC_Q)
    for audience, e in s.events:
        if isinstance(e, (HandDealt, Drew)):
            assert audience == e.seat
        else:
            assert audience == PUBLIC
    assert "9c" not in str(s.view(2)) and "2c" not in str(s.view(2))


def test_ch25_illegal_actions_are_rejected_and_change_nothing():
    """CH-25: cards not held, duplicates, wrong action kinds, failing to follow suit, after the end."""
    s = start(3, C16, scores=[0, 18, 0])
    before = (len(s.events), s.current_player(), s.view(1))
    bad = [
        (Exchange(discard=["As", "As"]), "twice"),
        (Exchange(discard=["3s"]), "not in hand"),
        (PlayCard(card="As"), "must send a 'exchange'"),
        (TakeOpen(take=True), "exchange"),
        (CallChicago(call=False), "exchange"),
    ]
    for action, reason in bad:
        with pytest.raises(IllegalAction, match=reason):
            s.verify_action(action)
        with pytest.raises(IllegalAction):
            s.apply_action(action)
    assert (len(s.events), s.current_player(), s.view(1)) == before
    _to_call(s)
    call(s, 1, False)
    with pytest.raises(IllegalAction, match="not in hand"):
        s.verify_action(PlayCard(card="Ac"))  # P2's card
    play(s, "1:As")
    with pytest.raises(IllegalAction, match="must follow suit"):
        s.apply_action(PlayCard(card="Ac"))  # P2 holds 3s 4s
    with pytest.raises(IllegalAction):
        s.apply_action(Exchange(discard=[]))


@pytest.mark.parametrize("action", [PlayCard(card="Xs"), Exchange(discard=["1h"]), Exchange(discard=["A"])])
def test_ch25_malformed_card_text_is_an_illegal_action(action):
    """CH-25: an action naming a card that does not exist is refused as IllegalAction, with the reason."""
    s = start(3, C16, scores=[0, 18, 0])
    if isinstance(action, PlayCard):
        _to_call(s)
        call(s, 1, False)
    with pytest.raises(IllegalAction, match="bad card"):
        s.verify_action(action)


# ================================================================ presets §2 and options


def test_presets_match_rules_md_section_2():
    """§2: the four presets' values."""
    g = build_rules(CHICAGO, "gamerules")
    assert g == ChicagoRules()
    assert (g.exchanges, g.showdown_after, g.no_exchange_threshold, g.target_score) == (
        3,
        [True, True, False],
        None,
        52,
    )
    assert (g.chicago_enabled, g.chicago_min_score, g.chicago_leader, g.showdown_after_chicago) == (
        True,
        15,
        "declarer",
        True,
    )
    assert (g.score_floor, g.win_check, g.royal_instant_win, g.ace_low_straight) == (0, "immediate", True, True)
    assert (g.exact_tie_policy, g.last_trick_points, g.reveal_scoring_hand, g.first_dealer) == (
        "nobody",
        5,
        False,
        "low_cut",
    )
    assert g.hand_points == {"1P": 1, "2P": 2, "3K": 3, "ST": 4, "FL": 5, "FH": 6, "4K": 7, "SF": 8, "RF": 52}
    assert (g.chicago_points, g.chicago_penalty, g.one_open, g.four_kind_reset, g.last_trick_two_bonus) == (
        15,
        15,
        False,
        False,
        None,
    )

    z = build_rules(CHICAGO, "cardgames_zone")
    assert (z.exchanges, z.showdown_after, z.no_exchange_threshold, z.target_score) == (2, [True, True], 46, 52)
    assert (z.chicago_enabled, z.chicago_min_score, z.score_floor, z.win_check) == (False, 15, 0, "end_of_deal")
    assert (
        z.royal_instant_win,
        z.ace_low_straight,
        z.exact_tie_policy,
        z.last_trick_points,
        z.reveal_scoring_hand,
    ) == (True, True, "nobody", 5, True)

    short = build_rules(CHICAGO, "cardgames_zone_short")
    assert short == build_rules(CHICAGO, "cardgames_zone", {"target_score": 30})

    sw = build_rules(CHICAGO, "swedish_common")
    assert sw == build_rules(
        CHICAGO,
        "gamerules",
        {"no_exchange_threshold": 42, "chicago_min_score": 0, "score_floor": None, "one_open": True},
    )
    assert build_rules(CHICAGO) == g  # the default preset is gamerules


def test_preset_zone_reveals_the_scoring_hand():
    """reveal_scoring_hand (zone): each showdown scorer's five cards are shown publicly; not in gamerules."""
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, preset="cardgames_zone")
    pass_round(s, [1, 2, 0])
    ((audience, reveal),) = [(a, e) for a, e in s.events if isinstance(e, HandRevealed)]
    assert audience == PUBLIC and reveal.seat == 1 and reveal.reason == "scoring_hand"
    assert same_cards(reveal.cards, PAIR_K)
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, options={"reveal_scoring_hand": True})
    pass_round(s, [1, 2, 0])
    assert len(evs(s, HandRevealed)) == 1
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q})
    pass_round(s, [1, 2, 0])
    assert not evs(s, HandRevealed)


SHORT = {1: PAIR_K, 0: "Ah Qd 8c 6s 3h"}
SHORT_TRICKS = ("1:Kh 0:Ah", "0:Qd 1:Kd", "1:9c 0:8c", "1:5s 0:6s", "0:3h 1:2h")


@pytest.mark.parametrize("preset, over", [("cardgames_zone_short", True), ("cardgames_zone", False)])
def test_preset_zone_short_target_30(preset, over):
    """cardgames_zone_short: P1 27 + kings 1+1+1 = 30 wins at the end of the deal; P0 gets the last trick (5).
    Under cardgames_zone (52) the game goes on."""
    s = start(2, SHORT, preset=preset, scores=[0, 27])
    pass_round(s, [1, 0])
    pass_round(s, [1, 0])
    play(s, *SHORT_TRICKS)
    assert scores_after_deal(s) == [5, 30]
    assert s.is_terminal() is over
    if over:
        assert (s.result().winner, s.result().reason) == (1, "target")


@pytest.mark.parametrize("take", [True, False])
def test_option_one_open_take_or_draw_hidden(take):
    """one_open (swedish_common): exchanging exactly one card turns the stock top face up for everyone;
    the player takes it, or discards it too and draws the next card hidden."""
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, preset="swedish_common", stock="7d 4h")
    ex(s, 1, "2h")
    assert s.current_player() == 1 and s.view(2).phase == "take_open"
    assert all(s.view(x).open_card == "7d" for x in range(3))
    ((audience, opened),) = [(a, e) for a, e in s.events if isinstance(e, OpenCard)]
    assert audience == PUBLIC and (opened.seat, opened.card) == (1, "7d")
    assert s.legal_actions() == [TakeOpen(take=False), TakeOpen(take=True)]
    with pytest.raises(IllegalAction):
        s.verify_action(Exchange(discard=[]))
    s.apply_action(TakeOpen(take=take))
    assert evs(s, OpenCardDecision)[0] == OpenCardDecision(seat=1, take=take)
    assert s.view(1).open_card is None and s.current_player() == 2
    if take:
        assert same_cards(s.view(1).hand, "Kh Kd 9c 5s 7d") and s.view(0).discard_size == 1
        assert not evs(s, Drew)
    else:
        assert same_cards(s.view(1).hand, "Kh Kd 9c 5s 4h") and s.view(0).discard_size == 2
        assert [(a, e.cards) for a, e in s.events if isinstance(e, Drew)] == [(1, ["4h"])]
    ex(s, 2, "3c 6s")  # two cards: no open card
    assert not [e for e in evs(s, OpenCard) if e.seat == 2]


def test_option_one_open_off_in_gamerules():
    s = start(3, {1: PAIR_K, 2: HC_A, 0: HC_Q}, stock="7d 4h")
    ex(s, 1, "2h")
    assert s.current_player() == 2 and same_cards(s.view(1).hand, "Kh Kd 9c 5s 7d") and not evs(s, OpenCard)


def test_option_four_kind_reset():
    """four_kind_reset: quads reset every other player to 0 instead of scoring 7."""
    s = start(3, {1: "9h 9d 9c 9s 2h", 2: HC_A, 0: HC_J}, scores=[5, 10, 20], options={"four_kind_reset": True})
    pass_round(s, [1, 2, 0])
    assert s.scores() == [0, 10, 0]
    assert sorted(score_log(s)) == [(0, -5, 0, "four_kind_reset"), (2, -20, 0, "four_kind_reset")]
    s = start(3, {1: "9h 9d 9c 9s 2h", 2: HC_A, 0: HC_J}, scores=[5, 10, 20])
    pass_round(s, [1, 2, 0])
    assert s.scores() == [5, 17, 20]


@pytest.mark.parametrize("max_deals, over", [(1, True), (2, False)])
def test_option_max_deals(max_deals, over):
    """max_deals: after that many deals the game ends (reason deal_limit), highest score first (C14: 5/0/3)."""
    s = start(3, C14, options={"max_deals": max_deals})
    _to_call(s)
    play(s, *C14_TRICKS)
    assert s.is_terminal() is over
    if over:
        res = s.result()
        assert (res.winner, res.reason, res.scores, res.placements) == (0, "deal_limit", [5, 0, 3], [1, 3, 2])


def test_option_max_deals_tie_has_no_winner():
    """max_deals with equal top scores ends without a winner (only high cards, last trick worth 0)."""
    s = start(3, {1: HC_A, 2: HC_Q, 0: HC_J}, options={"max_deals": 1, "final_showdown": False, "last_trick_points": 0})
    _to_call(s)
    while not s.is_terminal():
        _cautious(s)
    assert s.result().winner is None and s.result().reason == "deal_limit"
    assert s.scores() == [0, 0, 0] and s.result().placements == [1, 1, 1]


# ================================================================ option errors (§7.7)


@pytest.mark.parametrize(
    "options, words",
    [
        ({"target": 30}, "unknown chicago rule option 'target'"),
        ({"exchange": 2}, "valid options"),
        ({"target_score": 0}, "invalid chicago rules"),
        ({"target_score": "fifty"}, "invalid chicago rules"),
        ({"exchanges": 6}, "invalid"),
        ({"exchanges": 2}, "showdown_after"),
        ({"exact_tie_policy": "coin_flip"}, "invalid"),
        ({"win_check": "sometimes"}, "invalid"),
        ({"first_dealer": "youngest"}, "invalid"),
        ({"chicago_leader": "dealer"}, "invalid"),
        ({"hand_points": {"5K": 9}}, "invalid"),
        ({"hand_points": {"1P": -1}}, "invalid"),
        ({"no_exchange_threshold": -1}, "invalid"),
        ({"last_trick_points": -5}, "invalid"),
        ({"max_deals": 0}, "invalid"),
        ({"score_floor": "zero"}, "invalid"),
    ],
)
def test_unknown_or_out_of_range_option_is_a_config_error(options, words):
    """§7.7: an unknown key or an out-of-range value is an error with a clear message."""
    with pytest.raises(ConfigError, match=words):
        build_rules(CHICAGO, "gamerules", options)
    with pytest.raises(ConfigError):
        new_game("chicago", 3, 0, options=options)


def test_unknown_preset_and_option_parsing():
    with pytest.raises(ConfigError, match=r"unknown chicago preset 'zone'.*gamerules"):
        build_rules(CHICAGO, "zone")
    assert parse_option("target_score=30") == ("target_score", 30)
    assert parse_option("win-check=end_of_deal") == ("win_check", "end_of_deal")
    assert parse_option("score_floor=null") == ("score_floor", None)
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_option("target_score")
    ok = build_rules(CHICAGO, "gamerules", {"exchanges": 2, "showdown_after": [True, False]})
    assert ok.exchanges == 2
