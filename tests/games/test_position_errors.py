"""Positions that cannot occur are refused with one line that says what is
impossible; positions written by hand (a puzzle) build and play."""

from __future__ import annotations

from dataclasses import replace

import pytest

from protocol.chicago import ChicagoRules
from referee.games import (
    ChicagoPosition,
    EuchrePosition,
    PositionError,
    chicago_deck,
    new_game,
    position_of,
    state_from_position,
)
from referee.games.cards import CARD_STR

HANDS = ("As Ks Qs Js Ts", "Ah Kh Qh Jh Th")


def chicago_start() -> ChicagoPosition:
    """Two seats, seat 1 deals: seat 0 holds the spades, seat 1 the hearts."""
    state = new_game("chicago", 2, 1, deals=[chicago_deck(2, 1, {0: HANDS[0], 1: HANDS[1]})])
    return position_of(state)


def chicago_tricks() -> ChicagoPosition:
    """Trick play after three passing rounds: seat 0 led As, seat 1 (hearts only) threw Ah."""
    pack = [c for c in CARD_STR if c not in " ".join(HANDS).split()]
    return ChicagoPosition(
        n_players=2,
        dealer=1,
        hands=(("Ks", "Qs", "Js", "Ts"), ("Kh", "Qh", "Jh", "Th")),
        stock=tuple(pack),
        exchanged=(0, 0, 0, 0, 0, 0),
        phase="trick",
        tricks=(("As", "Ah"),),
        scores=(3, 4),
    )


def test_a_hand_written_puzzle_builds_and_plays() -> None:
    state = state_from_position(chicago_tricks())
    assert state.current_player() == 0  # seat 0 won the first trick with As and leads
    assert [a.card for a in state.legal_actions()] == ["Ts", "Js", "Qs", "Ks"]
    assert state.view(1).tricks_won == [1, 0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: replace(p, hands=(p.hands[0], p.hands[0])), "in two places: hands.0. and hands.1."),
        (lambda p: replace(p, hands=(p.hands[0][:4], p.hands[1])), "add up to 51"),
        (
            lambda p: replace(p, hands=(p.hands[0][:4], p.hands[1] + p.hands[0][4:])),
            "seat 0 holds 5 cards now .exchange., not 4",
        ),
        (lambda p: replace(p, to_act=1), "it is seat 0's turn"),
        (lambda p: replace(p, scores=(-2, 0)), "below the score floor 0"),
        (lambda p: replace(p, scores=(60, 0)), "the game would be over"),
        (lambda p: replace(p, phase="bidding"), "is not one of exchange"),
        (lambda p: replace(p, dealer=3), "not a seat of this deal"),
        (lambda p: replace(p, exchanged=(1, 2, 3, 4, 5, 0)), "the phase cannot be exchange"),
        (
            lambda p: replace(p, hands=p.hands + ((),), n_players=3, scores=(0, 0, 0), to_act=None),
            "seat 2 holds 5 cards",
        ),
        (
            lambda p: replace(p, open_card=p.stock[0], stock=p.stock[1:]),
            "an open card exactly when the phase is take_open",
        ),
    ],
)
def test_impossible_chicago_positions_are_refused(change, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        state_from_position(change(chicago_start()))


def without(cards: tuple[str, ...], *drop: str) -> tuple[str, ...]:
    return tuple(c for c in cards if c not in drop)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda p: replace(
                p,
                tricks=(("As", "2h"),),
                hands=(p.hands[0], ("Kh", "Qh", "Jh", "9s")),
                stock=without(p.stock, "2h", "9s") + ("Ah", "Th"),
            ),
            "seat 1 played 2h on a spades lead while holding 9s",
        ),
        (
            lambda p: replace(p, tricks=tuple(zip(HANDS[0].split(), HANDS[1].split())), hands=((), ())),
            "after 5 it is over",
        ),
        (lambda p: replace(p, declarer=0), "seat 0 may not have called Chicago"),
        (
            lambda p: replace(p, trick=("Ks", "Kh"), hands=(("Qs", "Js", "Ts"), ("Qh", "Jh", "Th"))),
            "2 cards in a trick of 2",
        ),
        (lambda p: replace(p, to_act=1), "it is seat 0's turn .trick., not seat 1's"),
    ],
)
def test_impossible_tricks_are_refused(change, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        state_from_position(change(chicago_tricks()))


def test_a_trick_the_declarer_lost_ends_the_deal_so_cannot_be_shown() -> None:
    failed = replace(chicago_tricks(), declarer=1, scores=(3, 20))
    with pytest.raises(PositionError, match="seat 0 won it, so the Chicago of seat 1 failed"):
        state_from_position(failed, ChicagoRules(chicago_leader="eldest"))


def euchre_start() -> EuchrePosition:
    return position_of(new_game("ghost_euchre", 3, 2))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: replace(p, bids=(4, 3)), "does not beat the high bid 4"),
        (lambda p: replace(p, bids=(2,)), "below the minimum bid 3"),
        (lambda p: replace(p, bids=("moon", None, None, None)), "4 bids is too many"),
        (lambda p: replace(p, bids=(None, None, None), phase="name_trump"), "at least one not a pass"),
        (lambda p: replace(p, swapped_by=p.to_act), "after a swap the ghost is empty"),
        (lambda p: replace(p, ghost=p.ghost[:5] + ("2c",)), "not in the 24-card pack"),
        (lambda p: replace(p, trump="h"), "named exactly when trick play has begun"),
        (lambda p: replace(p, to_act=p.dealer), "turn"),
        (lambda p: replace(p, bids=(7,)), "is not a bid"),
    ],
)
def test_impossible_euchre_positions_are_refused(change, message: str) -> None:
    with pytest.raises(PositionError, match=message):
        state_from_position(change(euchre_start()))


def test_rules_of_the_other_game_are_refused() -> None:
    with pytest.raises(PositionError, match="needs its rules"):
        state_from_position(euchre_start(), ChicagoRules())


def test_a_finished_game_has_no_position() -> None:
    from referee.games import play_game, random_policy

    state = new_game("chicago", 2, 4, options={"max_deals": 1})
    play_game(state, [random_policy(0), random_policy(1)])
    with pytest.raises(PositionError, match="the game is over"):
        position_of(state)


def test_a_tie_break_deal_seats_only_the_tied() -> None:
    pack = list(CARD_STR)
    position = ChicagoPosition(
        n_players=3,
        dealer=0,
        tied=(0, 2),
        scores=(40, 10, 40),
        hands=(tuple(pack[:5]), (), tuple(pack[5:10])),
        stock=tuple(pack[10:]),
    )
    state = state_from_position(position)
    assert state.view(2).active == [0, 2] and state.view(2).tiebreak
    acted = set()
    while state.deal_number == 1 and not state.is_terminal():
        acted.add(state.current_player())
        state.apply_action(state.legal_actions()[0])
    assert acted == {0, 2}
    with pytest.raises(PositionError, match="seat 1 sits out this tie-break deal"):
        state_from_position(replace(position, hands=(pack[:5], pack[10:15], pack[5:10]), stock=pack[15:]))
