"""Fast playout policies for the search bots: finish a deal with plausible play.

A Monte Carlo search (PIMC, ISMCTS) judges a move by playing the rest of the
deal out many times in sampled worlds. Uniformly random play is a poor judge
in both games: a random exchange throws away made hands, a random bid shoots
the moon on nothing. These policies are cheap rules of thumb instead, and
they read the engine state through its accessors for playout policies
(hands, the trick, trump: `hand`, `trick`, `trump`, `playable_cards`, ...)
rather than building a view per step, which would cost more than the step
itself.

`finish_deal(state, rng)` plays until the deal ends (or the game does) and
returns each seat's score change; `playout_action(state, rng)` is one step.
Pure and synchronous: the same state and the same `rng` give the same play.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from protocol.chicago import CallChicago, Exchange, TakeOpen
from protocol.common import PlayCard
from protocol.euchre import Bid, NameTrump, Pass
from referee.games.cards import CARD_STR, SUITS
from referee.games.chicago import ChicagoState
from referee.games.ghost_euchre import JACK, GhostEuchreState, effective_suit, same_colour, trick_power
from referee.games.poker import category_index, evaluate

_PLAY = tuple(PlayCard(card=name) for name in CARD_STR)
_NO_CALL = CallChicago(call=False)
STRAIGHT = 4  # category_index of a straight (0 = high card ... 8 = straight flush)
QUEEN, ACE = 10, 12
MAX_STEPS = 400  # a deal never takes this many decisions; a guard, not a rule


# ------------------------------------------------------------------ Chicago


def chicago_keep(hand: list[int], last: bool) -> list[int]:
    """The cards a plain poker player keeps in an exchange.

    A straight or better stands pat; pairs, two pair and trips keep their
    cards (and, in the last round before trick play, an ace kicker for the
    last trick); four to a flush are kept; otherwise the one or two highest
    cards from the queen up, or the single highest card."""
    if len(hand) == 5 and category_index(evaluate(hand)) >= STRAIGHT:
        return list(hand)
    counts = Counter(c >> 2 for c in hand)
    made = [c for c in hand if counts[c >> 2] >= 2]
    if made:
        rest = [c for c in hand if counts[c >> 2] == 1]
        if last and rest and max(rest) >> 2 == ACE:
            made.append(max(rest))
        return made
    suits = Counter(c & 3 for c in hand)
    suit, length = suits.most_common(1)[0]
    if length >= 4:
        return [c for c in hand if c & 3 == suit]
    high = sorted(hand, reverse=True)
    keep = [c for c in high[:2] if c >> 2 >= QUEEN]
    return keep or high[:1]


def _chicago_exchange(state: ChicagoState, seat: int) -> Exchange:
    hand = state.hand(seat)
    if not state.exchange_allowed(seat):
        return Exchange(discard=[])
    last = state.exchange_round() >= state.rules.exchanges
    keep = set(chicago_keep(hand, last))
    return Exchange(discard=[CARD_STR[c] for c in hand if c not in keep])


def _chicago_card(state: ChicagoState, seat: int, rng: random.Random) -> int:
    """Shed low cards and save the strongest for the scoring last trick; the
    declarer plays high; against a declarer, beat the led card if possible."""
    options = state.playable_cards(seat)
    if len(options) == 1:
        return options[0]
    declarer = state.declarer()
    if declarer == seat:
        return max(options, key=lambda c: c >> 2)
    trick = state.trick()
    if declarer is not None and trick:
        led = trick[0][1] & 3
        best = max(c for _, c in trick if c & 3 == led)
        beaters = [c for c in options if c & 3 == led and c > best]
        if beaters:
            return min(beaters)
    hand = state.hand(seat)
    keeper = max(hand, key=lambda c: (c >> 2, rng.random()))
    spare = [c for c in options if c != keeper] or options
    return min(spare, key=lambda c: (c >> 2, c & 3))


def _chicago_action(state: ChicagoState, rng: random.Random) -> Any:
    seat = state.current_player()
    phase = state.phase()
    if phase == "exchange":
        return _chicago_exchange(state, seat)
    if phase == "trick":
        return _PLAY[_chicago_card(state, seat, rng)]
    if phase == "chicago_call":
        return _NO_CALL
    return TakeOpen(take=rng.random() < 0.5)


# ------------------------------------------------------------------ Ghost Hand Euchre

_TRUMP_WORTH = {JACK: 0.6, 12: 0.75, 11: 0.55, 10: 0.45}  # by rank, trump suit (the right bower apart)


def euchre_tricks(hand: list[int], trump: int) -> float:
    """A rough count of the tricks `hand` takes with `trump`: bowers, high
    trumps, then off-suit aces."""
    total = 0.0
    for c in hand:
        rank, suit = c >> 2, c & 3
        if rank == JACK and suit == trump:
            total += 1.0
        elif rank == JACK and suit == same_colour(trump):
            total += 0.85
        elif suit == trump:
            total += _TRUMP_WORTH.get(rank, 0.4)
        elif rank == ACE:
            total += 0.55
    return total


def best_trump(hand: list[int]) -> tuple[int, float]:
    """The suit that makes `hand` strongest, and its trick count."""
    return max(((t, euchre_tricks(hand, t)) for t in range(4)), key=lambda x: (x[1], -x[0]))


def _euchre_bid(state: GhostEuchreState, seat: int) -> Any:
    _, tricks = best_trump(state.hand(seat))
    bids = state.open_bids()
    contract = [b for b in bids if b <= 5 and b <= tricks + 0.5]
    return Bid(bid=max(contract)) if contract else Pass()


def _euchre_card(state: GhostEuchreState, seat: int) -> int:
    """Lead the strongest card; follow with the cheapest winner, else the cheapest card."""
    options = state.playable_cards(seat)
    if len(options) == 1:
        return options[0]
    trump = state.trump()
    assert trump is not None  # cards are played only once trump is named
    trick = state.trick()
    if not trick:
        return max(options, key=lambda c: (trick_power(c, trump, effective_suit(c, trump)), c))
    led = effective_suit(trick[0][1], trump)
    best = max(trick_power(c, trump, led) for _, c in trick)
    winners = [c for c in options if trick_power(c, trump, led) > best]
    pool = winners or options
    return min(pool, key=lambda c: (trick_power(c, trump, led), c >> 2, c))


def _euchre_action(state: GhostEuchreState, rng: random.Random) -> Any:
    seat = state.current_player()
    phase = state.phase()
    if phase == "bidding":
        return _euchre_bid(state, seat)
    if phase == "name_trump":
        return NameTrump(suit=SUITS[best_trump(state.hand(seat))[0]])  # type: ignore[arg-type]
    return _PLAY[_euchre_card(state, seat)]


# ------------------------------------------------------------------ both games


def playout_action(state: Any, rng: random.Random) -> Any:
    """One playout step for the seat to act: a legal action of `state`."""
    if isinstance(state, ChicagoState):
        return _chicago_action(state, rng)
    if isinstance(state, GhostEuchreState):
        return _euchre_action(state, rng)
    legal = state.legal_actions()
    return legal[rng.randrange(len(legal))]


def finish_deal(state: Any, rng: random.Random) -> list[int]:
    """Play `state` on (in place) to the end of its deal or of the game; each
    seat's score change over that stretch."""
    before = state.scores()
    deal = state.deal_number
    apply = state.apply_action
    for _ in range(MAX_STEPS):
        if state.is_terminal() or state.deal_number != deal:
            break
        apply(playout_action(state, rng))
    after = state.scores()
    return [a - b for a, b in zip(after, before)]


