"""Ghost Hand Euchre (rules.md §4, §5.2, §7): exact scripted hands with real
cards for every worked example and rule GE-01..GE-14, rule options, the wire
shapes, seeded random playouts with invariants, and a no-leak property test.

Every expected value below was worked out by hand from the rules, not read
back from the engine. Seat P0 deals unless stated, so the bidding and deal
order is P1, P2, (ghost), P0.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.chicago import ChicagoAction, ChicagoEvent, ChicagoRules, ChicagoView
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
from protocol.euchre import (
    AllPassed,
    Bid,
    BidMade,
    EuchreAction,
    EuchreEvent,
    EuchreRules,
    EuchreView,
    GhostHandTaken,
    GhostSwapped,
    HandScored,
    NameTrump,
    Pass,
    Reneged,
    SwapGhost,
    TrumpNamed,
)
from referee.errors import ConfigError, IllegalAction
from referee.games import get_game
from referee.games.base import PUBLIC, TERMINAL, Deal
from referee.games.cards import CARD_STR, parse_cards
from referee.games.ghost_euchre import (
    EUCHRE_DECK,
    GhostEuchreState,
    effective_suit,
    new_state,
    trick_winner,
)
from referee.games.registry import GHOST_EUCHRE
from referee.games.rules import build_rules

S, H, D, C = range(4)

# ------------------------------------------------------------------ helpers


def deck_of(eldest: str, nxt: str, ghost: str, dealer: str) -> tuple[int, ...]:
    """The 24-card deck that deals these hands: deck[i] -> pile i mod 4 (GE-04)."""
    piles = [parse_cards(p) for p in (eldest, nxt, ghost, dealer)]
    assert all(len(p) == 6 for p in piles)
    return tuple(piles[i % 4][i // 4] for i in range(24))


def game(*deals: Deal, seed: int = 0, preset: str | None = None, **options: object) -> GhostEuchreState:
    rules = build_rules(GHOST_EUCHRE, preset, dict(options))
    return new_state(rules, 3, seed, deals)


def act(g: GhostEuchreState, seat: int, action: msgspec.Struct) -> None:
    assert g.current_player() == seat, f"expected seat {seat} to act, not {g.current_player()}"
    g.apply_action(action)


def bids(g: GhostEuchreState, *script: tuple[int, int | str | None]) -> None:
    for seat, b in script:
        act(g, seat, Pass() if b is None else Bid(bid=b))  # type: ignore[arg-type]


def trick(g: GhostEuchreState, text: str) -> TrickWon:
    """Play `"1 Jh 2 Th 0 9h"` (seat card pairs, leader first); return the trick's result."""
    parts = text.split()
    for seat, card in zip(parts[::2], parts[1::2]):
        act(g, int(seat), PlayCard(card=card))
    won = [e for _, e in g.events if isinstance(e, TrickWon)]
    return won[-1]


def of(g: GhostEuchreState, kind: type, audience: int | None = None) -> list:
    return [e for a, e in g.events if isinstance(e, kind) and (audience is None or a == audience)]


def seen_by(g: GhostEuchreState, seat: int) -> list[msgspec.Struct]:
    return [e for a, e in g.events if a in (PUBLIC, seat)]


def cards(actions: Sequence[msgspec.Struct]) -> list[str]:
    return [a.card for a in actions]  # type: ignore[attr-defined]


def hand(g: GhostEuchreState, seat: int) -> set[str]:
    return set(g.view(seat).hand)


# E07's deal (rules.md §5.2)
E07 = deck_of(
    "Jh Jd Ah Kh As Kc",  # P1
    "Qh Th Ad Kd Qs 9c",  # P2
    "9s Ts 9d Tc Jc Qc",  # ghost
    "9h Qd Td Ks Js Ac",  # P0 (dealer)
)
E07_TRICKS = [
    "1 Jh 2 Th 0 9h",
    "1 Jd 2 Qh 0 Td",
    "1 As 2 Qs 0 Ks",
    "1 Kc 2 9c 0 Ac",
    "0 Js 1 Kh 2 Kd",
    "1 Ah 2 Ad 0 Qd",
]
# E02 (a): trump diamonds, P1 leads Kh, P2 holds Jh Qh 9s Tc Ks As
E02A = deck_of("Kh 9d Td Qd Kd Ad", "Jh Qh 9s Tc Ks As", "Ts Qs 9c Qc Kc Ac", "Ah Th 9h Jd Jc Js")
# E02 (b): P2 holds Jh 9s Tc Ks As Ac: void in hearts once Jh counts as a diamond
E02B = deck_of("Kh 9d Td Qd Kd Ad", "Jh 9s Tc Ks As Ac", "Ts Qs Qh 9c Qc Kc", "Ah Th 9h Jd Jc Js")
# P1 takes three trump tricks, then P2's clubs take three (used for GE-11/12/13)
SPLIT = deck_of("Jh Jd Ah 9c Tc Jc", "Ac Kc Qc As Ks Qs", "Kh Kd Ad 9s Ts Js", "9h Th Qh 9d Td Qd")
SPLIT_TRICKS = [
    "1 Jh 2 As 0 9h",
    "1 Jd 2 Ks 0 Th",
    "1 Ah 2 Qs 0 Qh",
    "1 9c 2 Ac 0 9d",
    "2 Kc 0 Td 1 Tc",
    "2 Qc 0 Qd 1 Jc",
]


