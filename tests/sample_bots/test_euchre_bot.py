"""The built-in bot `euchre` (Ghost Hand Euchre): unit tests of `choose` on
engine-built and hand-built views, a strength test against the uniform-random
bot, and a protocol round trip."""

from __future__ import annotations

from pathlib import Path

from botsession import imported_modules, one_request

from protocol.common import PlayCard, PlayedCard
from protocol.euchre import Bid, EuchreView, NameTrump, Pass, SwapGhost
from referee.bots import euchre
from referee.games.base import Deal
from referee.games.cards import parse_cards
from referee.games.playout import new_game, play_game, random_policy

choose = euchre.choose

# Seat 0 deals in every engine-built deal: seat 1 bids first, then 2, then 0.
FILLER = "9s Ts 9d Tc Jc Qc"


# ------------------------------------------------------------------ helpers


def deck_of(eldest: str, nxt: str, ghost: str, dealer: str) -> tuple[int, ...]:
    """The 24-card deck that deals these hands: deck[i] -> pile i mod 4 (GE-04)."""
    piles = [parse_cards(p) for p in (eldest, nxt, ghost, dealer)]
    assert all(len(p) == 6 for p in piles)
    assert len({c for p in piles for c in p}) == 24
    return tuple(piles[i % 4][i // 4] for i in range(24))


def engine(eldest: str, nxt: str, ghost: str, dealer: str, *, preset: str | None = None):
    return new_game("ghost_euchre", 3, 5, preset=preset, deals=[Deal(0, deck_of(eldest, nxt, ghost, dealer))])


def bot_acts(state):
    """Let the bot choose for the seat to act, check it is legal, apply it."""
    seat = state.current_player()
    legal = state.legal_actions()
    action = choose(state.view(seat), legal)
    assert action in legal
    state.apply_action(action)
    return action


def make_view(**fields) -> EuchreView:
    base = dict(
        seat=2,
        n_players=3,
        phase="trick",
        deal=1,
        dealer=0,
        tiebreak=False,
        target_score=32,
        scores=[0, 0, 0],
        hand=[],
        bids=[],
        high_bid=3,
        swapped_by=None,
        declarer=1,
        contract=3,
        trump="h",
        trick_number=1,
        leader=1,
        led_suit=None,
        trick=[],
        tricks=[],
        tricks_won=[0, 0, 0],
    )
    base.update(fields)
    return EuchreView(**base)


def plays(hand: str, trick: str = "", legal: str | None = None, **fields) -> str:
    """The card `choose` plays. `trick` is "seat card ..." (leader first);
    `legal` defaults to every card in `hand`."""
    parts = trick.split()
    played = [PlayedCard(seat=int(s), card=c) for s, c in zip(parts[::2], parts[1::2])]
    trump = fields.get("trump", "h")
    led = euchre.suit_of(played[0].card, trump) if played else None
    view = make_view(hand=hand.split(), trick=played, led_suit=led, **fields)
    options = [PlayCard(card=c) for c in (legal or hand).split()]
    action = choose(view, options)
    assert action in options
    return action.card


# ------------------------------------------------------------------ bidding and trump


def test_near_certain_hand_shoots_the_moon_names_trump_and_leads_the_right_bower():
    # Both bowers, A K of hearts and two off-suit aces: six sure tricks.
    state = engine("Jh Jd Ah Kh As Ac", "Qh Th Ad Kd Qs 9c", FILLER, "9h Ks Js Kc Qd Td")
    assert bot_acts(state) == Bid(bid="moon")
    state.apply_action(Pass())  # seat 2 (no higher bid exists anyway)
    state.apply_action(Pass())  # seat 0
    assert state.current_player() == 1
    assert bot_acts(state) == NameTrump(suit="h")
    assert bot_acts(state) == PlayCard(card="Jh")


def test_good_hand_bids_what_it_counts_and_names_its_best_suit():
    # Right bower, A K of hearts and the ace of spades: about three tricks.
    state = engine("Jh Ah Kh As 9c Td", "Qh Th Ad Kd Qs Ac", FILLER, "9h Ks Js Kc Qd Jd")
    assert euchre.best_trump(state.view(1).hand)[0] == "h"
    assert bot_acts(state) == Bid(bid=3)
    state.apply_action(Pass())
    state.apply_action(Pass())
    assert bot_acts(state) == NameTrump(suit="h")
    # Declarer with the top trump while trumps are still out: lead it.
    assert bot_acts(state) == PlayCard(card="Jh")


def test_names_the_suit_of_its_count_not_the_first_legal_suit():
    # Four low spades but bowers and the ace in diamonds: diamonds is best.
    hand = "Jd Jh Ad 9s Ts Qs"
    assert euchre.best_trump(hand.split())[0] == "d"
    view = make_view(seat=1, phase="name_trump", hand=hand.split(), trump=None, declarer=1, contract=3)
    legal = [NameTrump(suit=s) for s in "shdc"]
    assert choose(view, legal) == NameTrump(suit="d")


def test_does_not_outbid_beyond_its_count():
    # Seat 2's hand counts about three tricks; seat 1 already bid 4.
    state = engine("Qh Th Ad Kd Qs Ac", "Jh Ah Kh As 9c Td", FILLER, "9h Ks Js Kc Qd Jd")
    state.apply_action(Bid(bid=4))
    assert bot_acts(state) == Pass()


def test_very_weak_hand_swaps_for_the_ghost_then_passes_a_weak_ghost():
    state = engine("9s Ts 9d Tc Qs Qd", "Jh Ah Kh As Ac Td", "Ks Kd 9c Qc 9h Th", "Jd Js Jc Ad Kc Qh")
    assert bot_acts(state) == SwapGhost()
    view = state.view(1)
    assert view.swapped_by == 1 and set(view.hand) == {"Ks", "Kd", "9c", "Qc", "9h", "Th"}
    assert bot_acts(state) == Pass()


def test_weak_hand_passes_once_the_swap_is_used():
    state = engine("Jh Ah Kh As Ac Td", "9s Ts 9d Tc Qs Qd", "Ks Kd 9c Qc 9h Th", "Jd Js Jc Ad Kc Qh")
    state.apply_action(SwapGhost())  # seat 1 takes the ghost
    state.apply_action(Pass())
    assert state.view(2).swapped_by == 1
    assert bot_acts(state) == Pass()


# ------------------------------------------------------------------ play


def test_follows_with_the_cheapest_winning_card():
    assert plays("Ks Qs 9s Ad Jh 9c", "1 Ts", legal="Ks Qs 9s") == "Qs"


def test_follows_low_when_it_cannot_win():
    assert plays("Ks 9s Ad Jh 9c Qc", "1 As", legal="Ks 9s") == "9s"


def test_void_ruffs_with_the_cheapest_winning_trump():
    # Spades led, no spades: the 9 of trumps wins as well as the bowers would.
    assert plays("Jd 9h Ah Kc 9c Td", "1 As") == "9h"


def test_void_discards_the_lowest_plain_card_when_it_cannot_win():
    # Ah already trumped the spade lead; 9h cannot beat it: throw the 9 of clubs.
    assert plays("9h Kc 9c Td", "1 As 0 Ah") == "9c"


def test_left_bower_follows_trump_even_when_reneging_is_legal():
    # renege_penalty: the legal list holds every card. Trump (hearts) is led,
    # the jack of diamonds is the left bower, so it must follow with it.
    assert plays("Jd As Ks", "1 Qh") == "Jd"


def test_defender_leads_an_off_suit_ace_not_trump():
    assert plays("9h Th Ks 9d Qd Ac", seat=2, leader=2) == "Ac"


def test_other_games_get_the_first_legal_action():
    state = new_game("chicago", 2, 3)
    seat = state.current_player()
    legal = state.legal_actions()
    assert choose(state.view(seat), legal) == legal[0]


# ------------------------------------------------------------------ whole games


def bot_policy(decision):
    action = choose(decision.view, decision.legal)
    assert action in decision.legal
    return action


def test_always_legal_in_self_play_under_every_preset():
    for preset in ("gamerules", "moon_minus_24", "renege_penalty"):
        for seed in range(3):
            result = play_game(new_game("ghost_euchre", 3, seed, preset=preset), [bot_policy] * 3)
            assert result.reason


def test_beats_two_random_bots():
    games, first = 90, 0
    for g in range(games):
        seat = g % 3  # rotate the bot over the seats
        policies = [random_policy(1000 + 7 * g + s) for s in range(3)]
        policies[seat] = bot_policy
        result = play_game(new_game("ghost_euchre", 3, g), policies)
        first += result.winner == seat
    rate = first / games
    print(f"euchre bot first place vs two random bots: {first}/{games} = {rate:.2f}")
    # A random seat wins 1/3 of the time; the bot measured 90/90 here.
    assert rate > 0.6


# ------------------------------------------------------------------ hygiene


def test_imports_only_protocol_and_stdlib():
    modules = imported_modules(Path(euchre.__file__))
    assert "referee" not in modules
    assert modules <= {"__future__", "protocol", "sys"}


def test_speaks_the_protocol(tmp_path):
    state = new_game("ghost_euchre", 3, 3)
    hello, reply = one_request("euchre", state, "ghost_euchre", ["euchre", "random", "random"], tmp_path)
    assert hello.name == "euchre"
    assert reply.id == 5
    state.verify_action(reply.action)