def exchange_candidates(state: ChicagoState) -> list[Exchange]:
    """The exchanges worth searching in Chicago: what `chicago_keep` keeps, that
    keep with one card more or one fewer, the highest card or two alone,
    standing pat and changing all five.

    Searching all 32 spreads a small budget too thin; the rest are seldom
    better than one of these."""
    seat = state.current_player()
    hand = sorted(state.hand(seat))
    if not state.exchange_allowed(seat):
        return [Exchange(discard=[])]
    last = state.exchange_round() >= state.rules.exchanges
    keep = frozenset(chicago_keep(hand, last))
    high = sorted(hand, key=lambda c: c >> 2, reverse=True)
    keeps = [keep, frozenset(hand), frozenset(), frozenset(high[:1]), frozenset(high[:2])]
    keeps += [keep - {c} for c in keep] + [keep | {c} for c in hand if c not in keep]
    seen: set[frozenset[int]] = set()
    out = []
    for k in keeps:
        if k not in seen:
            seen.add(k)
            out.append(Exchange(discard=[CARD_STR[c] for c in hand if c not in k]))
    return out


def search_actions(state: Any) -> list[Any]:
    """The actions a search should consider at `state`: every legal action,
    but only `exchange_candidates` in a Chicago exchange."""
    if isinstance(state, ChicagoState) and state.phase() == "exchange":
        return exchange_candidates(state)
    return list(state.legal_actions())