def play_e07(contract: int | str = 4, **options: object) -> GhostEuchreState:
    g = game(Deal(0, E07), **options)
    bids(g, (1, contract), (2, None), (0, None))
    act(g, 1, NameTrump(suit="h"))
    for t in E07_TRICKS:
        trick(g, t)
    return g


def play_split(contract: int | str = 3, deals: Sequence[Deal] = (), **options: object) -> GhostEuchreState:
    g = game(Deal(0, SPLIT), *deals, **options)
    bids(g, (1, contract), (2, None), (0, None))
    act(g, 1, NameTrump(suit="h"))
    for t in SPLIT_TRICKS:
        trick(g, t)
    return g


def moon_deck(mooner: int, dealer: int) -> Deal:
    """A deal where `mooner` holds the six top hearts and everyone else is trumpless."""
    eldest, nxt = (dealer + 1) % 3, (dealer + 2) % 3
    top, rest = "Jh Jd Ah Kh Qh Th", ["9s Ts Js Qs Ks As", "9c Tc Jc Qc Kc Ac"]
    piles = {eldest: "", nxt: "", dealer: ""}
    piles[mooner] = top
    others = [s for s in (eldest, nxt, dealer) if s != mooner]
    piles[others[0]], piles[others[1]] = rest
    return Deal(dealer, deck_of(piles[eldest], piles[nxt], "9h 9d Td Qd Kd Ad", piles[dealer]))


def run_tricks(g: GhostEuchreState) -> None:
    """Finish the current hand with each seat's first legal card."""
    deal = g.deal_number
    while not g.is_terminal() and g.deal_number == deal:
        g.apply_action(g.legal_actions()[0])


# ------------------------------------------------------- worked examples


def test_E01_left_bower_beats_ace_of_trumps() -> None:
    g = game(Deal(0, deck_of("Ad 9s Ts Qs Ks As", "Jh 9h Th Qh Kh Ah", "Jd Qd Td 9d Js Jc", "Kd 9c Tc Qc Kc Ac")))
    bids(g, (1, 3), (2, None), (0, None))
    act(g, 1, NameTrump(suit="d"))
    act(g, 1, PlayCard(card="Ad"))
    assert cards(g.legal_actions()) == ["Jh"]  # Jh is P2's only diamond
    won = trick(g, "2 Jh 0 Kd")
    assert (won.seat, won.card) == (2, "Jh")
    assert g.current_player() == 2


def test_E02a_must_follow_with_Qh_and_Jh_is_a_renege() -> None:
    g = game(Deal(0, E02A))
    bids(g, (1, 3), (2, None), (0, None))
    act(g, 1, NameTrump(suit="d"))
    act(g, 1, PlayCard(card="Kh"))
    assert cards(g.legal_actions()) == ["Qh"]
    with pytest.raises(IllegalAction, match=r"must follow suit \(GE-09\): hearts led.*Jh is the left bower.*holds Qh$"):
        g.verify_action(PlayCard(card="Jh"))
    with pytest.raises(IllegalAction, match="must follow suit"):
        g.apply_action(PlayCard(card="9s"))
    assert g.current_player() == 2 and "Jh" in hand(g, 2)  # refused actions change nothing


def test_E02b_void_in_hearts_every_card_legal_and_Jh_wins() -> None:
    g = game(Deal(0, E02B))
    bids(g, (1, 3), (2, None), (0, None))
    act(g, 1, NameTrump(suit="d"))
    act(g, 1, PlayCard(card="Kh"))
    assert sorted(cards(g.legal_actions())) == sorted(["Jh", "9s", "Tc", "Ks", "As", "Ac"])
    won = trick(g, "2 Jh 0 Ah")
    assert (won.seat, won.card) == (2, "Jh")


def test_E04_bid_must_exceed_then_pass_makes_P2_declarer() -> None:
    g = game(Deal(0, E07))
    bids(g, (1, 3), (2, 4))
    with pytest.raises(IllegalAction, match=r"bid 4 must exceed the high bid 4 of seat 2 \(GE-05\)"):
        g.verify_action(Bid(bid=4))
    bids(g, (0, None))
    v = g.view(2)
    assert (v.phase, v.declarer, v.contract, g.current_player()) == ("name_trump", 2, 4, 2)
    act(g, 2, NameTrump(suit="s"))
    v = g.view(0)
    assert (v.phase, v.trump, v.leader, v.trick_number, g.current_player()) == ("trick", "s", 2, 1, 2)
    assert of(g, TrumpNamed) == [TrumpNamed(seat=2, contract=4, suit="s")]


def test_E07_full_hand() -> None:
    g = game(Deal(0, E07))
    bids(g, (1, 4), (2, None), (0, None))
    act(g, 1, NameTrump(suit="h"))
    winners = []
    for i, t in enumerate(E07_TRICKS):
        if i == 1:  # T2: Jd led is a heart; P2's only heart is Qh
            act(g, 1, PlayCard(card="Jd"))
            assert cards(g.legal_actions()) == ["Qh"]
            t = "2 Qh 0 Td"
        winners.append(trick(g, t).seat)
    assert winners == [1, 1, 1, 0, 1, 1]
    assert g.scores() == [1, 5, 0]
    assert [(e.seat, e.points, e.reason) for e in of(g, ScoreChanged)] == [(1, 5, "contract_made"), (0, 1, "tricks")]
    (scored,) = of(g, HandScored)
    assert (scored.declarer, scored.contract, scored.made, scored.tricks_won, scored.points) == (
        1,
        4,
        True,
        [1, 5, 0],
        [1, 5, 0],
    )


