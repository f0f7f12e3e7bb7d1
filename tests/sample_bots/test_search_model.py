"""The search bots' model of the other seat at a two-seat Chicago table
(`referee/bots/search_model.py`): worlds that fit everything seen,
and an inference that the deal's history sharpens."""

from __future__ import annotations

import random
from types import SimpleNamespace

from seat_decisions import decision_points

from protocol.chicago import ShowdownRecord
from referee.bots import search_model
from referee.bots.search_model import FEWEST, PARTICLES, HistoryModel, keep_of_size, world_source
from referee.games import ChicagoPosition, get_game, seat_knowledge, state_from_position
from referee.games.cards import CARD_INT, CARD_STR
from referee.games.poker import category_code, evaluate
from referee.games.rules import build_rules


def _ints(cards: str) -> list[int]:
    return [CARD_INT[c] for c in cards.split()]


def test_a_player_keeps_what_its_count_says() -> None:
    hand = _ints("5h 5d Kc 9s 2h")
    assert sorted(keep_of_size(hand, 2, False)[0]) == sorted(_ints("5h 5d"))
    keep, natural = keep_of_size(hand, 3, False)  # two kept besides the pair: a kicker, the king
    assert sorted(keep) == sorted(_ints("5h 5d Kc")) and natural
    keep, natural = keep_of_size(hand, 4, False)  # nobody keeps four of this to draw one
    assert len(keep) == 4 and not natural
    assert keep_of_size(hand, 0, False) == ([], True)
    flush_draw = _ints("Ah 9h 6h 3h Kc")
    assert sorted(keep_of_size(flush_draw, 4, False)[0]) == sorted(_ints("Ah 9h 6h 3h"))


def _flush_position() -> tuple[object, object, dict[int, list[int]]]:
    """Seat 1 changed one card, won the first showdown with a flush, then
    stood pat twice and won the second with a flush as well."""
    rules = build_rules(get_game("chicago"), None, None)
    mine = ("Ah", "Kh", "Qd", "9c", "9s")
    theirs = ("2s", "5s", "7s", "Js", "Ks")
    rest = [CARD_STR[c] for c in range(52) if CARD_STR[c] not in mine + theirs]
    flush = ShowdownRecord(round=1, winners=[1], category="FL", description="a flush", points=5, tied=[])
    position = ChicagoPosition(
        n_players=2,
        dealer=1,
        hands=(mine, theirs),
        stock=tuple(rest[:26]),
        discards=tuple(rest[26:]),
        scores=(20, 20),
        phase="chicago_call",
        exchanged=(3, 1, 2, 0, 1, 0),
        showdowns=(
            flush,
            ShowdownRecord(round=2, winners=[1], category="FL", description="a flush", points=5, tied=[]),
        ),
    )
    state = state_from_position(position, rules)
    my_hands = {1: _ints("3c 4d 9c Th 2c"), 2: _ints("9c 9s 4d Th Qd"), 3: _ints("9c 9s Qd Th 6d")}
    return state, rules, my_hands


def test_a_seat_that_won_with_a_flush_and_stood_pat_holds_a_flush() -> None:
    state, rules, my_hands = _flush_position()
    view = state.view(0)
    model = HistoryModel(view, [], my_hands, rules, random.Random(4))
    held = {c for hand in my_hands.values() for c in hand} | set(_ints(" ".join(view.hand)))
    my_showdown = evaluate(my_hands[2])
    rng = random.Random(9)
    suits = set()
    for _ in range(300):
        hand = model.draw(rng)[1]
        assert len(hand) == 5 and not held & set(hand)
        assert category_code(evaluate(hand)) == "FL" and evaluate(hand) > my_showdown
        suits.add(hand[0] & 3)
    assert len(suits) == 4  # any suit could be it: nothing seen says which


def test_every_world_fits_what_the_seat_has_seen() -> None:
    """In real deals: the other seat's sampled cards are never ones this seat
    has held, hold every card it has played and none of a suit it showed void in."""
    rules = build_rules(get_game("chicago"), None, None)
    checked = 0
    for seed in range(6):
        for view, events, my_hands in decision_points(seed):
            if view.phase not in ("trick", "chicago_call") or not my_hands:
                continue
            model = HistoryModel(view, events, my_hands, rules, random.Random(seed))
            if not model.usable():
                continue
            plays = [p for t in view.tricks for p in t.cards] + list(view.trick)
            theirs_played = {CARD_INT[p.card] for p in plays if p.seat == 1}
            held = {c for h in my_hands.values() for c in h} | {CARD_INT[p.card] for p in plays if p.seat == 0}
            held |= set(_ints(" ".join(view.hand)))
            voids = set()
            for trick in [*(t.cards for t in view.tricks), *([view.trick] if view.trick else [])]:
                led = CARD_INT[trick[0].card] & 3
                voids |= {led for p in trick[1:] if p.seat == 1 and CARD_INT[p.card] & 3 != led}
            rng = random.Random(seed)
            got = model.draw(rng)
            if got is None:
                continue  # nothing fits: the search falls back to PlausibleHands
            for _ in range(40):
                hand = model.draw(rng)[1]
                assert len(hand) + len(theirs_played) == 5
                assert not held & set(hand) and not theirs_played & set(hand)
                assert not any(c & 3 in voids for c in hand)
            checked += 1
    assert checked > 50


def test_showdowns_constrain_the_particles() -> None:
    """Right after a showdown every particle's hand gives its announced result."""
    rules = build_rules(get_game("chicago"), None, None)
    checked = 0
    for seed in range(8):
        for view, events, my_hands in decision_points(seed):
            if view.phase != "exchange" or view.exchange_round != 2 or view.dealer == 0:
                continue  # seat 0 is eldest here: the other seat's hands are as the showdown saw them
            shown = [s for s in view.showdowns if s.round == 1]
            if not shown:
                continue
            model = HistoryModel(view, events, my_hands, rules, random.Random(seed))
            record, mine = shown[0], evaluate(my_hands[2])
            for p in model.particles:
                theirs = evaluate(p.hand)
                if record.winners == [1]:
                    assert theirs > mine and category_code(theirs) == record.category
                elif record.winners == [0]:
                    assert theirs < mine
                elif record.tied:
                    assert theirs == mine
            checked += 1
    assert checked >= 5


def test_world_source_falls_back_without_the_seats_hands() -> None:
    """A decision that does not know this seat's own hands still gets worlds (the plain filter)."""
    state, rules, _ = _flush_position()
    view = state.view(0)
    decision = SimpleNamespace(
        view=view,
        rules=rules,
        rng=random.Random(1),
        events=[],
        my_hands=None,
        knowledge=seat_knowledge(view, [], rules),
        deadline=None,
    )
    source = world_source(decision)
    assert source.model is None and len(source.draw(random.Random(2))[1]) == 5


class _Passed:
    """A decision's deadline that has passed already (a starved process)."""

    def passed(self) -> bool:
        return True


def test_a_late_decision_builds_fewer_particles_and_keeps_none() -> None:
    """Past the deadline the model stops at `FEWEST` particles, still all
    fitting the deal, and does not keep them for a decision with more time."""
    state, rules, my_hands = _flush_position()
    view = state.view(0)
    search_model._BUILT.clear()
    late = HistoryModel(view, [], my_hands, rules, random.Random(4), deadline=_Passed())
    assert len(late.particles) == FEWEST and not search_model._BUILT
    assert all(category_code(evaluate(p.hand)) == "FL" for p in late.particles)
    in_time = HistoryModel(view, [], my_hands, rules, random.Random(4))
    assert len(in_time.particles) == PARTICLES and len(search_model._BUILT) == 1
