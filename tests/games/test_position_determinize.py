"""Determinization from what one seat saw (its view and its events, as a bot
receives them): every sample is a legal position the seat cannot tell from the
real one, keeps every seen card and revealed void, and over many samples puts
the unseen cards in every place they could be, the true place included."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from positions_helpers import TABLES, random_positions

from referee.games import (
    PUBLIC,
    determinize,
    position_of,
    seat_knowledge,
    state_from_position,
)
from referee.games.cards import CARD_INT


def seen_events(state, seat: int) -> list:
    """The events this seat received, in order (what a bot gets over the protocol)."""
    return [e for audience, e in state.events if audience in (PUBLIC, seat)]


def places(position) -> dict[str, str]:
    """card -> where it lies in a position."""
    where = {}
    for s, hand in enumerate(position.hands):
        where |= dict.fromkeys(hand, f"hand{s}")
    if position.game == "chicago":
        where |= dict.fromkeys(position.stock, "stock") | dict.fromkeys(position.discards, "discards")
    else:
        where |= dict.fromkeys(position.ghost + position.dead, "ghost")
    return where


def void_breaks(state, sample) -> list[str]:
    """Seats in the sample holding a suit they showed they lack (by not following)."""
    view = state.view(PUBLIC)
    game = state.rules.__struct_config__.tag
    if game == "ghost_euchre" and state.rules.renege_policy != "reject":
        return []
    from referee.games.ghost_euchre import effective_suit

    trump = "shdc".index(view.trump) if getattr(view, "trump", None) else None

    def suit(card: str) -> int:
        c = CARD_INT[card]
        return effective_suit(c, trump) if game == "ghost_euchre" else c & 3

    broken = []
    for trick in [*view.tricks, type("T", (), {"cards": view.trick})()]:
        cards = list(trick.cards)
        for p in cards[1:]:
            if cards and suit(p.card) != suit(cards[0].card):
                held = [c for c in sample.hands[p.seat] if suit(c) == suit(cards[0].card)]
                if held:
                    broken.append(f"seat {p.seat} holds {held}")
    return broken


@pytest.mark.parametrize(("game", "n", "preset"), TABLES)
def test_samples_are_positions_the_seat_cannot_tell_from_the_real_one(game: str, n: int, preset: str | None) -> None:
    rng = random.Random(5)
    count = 0
    for seed in range(3):
        for state in itertools.islice(random_positions(game, n, preset, seed, every=0.1), 25):
            truth = position_of(state)
            for seat in range(n):
                view = state.view(seat)
                if seat not in getattr(view, "active", range(n)):
                    continue
                knowledge = seat_knowledge(view, seen_events(state, seat), state.rules)
                own = set(view.hand)
                for _ in range(4):
                    sample = knowledge.sample(rng)
                    rebuilt = state_from_position(sample, state.rules)  # a legal position
                    assert rebuilt.view(seat) == view  # sizes, records and own hand all as seen
                    assert set(sample.hands[seat]) == own
                    assert void_breaks(state, sample) == []
                    if game == "chicago":
                        assert len(sample.stock) == len(truth.stock)
                        assert len(sample.discards) == len(truth.discards)
                    count += 1
    assert count > 200


def test_own_discards_stay_in_the_discards_until_a_reshuffle() -> None:
    checked = 0
    for seed in range(12):
        for state in itertools.islice(random_positions("chicago", 3, None, seed, every=0.2), 30):
            deal_events = list(
                itertools.takewhile(lambda e: type(e[1]).__name__ != "DealStarted", reversed(state.events))
            )
            if any(type(e).__name__ == "StockReshuffled" for _, e in deal_events):
                continue
            truth = position_of(state)
            seat = state.current_player()
            mine = [
                c
                for c in truth.discards
                if any(
                    type(e).__name__ in ("HandDealt", "Drew") and e.seat == seat and c in e.cards
                    for a, e in deal_events
                )
            ]
            for i in range(5):
                sample = determinize(state.view(seat), seen_events(state, seat), random.Random(i), state.rules)
                assert set(mine) <= set(sample.discards)
            checked += len(mine)
    assert checked > 20


@pytest.mark.parametrize(("game", "n", "preset"), TABLES)
def test_unseen_cards_land_everywhere_they_could_be(game: str, n: int, preset: str | None) -> None:
    """Over many samples each unseen card is found in its true place, and at the
    start of a deal (nothing known but one's own hand) in every place."""
    for k, state in enumerate(itertools.islice(random_positions(game, n, preset, 7, every=0.05), 4)):
        seat = state.current_player()
        view = state.view(seat)
        knowledge = seat_knowledge(view, seen_events(state, seat), state.rules)
        truth = places(position_of(state))
        unseen = {c: p for c, p in truth.items() if p != f"hand{seat}"}
        landed: dict[str, set[str]] = {c: set() for c in unseen}
        rng = random.Random(k)
        for _ in range(3000):
            for c, p in places(knowledge.sample(rng)).items():
                if c in landed:
                    landed[c].add(p)
        missed = [c for c, p in unseen.items() if p not in landed[c]]
        assert not missed, f"true places never sampled for {missed}"
    fresh = next(random_positions(game, n, preset, 8, every=1.0))
    seat = fresh.current_player()
    knowledge = seat_knowledge(fresh.view(seat), seen_events(fresh, seat), fresh.rules)
    counts: Counter = Counter()
    rng = random.Random(1)
    for _ in range(3000):
        counts.update(places(knowledge.sample(rng)).items())
    spots = {p for (_, p) in counts} - {f"hand{seat}"}
    for card, where in places(position_of(fresh)).items():
        if where != f"hand{seat}":
            assert all(counts[(card, p)] > 0 for p in spots), (card, spots)


def test_a_view_and_events_that_contradict_are_an_error() -> None:
    from referee.games import PositionError

    state = next(random_positions("chicago", 2, None, 3, every=1.0))
    view = state.view(0)
    import msgspec

    wrong = msgspec.structs.replace(view, stock_size=view.stock_size + 3)
    with pytest.raises(PositionError, match="do not add up"):
        seat_knowledge(wrong, seen_events(state, 0), state.rules)


@pytest.mark.parametrize(("game", "n"), [("chicago", 3), ("ghost_euchre", 3)])
def test_a_bot_holding_only_protocol_messages_can_determinize(game: str, n: int) -> None:
    """View and events go through JSON and back, as a bot receives them."""
    import msgspec

    from protocol.messages import Event, View

    state = next(itertools.islice(random_positions(game, n, None, 4, every=0.1), 12, None))
    seat = state.current_player()
    view = msgspec.json.decode(msgspec.json.encode(state.view(seat)), type=View)
    events = msgspec.json.decode(msgspec.json.encode(seen_events(state, seat)), type=list[Event])
    sample = determinize(view, events, random.Random(2), state.rules)
    assert state_from_position(sample, state.rules).view(seat) == state.view(seat)
    direct = determinize(state.view(seat), seen_events(state, seat), random.Random(2), state.rules)
    assert sample == direct