# ----------------------------------------------------------------- GE rules


@pytest.mark.parametrize("n", [1, 2, 4])
def test_GE01_exactly_three_players(n: int) -> None:
    with pytest.raises(ConfigError, match=f"exactly 3 players, not {n}"):
        new_state(EuchreRules(), n, 0)
    with pytest.raises(ConfigError, match="exactly 3 players"):
        GhostEuchreState(EuchreRules(), n, 0)
    assert GHOST_EUCHRE.seat_counts == (3,)


def test_GE02_deck_is_24_cards_nine_to_ace() -> None:
    g = game(seed=7)
    (deal,) = g.dealt_decks()
    assert sorted(CARD_STR[c] for c in deal.deck) == sorted(r + s for r in "9TJQKA" for s in "shdc")
    assert GHOST_EUCHRE.deck_size == 24
    bad = list(E07)
    bad[0] = parse_cards("2s")[0]
    with pytest.raises(ConfigError, match="24 cards"):
        game(Deal(0, tuple(bad)))
    with pytest.raises(ConfigError, match="24 cards"):
        game(Deal(0, tuple(range(52))))


def test_GE03_trump_and_plain_ranking() -> None:
    def win(trump: int, text: str) -> str:
        played = list(enumerate(parse_cards(text)))
        return CARD_STR[trick_winner(played, trump)[1]]

    assert win(D, "Ad Jh Kd") == "Jh"  # left bower > ace of trumps
    assert win(H, "Jd Jh Ah") == "Jh"  # right bower > left bower
    assert win(H, "As 9h Ks") == "9h"  # lowest trump beats the led ace
    assert win(H, "9s Ac Ts") == "Ts"  # off-suit ace never wins
    assert win(H, "Js Qs Ts") == "Qs"  # plain suit: A K Q J T 9
    assert win(H, "Jd Ad Kd") == "Jd"  # Jd led is a trump lead, not a diamond lead
    assert win(S, "Kc Jc Ac") == "Jc"  # black suits pair up too
    assert [effective_suit(c, H) for c in parse_cards("Jd Jh Jc Js Qd")] == [H, H, C, S, D]


def test_GE03_left_bower_does_not_follow_its_printed_suit() -> None:
    # trump hearts; P1 leads Qd. P2 holds Jd plus 9d: Jd is a heart, so only 9d follows.
    g = game(Deal(0, deck_of("Qd Ah Kh Qh As Ks", "Jd 9d 9s Ts Js Qs", "9h Th 9c Tc Jc Qc", "Jh Td Kd Ad Kc Ac")))
    bids(g, (1, 3), (2, None), (0, None))
    act(g, 1, NameTrump(suit="h"))
    act(g, 1, PlayCard(card="Qd"))
    assert cards(g.legal_actions()) == ["9d"]
    with pytest.raises(IllegalAction, match=r"diamonds led with hearts trump \(Jd is the left bower, a heart\)"):
        g.verify_action(PlayCard(card="Jd"))
    # and when a heart is led, Jd must follow it
    g2 = game(Deal(0, deck_of("Ah Kh Qh Qd As Ks", "Jd 9d 9s Ts Js Qs", "9h Th 9c Tc Jc Qc", "Jh Td Kd Ad Kc Ac")))
    bids(g2, (1, 3), (2, None), (0, None))
    act(g2, 1, NameTrump(suit="h"))
    act(g2, 1, PlayCard(card="Ah"))
    assert cards(g2.legal_actions()) == ["Jd"]


def test_GE04_deal_order_eldest_next_ghost_dealer() -> None:
    g = game(Deal(1, EUCHRE_DECK))  # 9s 9h 9d 9c Ts Th ... : pile i mod 4 is one suit
    assert of(g, DealStarted)[0].dealer == 1
    assert g.view(2).hand == ["As", "Ks", "Qs", "Js", "Ts", "9s"]  # eldest
    assert g.view(0).hand == ["Ah", "Kh", "Qh", "Jh", "Th", "9h"]  # next
    assert g.view(1).hand == ["Ac", "Kc", "Qc", "Jc", "Tc", "9c"]  # dealer
    assert [(a, e.seat) for a, e in g.events if isinstance(e, HandDealt)] == [(2, 2), (0, 0), (1, 1)]
    act(g, 2, SwapGhost())  # the ghost holds the diamonds
    assert g.view(2).hand == ["Ad", "Kd", "Qd", "Jd", "Td", "9d"]


def test_GE04_seeded_first_dealer_and_rotation() -> None:
    dealers = {game(seed=s).dealt_decks()[0].dealer for s in range(40)}
    assert dealers == {0, 1, 2}
    a, b = game(seed=11), game(seed=11)
    assert a.dealt_decks() == b.dealt_decks()
    first = a.dealt_decks()[0].dealer
    for k in range(4):  # all-pass redeals pass the deal left too
        for _ in range(3):
            a.apply_action(Pass())
        assert a.dealt_decks()[-1].dealer == (first + k + 1) % 3
    assert len({d.deck for d in a.dealt_decks()}) == 5  # a fresh shuffle each time


