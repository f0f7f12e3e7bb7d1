"""Determinization: full positions consistent with what one seat has seen.

A search bot (PIMC, ISMCTS) cannot see the other hands, the stock or the
ghost; it samples them. `seat_knowledge(view, events)` reads what the seat
knows from its view and the events it received this deal (exactly what a bot
gets over the protocol), once per decision; `knowledge.sample(rng)` then
draws as many positions as the search wants, each one that the seat could
not tell from the real one:

- its own hand, the cards played, the open card stay where they are;
- its own discards (and declined open cards) lie in the discards, until a
  reshuffle of the discards mixes them into the stock;
- a seat that did not follow suit holds none of that suit (in Ghost Hand
  Euchre only when reneging is rejected, so not following proves a void);
- a hand shown at a showdown or when broken up, or an open card taken, stays
  in that hand except for as many cards as the seat has discarded since;
- in Ghost Hand Euchre a seat that swapped knows its dead hand.

Unseen cards fill the remaining places at random, so every place a card could
be in comes up. The seed of a sampled position is drawn from `rng`, so later
shuffles are unknown as well. A sampled Ghost Hand Euchre position starts its
stream at that seed (`stream=()`) rather than replaying a shuffle for every
deal so far, which a search would pay for in every world and learn nothing from.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from protocol.chicago import (
    ChicagoDecision,
    ChicagoRules,
    ChicagoView,
    Drew,
    Exchanged,
    HandRevealed,
    OpenCard,
    OpenCardDecision,
    StockReshuffled,
)
from protocol.common import DealStarted, HandDealt
from protocol.euchre import EuchreRules, EuchreView
from referee.games.cards import CARD_INT, SUITS, card_strs
from referee.games.ghost_euchre import EUCHRE_DECK, effective_suit
from referee.games.position import (
    ChicagoPosition,
    EuchrePosition,
    Position,
    PositionError,
)

STOCK, DISCARDS, GHOST = -1, -2, -3  # places that are not a seat's hand
MAX_TRIES = 200


def _deal_events(events: Sequence[Any]) -> list[Any]:
    """The events of the current deal; (audience, event) pairs are accepted too."""
    evs = [e[1] if isinstance(e, tuple) else e for e in events]
    for i in range(len(evs) - 1, -1, -1):
        if isinstance(evs[i], DealStarted):
            return evs[i + 1 :]
    return evs


class SeatKnowledge:
    """What one seat knows about where the unseen cards are; `sample` draws positions."""

    def __init__(
        self,
        make: Any,
        free: list[int],
        places: dict[int, int],
        voids: dict[int, set[int]],
        suit_of: Sequence[int],
        bound: list[int],
        groups: list[tuple[int, list[int], int, int]],
        bound_place: int | None,
    ) -> None:
        self._make = make  # (rng, contents: dict place -> cards) -> Position
        self._free = free
        self._places = places  # place -> how many unseen cards it holds
        self._voids = voids  # seat -> suits it cannot hold
        self._suit = suit_of
        self._bound = bound  # cards known to lie in `bound_place` (None: anywhere)
        self._bound_place = bound_place
        self._groups = groups  # (seat, cards, lo, hi): lo..hi of the cards are in the seat's hand
        if sum(places.values()) != len(free) + len(bound) + sum(len(g[1]) for g in groups):
            raise PositionError("the view and events do not add up: the unseen cards do not fill the unseen places")

    def sample(self, rng: random.Random) -> Position:
        """One full position consistent with what the seat has seen."""
        return self._make(rng, self.sample_cards(rng))

    def sample_cards(self, rng: random.Random) -> dict[int, list[int]]:
        """Where the unseen cards lie in one consistent sample, without building
        a position: each other seat's hidden cards (card numbers) by seat, and
        the stock and discards under negative keys. A search that only needs
        the hands saves most of the cost of `sample` this way."""
        for _ in range(MAX_TRIES):
            contents = self._try(rng)
            if contents is not None:
                return contents
        raise PositionError("no position fits what this seat has seen (the view and events contradict each other)")

    def _try(self, rng: random.Random) -> dict[int, list[int]] | None:
        """One deal of the unseen cards, or None where it ran into a contradiction."""
        room = dict(self._places)
        contents: dict[int, list[int]] = {p: [] for p in room}
        loose = list(self._free)
        if not self._place_groups(rng, room, contents, loose):
            return None
        self._place_bound(room, contents, loose)
        if any(r < 0 for r in room.values()):
            return None
        rng.shuffle(loose)
        if not self._fill_places(room, contents, loose):
            return None
        for cards in contents.values():
            rng.shuffle(cards)
        return contents

    def _place_groups(
        self, rng: random.Random, room: dict[int, int], contents: dict[int, list[int]], loose: list[int]
    ) -> bool:
        """Keep lo..hi of each group's cards in its seat's hand; the rest go to
        the bound place, or among the loose cards. False: a group cannot fit."""
        suit, voids = self._suit, self._voids
        for seat, cards, lo, hi in self._groups:
            allowed = [c for c in cards if suit[c] not in voids.get(seat, ())]
            top = min(hi, len(allowed), room[seat])
            if lo > top:
                return False
            kept = rng.sample(allowed, rng.randint(lo, top))
            contents[seat] += kept
            room[seat] -= len(kept)
            left = [c for c in cards if c not in kept]
            if self._bound_place is None:
                loose += left
            else:
                contents[self._bound_place] += left
                room[self._bound_place] -= len(left)
        return True

    def _place_bound(self, room: dict[int, int], contents: dict[int, list[int]], loose: list[int]) -> None:
        if self._bound_place is None:
            loose += self._bound
        else:
            contents[self._bound_place] += self._bound
            room[self._bound_place] -= len(self._bound)

    def _fill_places(self, room: dict[int, int], contents: dict[int, list[int]], loose: list[int]) -> bool:
        """The shuffled loose cards into the room left: seats with voids first,
        each from the cards it may hold; then the rest in order. False: a void cannot be kept."""
        suit, voids = self._suit, self._voids
        for place in sorted(room, key=lambda p: -len(voids.get(p, ()))):
            need = room[place]
            if not need:
                continue
            void = voids.get(place)
            if void:
                ok = [c for c in loose if suit[c] not in void]
                if len(ok) < need:
                    return False
                take = ok[:need]
                taken = set(take)
                loose = [c for c in loose if c not in taken]
            else:
                take, loose = loose[:need], loose[need:]
            contents[place] += take
        return True


def seat_knowledge(view: ChicagoView | EuchreView, events: Sequence[Any], rules: Any = None) -> SeatKnowledge:
    """What `view.seat` knows, from its view and the events it saw (this deal's at least)."""
    if isinstance(view, ChicagoView):
        return _chicago(view, _deal_events(events), rules if rules is not None else ChicagoRules())
    if isinstance(view, EuchreView):
        return _euchre(view, _deal_events(events), rules if rules is not None else EuchreRules())
    raise PositionError(f"no determinization for a {type(view).__name__}")


def determinize(
    view: ChicagoView | EuchreView, events: Sequence[Any], rng: random.Random, rules: Any = None
) -> Position:
    """One full position consistent with what `view.seat` has seen (see `seat_knowledge`)."""
    return seat_knowledge(view, events, rules).sample(rng)


def _ints(cards: Sequence[str]) -> list[int]:
    return [CARD_INT[c] for c in cards]


def _trick_plays(view: Any) -> list[list[tuple[int, int]]]:
    tricks = [[(p.seat, CARD_INT[p.card]) for p in t.cards] for t in view.tricks]
    return tricks + ([[(p.seat, CARD_INT[p.card]) for p in view.trick]] if view.trick else [])


def _voids(plays: list[list[tuple[int, int]]], me: int, suit_of: Sequence[int]) -> dict[int, set[int]]:
    """The suits each other seat has shown it does not hold, by not following them."""
    voids: dict[int, set[int]] = {}
    for trick in plays:
        led = suit_of[trick[0][1]]
        for seat, card in trick[1:]:
            if suit_of[card] != led and seat != me:
                voids.setdefault(seat, set()).add(led)
    return voids


def _played_counts(plays: list[list[tuple[int, int]]], seats: Sequence[int]) -> dict[int, int]:
    played_by = dict.fromkeys(seats, 0)
    for t in plays:
        for s, _ in t:
            played_by[s] += 1
    return played_by


class _ChicagoMemory:
    """What one seat has seen this deal, read event by event: the cards it
    held, the cards bound to lie in the discards, and the shown cards still
    partly in another seat's hand, as groups of [cards, lo, hi]."""

    def __init__(self, me: int, events: list[Any]) -> None:
        self.me = me
        self.held: set[int] = set()
        self.bound: set[int] = set()
        self.groups: dict[int, list[list[Any]]] = {}  # seat -> [cards, lo, hi] still partly in its hand
        self.open_card: int | None = None
        self.open_seat: int | None = None
        self.reshuffled = False
        for e in events:
            read = _CHICAGO_READERS.get(type(e))
            if read is not None:
                read(self, e)

    def _dealt_or_drew(self, e: HandDealt | Drew) -> None:
        if e.seat == self.me:
            self.held |= set(_ints(e.cards))

    def _revealed(self, e: HandRevealed) -> None:
        if e.seat == self.me or e.reason not in ("break_up", "scoring_hand"):
            return
        shown = _ints(e.cards)
        for other in self.groups.values():  # after a reshuffle a shown card may have changed hands
            for g in other:
                gone = [c for c in g[0] if c in shown]
                g[0] = [c for c in g[0] if c not in shown]
                g[1] = max(0, g[1] - len(gone))
        self.groups[e.seat] = [[shown, len(shown), len(shown)]]

    def _exchanged(self, e: Exchanged) -> None:
        if e.seat == self.me:
            return
        for g in self.groups.get(e.seat, []):  # the discards may be any of the hand
            g[1], g[2] = max(0, g[1] - e.count), min(g[2], 5 - e.count)

    def _open_card_offered(self, e: OpenCard) -> None:
        self.open_card, self.open_seat = CARD_INT[e.card], e.seat

    def _open_card_decided(self, e: OpenCardDecision) -> None:
        if self.open_card is None:
            return
        if e.take and e.seat == self.me:
            self.held.add(self.open_card)
        elif e.take:
            self.groups.setdefault(e.seat, []).append([[self.open_card], 1, 1])
        else:
            self.bound.add(self.open_card)
        self.open_card = None

    def _stock_reshuffled(self, e: StockReshuffled) -> None:
        self.reshuffled = True


_CHICAGO_READERS: dict[type, Callable[[_ChicagoMemory, Any], None]] = {
    HandDealt: _ChicagoMemory._dealt_or_drew,
    Drew: _ChicagoMemory._dealt_or_drew,
    HandRevealed: _ChicagoMemory._revealed,
    Exchanged: _ChicagoMemory._exchanged,
    OpenCard: _ChicagoMemory._open_card_offered,
    OpenCardDecision: _ChicagoMemory._open_card_decided,
    StockReshuffled: _ChicagoMemory._stock_reshuffled,
}


def _chicago(view: ChicagoView, events: list[Any], rules: ChicagoRules) -> SeatKnowledge:
    me, active = view.seat, list(view.active)
    if me not in active:
        raise PositionError(f"seat {me} sits out this deal and has nothing to determinize")
    hand = _ints(view.hand)
    plays = _trick_plays(view)
    played = [c for t in plays for _, c in t]
    suit_of = [c & 3 for c in range(52)]
    voids = _voids(plays, me, suit_of)
    memory = _ChicagoMemory(me, events)
    open_now = CARD_INT[view.open_card] if view.open_card is not None else None
    mine = set(hand)
    bound = memory.bound | (memory.held - mine - set(played))
    bound.discard(open_now)
    seen = mine | set(played) | ({open_now} if open_now is not None else set())
    places = _chicago_places(view, plays, memory.open_seat)
    groups = _chicago_groups(memory.groups, plays, seen)
    in_groups = {c for _, cards, _, _ in groups for c in cards}
    bound -= in_groups
    free = [c for c in range(52) if c not in seen and c not in bound and c not in in_groups]
    make = partial(_chicago_position, view, events, rules, hand, _scorers(view))
    return SeatKnowledge(
        make, free, places, voids, suit_of, sorted(bound), groups, None if memory.reshuffled else DISCARDS
    )


def _chicago_places(view: ChicagoView, plays: list[list[tuple[int, int]]], open_seat: int | None) -> dict[int, int]:
    """How many unseen cards the stock, the discards and each other hand hold."""
    places = {STOCK: view.stock_size, DISCARDS: view.discard_size}
    played_by = _played_counts(plays, view.active)
    for s in view.active:
        if s != view.seat:
            places[s] = 5 - played_by[s] - (1 if view.phase == "take_open" and s == open_seat else 0)
    return places


def _chicago_groups(
    groups: dict[int, list[list[Any]]], plays: list[list[tuple[int, int]]], seen: set[int]
) -> list[tuple[int, list[int], int, int]]:
    """The groups as (seat, unseen cards, lo, hi): a card of the group its seat
    has played left its hand, one fewer in it."""
    flat_groups = []
    for s, gs in groups.items():
        own_plays = {c for t in plays for seat, c in t if seat == s}
        for cards, lo, hi in gs:
            gone = sum(1 for c in cards if c in own_plays)
            flat_groups.append((s, [c for c in cards if c not in seen], max(0, lo - gone), max(0, hi - gone)))
    return flat_groups


def _chicago_position(
    view: ChicagoView,
    events: list[Any],
    rules: ChicagoRules,
    hand: list[int],
    last_scorers: set[int],
    rng: random.Random,
    contents: dict[int, list[int]],
) -> ChicagoPosition:
    """The position of one sample: the seat's own hand, the sampled others, the rest from the view."""
    me, n = view.seat, view.n_players
    hands = tuple(card_strs(hand) if s == me else card_strs(contents[s]) if s in contents else () for s in range(n))
    scored = tuple(hands[s] if s in last_scorers and len(hands[s]) == 5 else () for s in range(n))
    return ChicagoPosition(
        n_players=n,
        dealer=view.dealer,
        hands=hands,
        stock=card_strs(contents[STOCK]),
        scores=tuple(view.scores),
        deal=view.deal,
        seed=rng.getrandbits(32),
        tied=tuple(view.active) if view.tiebreak else None,
        discards=card_strs(contents[DISCARDS]),
        phase=view.phase,
        to_act=_chicago_caller(view, events, rules),
        exchanged=tuple(r.count for r in view.exchanges),
        open_card=view.open_card,
        showdowns=tuple(view.showdowns),
        revealed=tuple(view.revealed),
        scored_hands=scored,
        declarer=view.chicago_declarer,
        tricks=tuple(tuple(p.card for p in t.cards) for t in view.tricks),
        trick=tuple(p.card for p in view.trick),
    )


def _scorers(view: ChicagoView) -> set[int]:
    """Seats whose hand is still the one that last scored at a showdown (no cards exchanged since)."""
    out: set[int] = set()
    for r in view.showdowns:
        for s in r.winners:
            later = [x.count for x in view.exchanges if x.seat == s and x.round > r.round]
            if not any(later):
                out.add(s)
    return out


def _chicago_caller(view: ChicagoView, events: list[Any], rules: ChicagoRules) -> int | None:
    if view.phase != "chicago_call":
        return None
    k = len(view.active)
    order = [view.active[(view.active.index(view.dealer) + 1 + i) % k] for i in range(k)]
    callers = [s for s in order if rules.chicago_enabled and view.scores[s] >= rules.chicago_min_score]
    declined = sum(1 for e in events if isinstance(e, ChicagoDecision))
    return callers[declined] if declined < len(callers) else None


def _euchre(view: EuchreView, events: list[Any], rules: EuchreRules) -> SeatKnowledge:
    me = view.seat
    hand = _ints(view.hand)
    plays = _trick_plays(view)
    played = [c for t in plays for _, c in t]
    trump = SUITS.index(view.trump) if view.trump is not None else None
    suit_of = [effective_suit(c, trump) if trump is not None else c & 3 for c in range(52)]
    voids = _voids(plays, me, suit_of) if rules.renege_policy == "reject" and trump is not None else {}
    dead_known = _dead_hand(view, events)
    seen = set(hand) | set(played) | set(dead_known)
    free = [c for c in EUCHRE_DECK if c not in seen]
    played_by = _played_counts(plays, range(3))
    places = {s: 6 - played_by[s] for s in range(3) if s != me}
    if view.swapped_by != me:
        places[GHOST] = 6  # the ghost hand, or the dead hand of the seat that swapped
    make = partial(_euchre_position, view, hand, dead_known)
    return SeatKnowledge(make, free, places, voids, suit_of, [], [], None)


def _dead_hand(view: EuchreView, events: list[Any]) -> list[int]:
    """The hand this seat gave up for the ghost (the one it was dealt), if it swapped."""
    dealt: list[int] = []
    for e in events:
        if isinstance(e, HandDealt) and e.seat == view.seat:
            dealt = _ints(e.cards)
    if view.swapped_by != view.seat:
        return []
    if len(dealt) != 6:
        raise PositionError("a seat that swapped knows its dead hand: give the events of this hand from its start")
    return dealt


def _euchre_position(
    view: EuchreView, hand: list[int], dead_known: list[int], rng: random.Random, contents: dict[int, list[int]]
) -> EuchrePosition:
    """The position of one sample: the seat's own hand (and dead hand), the sampled others, the rest from the view."""
    me = view.seat
    i_swapped = view.swapped_by == me
    hands = tuple(card_strs(hand) if s == me else card_strs(contents[s]) for s in range(3))
    other = card_strs(contents.get(GHOST, []))
    swapped = view.swapped_by is not None
    return EuchrePosition(
        dealer=view.dealer,
        hands=hands,
        scores=tuple(view.scores),
        deal=view.deal,
        seed=rng.getrandbits(32),
        stream=(),
        tiebreak=view.tiebreak,
        ghost=() if swapped else other,
        dead=card_strs(dead_known) if i_swapped else other if swapped else (),
        swapped_by=view.swapped_by,
        phase=view.phase,
        bids=tuple(b.bid for b in view.bids),
        trump=view.trump,
        tricks=tuple(tuple(p.card for p in t.cards) for t in view.tricks),
        trick=tuple(p.card for p in view.trick),
    )