def test_GE05_bidding_order_values_and_moon() -> None:
    g = game(Deal(2, E07))  # dealer P2: P0, P1, then P2 last
    assert g.current_player() == 0
    assert g.legal_actions() == [Pass(), Bid(bid=3), Bid(bid=4), Bid(bid=5), Bid(bid="moon"), SwapGhost()]
    for bad, why in [
        (2, "below the minimum bid 3"),
        (6, "bad bid 6"),
        (0, "bad bid 0"),
        ("six", "bad bid"),
        (True, "bad bid"),
    ]:
        with pytest.raises(IllegalAction, match=why):
            g.verify_action(Bid(bid=bad))  # type: ignore[arg-type]
    bids(g, (0, 5))
    assert g.legal_actions() == [Pass(), Bid(bid="moon"), SwapGhost()]
    bids(g, (1, "moon"))
    assert g.legal_actions() == [Pass(), SwapGhost()]
    with pytest.raises(IllegalAction, match="must exceed the high bid moon of seat 1"):
        g.verify_action(Bid(bid=5))
    bids(g, (2, None))
    assert [(e.seat, e.bid) for e in of(g, BidMade)] == [(0, 5), (1, "moon"), (2, None)]
    v = g.view(0)
    assert (v.phase, v.declarer, v.contract, v.high_bid) == ("name_trump", 1, "moon", "moon")


def test_GE05_dealer_can_overcall_and_each_seat_acts_once() -> None:
    g = game(Deal(0, E07))
    bids(g, (1, None), (2, 3), (0, 4))
    assert (g.view(1).phase, g.view(1).declarer, g.current_player()) == ("name_trump", 0, 0)
    assert [b.seat for b in g.view(1).bids] == [1, 2, 0]


def test_GE06_swap_once_at_own_turn_then_bid_or_pass() -> None:
    g = game(Deal(0, E07))
    act(g, 1, SwapGhost())
    assert hand(g, 1) == {"9s", "Ts", "9d", "Tc", "Jc", "Qc"}  # the ghost, unseen before
    assert g.current_player() == 1
    assert SwapGhost() not in g.legal_actions() and g.legal_actions()[0] == Pass()
    with pytest.raises(IllegalAction, match="already swapped this hand and must now pass or bid"):
        g.verify_action(SwapGhost())
    bids(g, (1, None))
    assert SwapGhost() not in g.legal_actions()
    with pytest.raises(IllegalAction, match=r"only one ghost swap per hand \(GE-06\): seat 1 already swapped"):
        g.verify_action(SwapGhost())
    assert of(g, GhostSwapped) == [GhostSwapped(seat=1)]
    assert [(a, e.seat) for a, e in g.events if isinstance(e, GhostHandTaken)] == [(1, 1)]
    assert g.view(0).swapped_by == 1 and g.view(2).swapped_by == 1
    bids(g, (2, 3), (0, None))
    act(g, 2, NameTrump(suit="h"))
    assert "Jh" not in hand(g, 1)  # P1's old hand is dead: never played
    with pytest.raises(IllegalAction, match="must send a 'play' action now"):
        g.verify_action(SwapGhost())  # no swap after bidding


def test_GE06_dealer_may_swap_after_others_bid() -> None:
    g = game(Deal(0, E07))
    bids(g, (1, 3), (2, None))
    act(g, 0, SwapGhost())
    assert hand(g, 0) == {"9s", "Ts", "9d", "Tc", "Jc", "Qc"}
    assert g.legal_actions() == [Pass(), Bid(bid=4), Bid(bid=5), Bid(bid="moon")]
    bids(g, (0, 4))
    assert g.view(0).declarer == 0


def test_GE07_all_pass_redeals_no_score_deal_passes_left() -> None:
    g = game(Deal(0, E07), seed=3)
    act(g, 1, SwapGhost())
    bids(g, (1, None), (2, None), (0, None))
    assert g.scores() == [0, 0, 0] and not of(g, ScoreChanged)
    assert of(g, AllPassed) == [AllPassed(deal=1, next_dealer=1)]
    started = of(g, DealStarted)
    assert [(e.deal, e.dealer) for e in started] == [(1, 0), (2, 1)]
    v = g.view(0)
    assert (v.deal, v.dealer, v.phase, v.bids, v.swapped_by, g.current_player()) == (2, 1, "bidding", [], None, 2)
    assert SwapGhost() in g.legal_actions()  # a new hand allows a new swap


def test_GE08_declarer_names_trump_no_notrump_and_leads() -> None:
    g = game(Deal(0, E07))
    bids(g, (1, None), (2, 3), (0, None))
    assert g.current_player() == 2
    assert sorted(a.suit for a in g.legal_actions()) == ["c", "d", "h", "s"]
    for bad in ("n", "hearts", ""):
        with pytest.raises(IllegalAction, match="bad trump suit"):
            g.verify_action(NameTrump(suit=bad))  # type: ignore[arg-type]
    with pytest.raises(IllegalAction, match="must send a 'name_trump' action now"):
        g.verify_action(PlayCard(card="Qh"))
    act(g, 2, NameTrump(suit="d"))
    assert (g.current_player(), g.view(1).leader, g.view(1).trump) == (2, 2, "d")


def test_GE09_follow_effective_suit_winner_leads() -> None:
    g = game(Deal(0, E07))
    bids(g, (1, 4), (2, None), (0, None))
    act(g, 1, NameTrump(suit="h"))
    act(g, 1, PlayCard(card="Jh"))
    assert cards(g.legal_actions()) == ["Th", "Qh"]  # weakest first
    assert g.view(2).led_suit == "h"
    trick(g, "2 Th 0 9h")
    trick(g, "1 Jd 2 Qh 0 Td")
    act(g, 1, PlayCard(card="As"))
    assert cards(g.legal_actions()) == ["Qs"]
    act(g, 2, PlayCard(card="Qs"))
    with pytest.raises(IllegalAction, match=r"spades led.*hand holds (Ks Js|Js Ks)"):
        g.verify_action(PlayCard(card="Qd"))
    act(g, 0, PlayCard(card="Ks"))
    won = trick(g, "1 Kc 2 9c 0 Ac")  # highest of the led suit wins
    assert (won.seat, won.card) == (0, "Ac")
    assert g.current_player() == 0 and g.view(1).leader == 0
    won = trick(g, "0 Js 1 Kh 2 Kd")  # a trump beats the led suit
    assert (won.seat, won.card) == (1, "Kh")
    assert g.view(0).tricks_won == [1, 4, 0]
    with pytest.raises(IllegalAction, match="cannot play Jh: not in hand"):
        g.verify_action(PlayCard(card="Jh"))
    with pytest.raises(IllegalAction, match="bad card"):
        g.verify_action(PlayCard(card="Xx"))


def test_GE10_renege_rejected_by_default() -> None:
    g = game(Deal(0, E02A))
    bids(g, (1, 3), (2, None), (0, None))
    act(g, 1, NameTrump(suit="d"))
    act(g, 1, PlayCard(card="Kh"))
    for card in ("Jh", "9s", "Tc", "Ks", "As"):
        with pytest.raises(IllegalAction, match="must follow suit"):
            g.verify_action(PlayCard(card=card))


E02A_TRICKS = [
    "1 Kh 2 Jh 0 Ah",  # P2 reneges with the left bower and wins it
    "2 Qh 0 Th 1 9d",
    "1 Ad 2 9s 0 Jd",
    "0 9h 1 Td 2 Tc",
    "1 Kd 2 Ks 0 Jc",
    "1 Qd 2 As 0 Js",
]


@pytest.mark.parametrize(
    ("options", "penalty"), [({"preset": "renege_penalty"}, 2), ({"renege_policy": "penalize", "renege_penalty": 3}, 3)]
)
def test_GE10_renege_penalized_when_hand_scored(options: dict, penalty: int) -> None:
    g = game(Deal(0, E02A), **options)
    bids(g, (1, 3), (2, None), (0, None))
    act(g, 1, NameTrump(suit="d"))
    act(g, 1, PlayCard(card="Kh"))
    legal = cards(g.legal_actions())
    assert legal[0] == "Qh" and sorted(legal) == sorted(["Qh", "Jh", "9s", "Tc", "Ks", "As"])
    act(g, 2, PlayCard(card="Jh"))
    assert not of(g, Reneged)  # not announced while hidden cards could still be inferred
    act(g, 0, PlayCard(card="Ah"))
    assert of(g, TrickWon)[-1].seat == 2
    for t in E02A_TRICKS[1:]:
        trick(g, t)
    assert [e.seat for e in of(g, TrickWon)] == [2, 1, 0, 1, 1, 1]
    assert of(g, Reneged) == [Reneged(seat=2, trick=1, card="Jh", led_suit="h", penalty=penalty)]
    assert g.scores() == [1, 4, 1 - penalty]
    assert of(g, HandScored)[0].points == [1, 4, 1 - penalty]
    assert ScoreChanged(seat=2, points=-penalty, total=1 - penalty, reason="renege") in of(g, ScoreChanged)


def test_GE11_made_contract_scores_all_tricks() -> None:
    assert play_e07(4).scores() == [1, 5, 0]  # overtricks count
    assert play_e07(5).scores() == [1, 5, 0]  # exactly made


def test_GE11_set_declarer_loses_bid_others_keep_tricks() -> None:
    g = play_split(4)
    assert [e.seat for e in of(g, TrickWon)] == [1, 1, 1, 2, 2, 2]
    assert g.scores() == [0, -4, 3]
    assert [(e.seat, e.points, e.reason) for e in of(g, ScoreChanged)] == [(1, -4, "set"), (2, 3, "tricks")]
    assert of(g, HandScored)[0].made is False


@pytest.mark.parametrize(
    ("preset", "options", "expected"),
    [
        ("gamerules", {}, -6),
        ("moon_minus_24", {}, -24),
        ("gamerules", {"moon_fail_penalty": 10}, -10),
    ],
)
def test_GE11_failed_moon(preset: str, options: dict, expected: int) -> None:
    g = play_e07("moon", preset=preset, **options)  # P1 takes 5 of 6
    assert g.scores() == [1, expected, 0]
    assert of(g, ScoreChanged)[0].reason == "moon_failed"


@pytest.mark.parametrize(("options", "expected"), [({}, 24), ({"moon_points": 30}, 30)])
def test_GE11_made_moon(options: dict, expected: int) -> None:
    g = game(moon_deck(mooner=1, dealer=0), **options)
    bids(g, (1, "moon"), (2, None), (0, None))
    act(g, 1, NameTrump(suit="h"))
    run_tricks(g)
    assert g.scores() == [0, expected, 0]
    assert of(g, HandScored)[0].tricks_won == [0, 6, 0]


def test_GE12_scores_go_negative() -> None:
    g = play_split(5, deals=[Deal(1, SPLIT)])
    assert g.scores() == [0, -5, 3]
    assert g.view(0).scores == [0, -5, 3] and not g.is_terminal()


def test_GE13_first_to_target_wins_default_32() -> None:
    g = game(moon_deck(1, 0), moon_deck(1, 1))
    bids(g, (1, "moon"), (2, None), (0, None))
    act(g, 1, NameTrump(suit="h"))
    run_tricks(g)
    assert g.scores() == [0, 24, 0] and not g.is_terminal()  # 24 < 32
    bids(g, (2, None), (0, None), (1, "moon"))
    act(g, 1, NameTrump(suit="h"))
    run_tricks(g)
    assert g.is_terminal() and g.current_player() == TERMINAL
    r = g.result()
    assert (r.winner, r.scores, r.placements, r.reason) == (1, [0, 48, 0], [2, 1, 2], "target")
    assert of(g, GameEnded) == [GameEnded(winner=1, scores=[0, 48, 0], placements=[2, 1, 2], reason="target")]
    assert g.legal_actions() == [] and g.view(0).phase == "game_over"
    with pytest.raises(IllegalAction, match="game is over"):
        g.verify_action(Pass())


def test_GE13_highest_of_several_over_target_wins() -> None:
    g = play_e07(4, target_score=1)  # P1 5, P0 1: both reach 1
    assert g.result().winner == 1 and g.result().placements == [2, 1, 3]


def test_GE13_tie_at_top_plays_another_hand_and_the_trailer_can_win() -> None:
    g = play_split(3, deals=[Deal(1, SPLIT), moon_deck(mooner=0, dealer=2)], target_score=3)
    assert g.scores() == [0, 3, 3] and not g.is_terminal()  # tied at the target
    assert of(g, DealStarted)[-1] == DealStarted(deal=2, dealer=1, active=[0, 1, 2], tiebreak=True)
    assert g.view(0).tiebreak
    bids(g, (2, None), (0, None), (1, None))  # still tied after an all-pass: yet another hand
    assert of(g, DealStarted)[-1].tiebreak and not g.is_terminal()
    bids(g, (0, "moon"), (1, None), (2, None))
    act(g, 0, NameTrump(suit="h"))
    run_tricks(g)
    r = g.result()
    assert (r.winner, r.scores, r.placements, r.reason) == (0, [24, 3, 3], [1, 2, 2], "tiebreak")


def test_GE14_views_and_events_never_show_ghost_or_dead_cards() -> None:
    g = game(Deal(0, E07))
    ghost = ["9s", "Ts", "9d", "Tc", "Jc", "Qc"]
    p1_old = ["Jh", "Jd", "Ah", "Kh", "As", "Kc"]

    def shown(seat: int) -> bytes:
        return msgspec.json.encode(g.view(seat)) + msgspec.json.encode(seen_by(g, seat))

    for seat in (0, 1, 2):
        assert not any(f'"{c}"'.encode() in shown(seat) for c in ghost)
    act(g, 1, SwapGhost())
    for seat in (0, 2):
        assert not any(f'"{c}"'.encode() in shown(seat) for c in ghost + p1_old)
    bids(g, (1, None), (2, 3), (0, None))
    act(g, 2, NameTrump(suit="d"))
    while len(g.view(0).tricks) < 5 or g.view(0).trick:  # up to the last trick's first card
        g.apply_action(g.legal_actions()[0])
    for seat in (0, 2):
        assert not any(f'"{c}"'.encode() in shown(seat) for c in p1_old)
    run_tricks(g)  # the whole hand: the dead hand is never revealed to anyone but its owner
    end = next(i for i, (_, e) in enumerate(g.events) if isinstance(e, DealEnded))
    for seat in (0, 2):
        hand_events = msgspec.json.encode([e for a, e in g.events[: end + 1] if a in (PUBLIC, seat)])
        assert not any(f'"{c}"'.encode() in hand_events for c in p1_old)


# ----------------------------------------------------------------- options and wire


def test_presets_and_option_validation() -> None:
    assert build_rules(GHOST_EUCHRE) == EuchreRules()
    assert build_rules(GHOST_EUCHRE, "moon_minus_24").moon_fail_penalty == 24
    assert build_rules(GHOST_EUCHRE, "renege_penalty").renege_policy == "penalize"
    r = EuchreRules()
    assert (r.target_score, r.min_bid, r.moon_points, r.moon_fail_penalty, r.renege_policy, r.renege_penalty) == (
        32,
        3,
        24,
        6,
        "reject",
        2,
    )
    for bad in ({"trump": "h"}, {"renege_policy": "maybe"}, {"min_bid": 6}, {"target_score": 0}):
        with pytest.raises(ConfigError):
            build_rules(GHOST_EUCHRE, None, bad)
    assert get_game("ghost-euchre") is GHOST_EUCHRE and get_game("ghost_euchre") is GHOST_EUCHRE
    assert GHOST_EUCHRE.default_preset == "gamerules" and GHOST_EUCHRE.title == "Ghost Hand Euchre"


def test_min_bid_option() -> None:
    g = game(Deal(0, E07), min_bid=1)
    assert [a.bid for a in g.legal_actions() if isinstance(a, Bid)] == [1, 2, 3, 4, 5, "moon"]
    bids(g, (1, 1), (2, None), (0, None))
    assert g.view(0).contract == 1


def test_max_hands_safety_valve() -> None:
    g = game(seed=5, max_hands=4)
    while not g.is_terminal():
        g.apply_action(g.legal_actions()[0])  # always pass
    r = g.result()
    assert (r.winner, r.scores, r.placements, r.reason) == (None, [0, 0, 0], [1, 1, 1], "hand_limit")
    assert len(of(g, DealStarted)) == 4 and len(of(g, AllPassed)) == 4


WIRE = {
    b'{"type":"pass"}': Pass(),
    b'{"type":"bid","bid":4}': Bid(bid=4),
    b'{"type":"bid","bid":"moon"}': Bid(bid="moon"),
    b'{"type":"swap_ghost"}': SwapGhost(),
    b'{"type":"name_trump","suit":"h"}': NameTrump(suit="h"),
    b'{"type":"play","card":"Jh"}': PlayCard(card="Jh"),
}


def test_wire_action_shapes() -> None:
    for raw, action in WIRE.items():
        assert msgspec.json.decode(raw, type=EuchreAction) == action
        assert msgspec.json.encode(action) == raw
    for raw in (
        b'{"type":"bid","bid":6}',
        b'{"type":"bid"}',
        b'{"type":"pass","bid":3}',
        b'{"type":"name_trump","suit":"x"}',
    ):
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(raw, type=EuchreAction)


def test_wire_tags_do_not_collide_with_chicago() -> None:
    msgspec.json.Decoder(ChicagoAction | EuchreAction)
    msgspec.json.Decoder(ChicagoEvent | EuchreEvent)
    msgspec.json.Decoder(ChicagoView | EuchreView)
    rules = msgspec.json.decode(b'{"game":"ghost_euchre","target_score":20}', type=ChicagoRules | EuchreRules)
    assert rules == EuchreRules(target_score=20)


def test_wire_view_and_events_round_trip() -> None:
    g = play_e07(4)
    raw = msgspec.json.encode(g.view(2))
    assert raw.startswith(b'{"game":"ghost_euchre","seat":2,')
    assert msgspec.json.decode(raw, type=EuchreView) == g.view(2)
    dec = msgspec.json.Decoder(list[EuchreEvent])
    evs = [e for _, e in g.events]
    assert dec.decode(msgspec.json.encode(evs)) == evs


# ----------------------------------------------------------------- playouts


def biased_policy(rng: random.Random) -> Callable[[GhostEuchreState, list[msgspec.Struct]], msgspec.Struct]:
    """Random, but bids cautiously and seldom reneges (under `penalize`) so games
    reach the target instead of the hand cap."""

    def pick(g: GhostEuchreState, legal: list[msgspec.Struct]) -> msgspec.Struct:
        first = legal[0]
        if isinstance(first, Pass):
            if SwapGhost() in legal and rng.random() < 0.15:
                return SwapGhost()
            offers = [a for a in legal if isinstance(a, Bid)]
            if offers and rng.random() < 0.5:
                return offers[0] if rng.random() < 0.8 else rng.choice(offers)
            return first
        if isinstance(first, NameTrump):
            return first if rng.random() < 0.8 else rng.choice(legal)
        v = g.view(g.current_player())
        if v.led_suit is not None and rng.random() < 0.95:
            trump, led = "shdc".index(v.trump), "shdc".index(v.led_suit)  # type: ignore[arg-type]
            follow = [a for a in legal if effective_suit(parse_cards([a.card])[0], trump) == led]  # type: ignore[attr-defined]
            legal = follow or legal
        return legal[-1] if rng.random() < 0.5 else rng.choice(legal)

    return pick


BID_RANK = {3: 3, 4: 4, 5: 5, "moon": 6}


def check_invariants(g: GhostEuchreState, legal: list[msgspec.Struct]) -> None:
    if g.is_terminal():
        assert g.current_player() == TERMINAL and legal == []
        return
    assert g.current_player() in (0, 1, 2) and legal
    assert sorted(g.cards_in_play()) == list(EUCHRE_DECK)
    assert len(set(map(msgspec.json.encode, legal))) == len(legal)
    seat = g.current_player()
    v = g.view(seat)
    played = [p.seat for t in v.tricks for p in t.cards] + [p.seat for p in v.trick]
    assert len(v.hand) == 6 - played.count(seat)
    if v.phase == "trick" and g.rules.renege_policy == "reject":  # everything else in hand is refused
        illegal = set(v.hand) - set(cards(legal))
        for card in illegal:
            with pytest.raises(IllegalAction, match="must follow suit"):
                g.verify_action(PlayCard(card=card))


def check_hand_history(g: GhostEuchreState) -> None:
    per_deal: dict[int, list[msgspec.Struct]] = {}
    deal = 0
    for _, e in g.events:
        if isinstance(e, DealStarted):
            deal = e.deal
        per_deal.setdefault(deal, []).append(e)
    totals = [0, 0, 0]
    for evs in per_deal.values():
        assert sum(isinstance(e, GhostSwapped) for e in evs) <= 1
        ranks = [BID_RANK[e.bid] for e in evs if isinstance(e, BidMade) and e.bid is not None]
        assert ranks == sorted(set(ranks))  # strictly increasing
        assert sum(isinstance(e, BidMade) for e in evs) == 3
        won = [e for e in evs if isinstance(e, TrickWon)]
        scored = [e for e in evs if isinstance(e, HandScored)]
        if any(isinstance(e, AllPassed) for e in evs):
            assert not won and not scored and not ranks
        elif scored:
            assert len(won) == 6 and sum(scored[0].tricks_won) == 6
            assert len([e for e in evs if isinstance(e, CardPlayed)]) == 18
            for e in evs:
                if isinstance(e, ScoreChanged):
                    totals[e.seat] += e.points
                    assert totals[e.seat] == e.total
            assert scored[0].scores == totals
        assert isinstance(evs[-1], (DealEnded, GameEnded))
    assert totals == g.scores()


@pytest.mark.parametrize("preset", ["gamerules", "renege_penalty", "moon_minus_24"])
def test_random_playouts_invariants(preset: str) -> None:
    hands = 0
    reasons: Counter[str] = Counter()
    for seed in range(40):
        rng = random.Random(seed)
        pick = biased_policy(rng)
        g = game(seed=seed, preset=preset)
        legal = g.legal_actions()
        steps = 0
        while not g.is_terminal():
            check_invariants(g, legal)
            action = pick(g, legal)
            assert action in legal
            g.apply_action(action)
            legal = g.legal_actions()
            steps += 1
        check_invariants(g, legal)
        check_hand_history(g)
        hands += g.deal_number
        r = g.result()
        reasons[r.reason] += 1
        best = max(r.scores)
        assert r.winner is not None and r.scores[r.winner] == best >= 32
        assert r.scores.count(best) == 1
        # the game re-simulates from its dealt decks and actions
    assert hands >= 1000
    assert set(reasons) <= {"target", "tiebreak"}


def test_random_playouts_replay_from_dealt_decks() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        pick = biased_policy(rng)
        g = game(seed=seed)
        actions = []
        while not g.is_terminal():
            actions.append(pick(g, g.legal_actions()))
            g.apply_action(actions[-1])
        again = game(*g.dealt_decks(), seed=seed + 1000)
        for a in actions:
            again.apply_action(a)
        assert again.events == g.events and again.result() == g.result()


# ----------------------------------------------------------------- no leak


def record(g: GhostEuchreState, actions: Sequence[msgspec.Struct], seat: int) -> list[tuple[bytes, int]]:
    """After each action prefix: the seat's encoded view (+ legal list) and the event count."""
    enc = msgspec.json.encode
    out = []
    for i in range(len(actions) + 1):
        if i:
            g.apply_action(actions[i - 1])
        legal = enc(g.legal_actions()) if g.current_player() == seat else b""
        out.append((enc(g.view(seat)) + legal, len(g.events)))
    return out


def known_to(g: GhostEuchreState, seat: int) -> set[int]:
    """Cards `seat` has seen in the current deal: its hand, played cards, and its
    dealt hand (its own dead hand, if it swapped)."""
    v = g.view(seat)
    known = set(v.hand) | {p.card for p in v.trick} | {p.card for t in v.tricks for p in t.cards}
    known |= set(of(g, HandDealt, audience=seat)[-1].cards)
    return set(parse_cards(sorted(known)))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 10**6),
    cut=st.floats(0, 1),
    seat=st.integers(0, 2),
    policy=st.sampled_from(["penalize", "reject"]),
)
def test_GE14_no_leak_permuting_hidden_cards(seed: int, cut: float, seat: int, policy: str) -> None:
    """Shuffle every card `seat` has not seen (other hands' unplayed cards, the ghost,
    a dead hand that is not its own): the seat's views, legal lists and events up to
    that point must not change. Under `reject` a shuffle can make a replayed card a
    renege, so those shuffles are skipped; under `penalize` every replay is legal."""
    rng = random.Random(seed)
    pick = biased_policy(rng)
    a = game(seed=seed, renege_policy=policy, target_score=12)
    actions: list[msgspec.Struct] = []
    while not a.is_terminal():
        actions.append(pick(a, a.legal_actions()))
        a.apply_action(actions[-1])
    k = int(cut * len(actions))
    at_k = game(seed=seed, renege_policy=policy, target_score=12)
    for act_ in actions[:k]:
        at_k.apply_action(act_)
    hidden = set(EUCHRE_DECK) - known_to(at_k, seat)
    decks = a.dealt_decks()
    d = len(at_k.dealt_decks()) - 1
    deck = list(decks[d].deck)
    slots = [i for i, c in enumerate(deck) if c in hidden]
    moved = [deck[i] for i in slots]
    rng.shuffle(moved)
    for i, c in zip(slots, moved):
        deck[i] = c
    decks[d] = Deal(decks[d].dealer, tuple(deck))
    b_rules = dict(renege_policy=policy, target_score=12)
    want = record(game(*a.dealt_decks(), **b_rules), actions[:k], seat)  # type: ignore[arg-type]
    b = game(*decks, **b_rules)  # type: ignore[arg-type]
    try:
        got = record(b, actions[:k], seat)
    except IllegalAction:
        assert policy == "reject"
        return
    assert got == want
    ref = game(*a.dealt_decks(), **b_rules)  # type: ignore[arg-type]
    for act_ in actions[:k]:
        ref.apply_action(act_)
    assert seen_by(b, seat) == seen_by(ref, seat)
