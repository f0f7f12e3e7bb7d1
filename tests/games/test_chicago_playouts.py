"""Seeded random playouts of Swedish Chicago: invariants after every action, and no information leaks.

* Invariants (CH-05, CH-06, CH-09, CH-15, CH-18, CH-21, CH-25): all 52 cards are in exactly one place
  (hands, stock, discards, the open card, or played in this deal's tricks); scores never go below
  the floor; every game ends; one active seat is to act; the applied action is legal and
  everything else the seat could try is refused; events are well formed and add up to the scores.
* No leak (CH-24): permuting the cards a seat has not seen (same permutation in every deal's deck;
  reshuffles use the same seeded RNG on positions) must not change that seat's views, offered
  actions, or events, up to the first showdown whose public result legitimately depends on
  hidden cards. No view ever shows another seat's unrevealed card.

Policies call Chicago rarely (5 %) and are otherwise uniform, so games stay short.
"""

from __future__ import annotations

import random
import re

import msgspec
import pytest

from protocol.chicago import (
    CallChicago,
    ChicagoEvent,
    Drew,
    Exchange,
    Exchanged,
    FirstDealerCut,
    HandRevealed,
    OpenCard,
    Showdown,
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
from referee.errors import IllegalAction
from referee.games.base import PUBLIC, TERMINAL, Deal, shuffle
from referee.games.cards import CARD_STR, parse_card
from referee.games.playout import new_game
from referee.games.poker import CATEGORY_CODES

PRESETS = ["gamerules", "cardgames_zone", "cardgames_zone_short", "swedish_common"]
CARD_SET = frozenset(CARD_STR)
CARD_INT = {c: i for i, c in enumerate(CARD_STR)}
EVENT_TYPES = ChicagoEvent.__args__
PRIVATE = (HandDealt, Drew)
# Public events that may name cards: cuts, played cards, trick winners, the one_open card, reveals.
CARD_EVENTS = (FirstDealerCut, CardPlayed, TrickWon, OpenCard, HandRevealed)
MAX_ACTIONS = 50_000


def policy(rng: random.Random, p_chicago: float = 0.05):
    """Uniform over the legal list, except Chicago is called with probability `p_chicago`."""

    def choose(legal):
        if isinstance(legal[0], CallChicago):
            return legal[1] if rng.random() < p_chicago else legal[0]
        return legal[rng.randrange(len(legal))]

    return choose


_CARD_RE = re.compile(rb'"([2-9TJQKA][shdc])"')
_EVENT_DECODER = msgspec.json.Decoder(ChicagoEvent)


def card_strings(obj) -> set[str]:
    """Every card code anywhere inside a Struct (a JSON string value like "As")."""
    return {m.decode() for m in _CARD_RE.findall(msgspec.json.encode(obj))}


# ---------------------------------------------------------------- invariant auditor


class Auditor:
    """Re-checks a game's invariants after every action, reading its events incrementally."""

    def __init__(self, state, *, deep: bool) -> None:
        self.s = state
        self.deep = deep  # also check every seat's view and refusals (slower)
        self.n = state.n_players
        self.rules = state.rules
        self.seen_events = 0
        self.running = [0] * self.n
        self.deal = 0
        self.deal_open = False
        self.trick_cards = 0
        self.trick_no = 1
        self.active: list[int] = []
        self.view_turn = 0
        self.ended = False
        self.last_exchange: Exchanged | None = None
        self.check()

    # -- cards
    def check_cards(self) -> None:
        s = self.s
        hands = s._hands
        places = [*s._stock, *s._discards, *(c for h in hands for c in h), *(c for _, c in s._trick)]
        played = [CARD_INT[p.card] for t in s._rec_tricks for p in t.cards]
        places += played
        if s._open is not None:
            places.append(s._open)
        assert len(places) == 52 and len(set(places)) == 52, "a card is lost or duplicated"
        if s.is_terminal():
            return
        active = self.active
        for seat in range(self.n):
            if seat not in active:
                assert not hands[seat]
        if s._phase in ("exchange", "chicago_call"):
            assert all(len(hands[x]) == 5 for x in active)
        elif s._phase == "trick" and not s._trick:
            left = 5 - len(played) // len(active)
            assert all(len(hands[x]) == left for x in active)

    # -- events
    def check_events(self) -> None:
        s = self.s
        floor = self.rules.score_floor
        for audience, e in s.events[self.seen_events :]:
            assert not self.ended, "event after GameEnded"
            assert isinstance(e, EVENT_TYPES), type(e)
            if isinstance(e, PRIVATE):
                assert audience == e.seat, "private event with the wrong audience"
                assert {CARD_INT[c] for c in e.cards} <= set(s._hands[e.seat])
            else:
                assert audience == PUBLIC
            if self.deep:
                if audience == PUBLIC and not isinstance(e, CARD_EVENTS):
                    assert not card_strings(e), f"public {type(e).__name__} names cards"
                assert _EVENT_DECODER.decode(msgspec.json.encode(e)) == e
            if isinstance(e, DealStarted):
                assert not self.deal_open and e.deal == self.deal + 1
                self.deal, self.deal_open, self.trick_cards, self.trick_no = e.deal, True, 0, 1
                self.active = list(e.active)
                assert e.stock_size == 52 - 5 * len(e.active)
            elif isinstance(e, DealEnded):
                assert self.deal_open and e.deal == self.deal and e.scores == self.running
                self.deal_open = False
            elif isinstance(e, ScoreChanged):
                assert e.total == self.running[e.seat] + e.points
                if floor is not None:
                    assert e.total >= floor
                self.running[e.seat] = e.total
            elif isinstance(e, Exchanged):
                assert 0 <= e.count <= 5 and 1 <= e.round <= self.rules.exchanges
                self.last_exchange = e
            elif isinstance(e, Drew):
                last = self.last_exchange
                assert last is not None and last.seat == e.seat
                assert len(e.cards) == (1 if self.rules.one_open and last.count == 1 else last.count)
            elif isinstance(e, Showdown):
                assert 0 <= e.round <= self.rules.exchanges and e.category in CATEGORY_CODES
                assert set(e.winners) <= set(self.active) and set(e.tied) <= set(self.active)
                if e.category == "HC":
                    assert not e.winners and e.points == 0
                elif e.winners and e.category == "4K" and self.rules.four_kind_reset:
                    assert e.points == 0  # the others are reset instead of quads scoring
                elif e.winners:
                    assert e.points == self.rules.hand_points[e.category]
                if e.round:
                    assert self.rules.showdown_after[e.round - 1]
            elif isinstance(e, CardPlayed):
                assert e.trick == self.trick_no
                self.trick_cards += 1
            elif isinstance(e, TrickWon):
                assert e.trick == self.trick_no and self.trick_cards == len(self.active)
                self.trick_cards, self.trick_no = 0, self.trick_no + 1
                assert self.trick_no <= 6
            elif isinstance(e, GameEnded):
                assert e.scores == self.running
                self.ended = True
        self.seen_events = len(s.events)

    # -- views
    def check_views(self, seats=None) -> None:
        """CH-24 on `seats` (default: one seat per action, in turn)."""
        s = self.s
        if seats is None:
            self.view_turn += 1
            seats = (self.view_turn % self.n,)
        for seat in seats:
            v = s.view(seat)
            assert sorted(parse_card(c) for c in v.hand) == sorted(s._hands[seat])
            assert v.scores == s.scores() and v.stock_size == len(s._stock)
            revealed: set[str] = set()
            for r in v.revealed:
                assert r.reason in ("break_up", "scoring_hand", "final_showdown")
                if r.reason == "scoring_hand":
                    assert self.rules.reveal_scoring_hand
                if r.reason == "break_up":
                    assert any(r.seat in sd.winners for sd in v.showdowns), "break-up reveal of a non-scorer"
                if r.reason == "final_showdown":
                    assert v.phase == "game_over" or len(v.tricks) == 5 or v.chicago_declarer is not None
                revealed.update(r.cards)
            played = {p.card for p in v.trick} | {p.card for t in v.tricks for p in t.cards}
            shown = card_strings(msgspec.structs.replace(v, hand=[]))
            # Cards appear only as reveals, played cards or the one_open card: nothing else names a card.
            assert shown <= revealed | played | {v.open_card}
            for other in range(self.n):
                if other != seat:
                    for c in s._hands[other]:
                        assert CARD_STR[c] not in shown or CARD_STR[c] in revealed, (
                            f"seat {seat} sees unrevealed {CARD_STR[c]} of seat {other}"
                        )

    def check_turn(self) -> None:
        s = self.s
        if s.is_terminal():
            assert s.current_player() == TERMINAL and s.legal_actions() == []
            assert self.ended and not self.deal_open
            res = s.result()
            assert res.scores == self.running
            if res.reason == "target":  # CH-21: the highest score, at or above the target
                best = max(res.scores)
                assert res.scores[res.winner] == best >= self.rules.target_score
                assert res.scores.count(best) == 1
            if res.reason == "tiebreak":  # CH-22: the higher of the tied seats
                assert all(res.scores[res.winner] > res.scores[x] for x in s._active if x != res.winner)
            if res.winner is not None:
                assert res.placements[res.winner] == 1
            return
        cp = s.current_player()
        assert cp in self.active and self.deal_open
        if self.deep:
            assert s.legal_actions() and s.view(cp).phase == s._phase

    def check(self) -> None:
        self.check_events()
        self.check_cards()
        assert self.s.scores() == self.running
        if self.rules.score_floor is not None:
            assert min(self.running) >= self.rules.score_floor
        self.check_turn()
        if self.deep:
            self.check_views()

    def refusals(self, legal) -> None:
        """CH-25: whatever the seat to act could send outside the legal list is refused."""
        s = self.s
        seat = s.current_player()
        for a in legal[:] if len(legal) <= 5 else [legal[0], legal[len(legal) // 2], legal[-1]]:
            s.verify_action(a)
        if isinstance(legal[0], PlayCard):
            ok = {a.card for a in legal}
            for c in s._hands[seat]:
                if CARD_STR[c] not in ok:
                    with pytest.raises(IllegalAction, match="follow suit"):
                        s.verify_action(PlayCard(card=CARD_STR[c]))
            stranger = next(c for c in range(52) if c not in s._hands[seat])
            with pytest.raises(IllegalAction):
                s.verify_action(PlayCard(card=CARD_STR[stranger]))
        elif isinstance(legal[0], Exchange):
            if len(legal) == 1:
                with pytest.raises(IllegalAction, match="CH-08"):
                    s.verify_action(Exchange(discard=[CARD_STR[s._hands[seat][0]]]))
            stranger = next(c for c in range(52) if c not in s._hands[seat])
            with pytest.raises(IllegalAction, match="not in hand"):
                s.verify_action(Exchange(discard=[CARD_STR[stranger]]))
        elif isinstance(legal[0], CallChicago):
            assert s.scores()[seat] >= self.rules.chicago_min_score and self.rules.chicago_enabled
        with pytest.raises(IllegalAction):
            s.verify_action(TakeOpen(take=True) if not isinstance(legal[0], TakeOpen) else Exchange(discard=[]))


def run_game(n, preset, seed, *, deep=False, p_chicago=0.05, options=None):
    state = new_game("chicago", n, seed, preset=preset, options=options)
    audit = Auditor(state, deep=deep)
    choose = policy(random.Random(seed * 7919 + n), p_chicago)
    for _ in range(MAX_ACTIONS):
        if state.is_terminal():
            break
        legal = state.legal_actions()
        action = choose(legal)  # an element of the legal list by construction
        if deep:
            audit.refusals(legal)
            state.verify_action(action)
        state.apply_action(action)
        audit.check()
    assert state.is_terminal(), "game did not end"
    return state


# ---------------------------------------------------------------- invariant playouts

GAMES = {2: 120, 3: 80, 4: 60}  # x 4 presets = 1040 games


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_random_playouts_keep_every_invariant(n, preset):
    """CH-05/06/09/15/18/21/25: many seeded games per table size and preset; every action audited."""
    reasons = set()
    chicagos = 0
    for seed in range(GAMES[n]):
        state = run_game(n, preset, seed, deep=seed % 20 == 0)
        reasons.add(state.result().reason)
        chicagos += sum(1 for _, e in state.events if isinstance(e, ScoreChanged) and e.reason.startswith("chicago"))
    assert "target" in reasons
    if preset in ("gamerules", "swedish_common"):
        assert chicagos > 0  # Chicago was declared and resolved in some games


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_uniform_playouts(n, preset):
    """A few games with a purely uniform policy (Chicago called half the time when offered).
    Failed Chicagos keep 3-4 player scores low for hundreds of deals, so these stop at 40 deals."""
    for seed in range(1000, 1003):
        state = run_game(n, preset, seed, deep=seed == 1000, p_chicago=0.5, options={"max_deals": 40})
        assert state.result().reason in ("target", "royal_flush", "tiebreak", "deal_limit")


@pytest.mark.parametrize(
    "options",
    [
        {"exact_tie_policy": "all_tied"},
        {"exact_tie_policy": "suit_order", "ace_low_straight": False},
        {"four_kind_reset": True, "last_trick_two_bonus": 10, "chicago_leader": "eldest"},
        {"win_check": "end_of_deal", "target_score": 20, "royal_instant_win": False},
        {"showdown_after_chicago": False, "score_floor": None, "chicago_min_score": 0},
        {"one_open": True, "no_exchange_threshold": 5, "first_dealer": "seeded_random"},
        {"exchanges": 4, "showdown_after": [True, False, True, False], "reveal_scoring_hand": True},
        {"max_deals": 3},
    ],
)
def test_playouts_with_rule_options(options):
    """Invariants hold under every rule option (2-4 players)."""
    for n in (2, 3, 4):
        for seed in range(15):
            state = run_game(n, "gamerules", seed, deep=seed % 5 == 0, options=options)
            if "max_deals" in options:
                assert state.deal_number <= options["max_deals"]


@pytest.mark.parametrize("preset", PRESETS)
def test_no_view_shows_another_seats_unrevealed_card(preset):
    """CH-24: after every action, every seat's view names only its own hand, played cards,
    the one_open card and legitimately revealed hands."""
    for n in (2, 3, 4):
        for seed in range(3):
            state = new_game("chicago", n, 500 + seed, preset=preset)
            audit = Auditor(state, deep=False)
            choose = policy(random.Random(seed), 0.05)
            while not state.is_terminal():
                state.apply_action(choose(state.legal_actions()))
                audit.check()
                audit.check_views(range(n))


def test_tiebreaks_happen_and_are_audited():
    """CH-22: with a low target under end_of_deal, some games reach a tie-break; all stay consistent."""
    tiebreaks = 0
    for seed in range(200):
        state = run_game(3, "cardgames_zone", seed, options={"target_score": 12})
        if any(isinstance(e, DealStarted) and e.tiebreak for _, e in state.events):
            tiebreaks += 1
            assert state.result().reason in ("tiebreak", "royal_flush")
    assert tiebreaks > 0


def test_playouts_are_reproducible_from_the_seed():
    """A game is a pure function of (rules, seed, actions)."""
    for n in (2, 3, 4):
        a = run_game(n, "gamerules", 77)
        b = run_game(n, "gamerules", 77)
        assert a.events == b.events and a.dealt_decks() == b.dealt_decks()


def test_engine_shuffle_is_exactly_random_shuffle():
    """Decks must not change with the faster shuffle: same permutation, same RNG state after."""
    for seed in range(300):
        for size in (0, 1, 2, 3, 17, 24, 52):
            a, b = list(range(size)), list(range(size))
            ra, rb = random.Random(f"{seed}/deal/{size}"), random.Random(f"{seed}/deal/{size}")
            ra.shuffle(a)
            shuffle(b, rb)
            assert a == b
            assert ra.getstate() == rb.getstate()


# ---------------------------------------------------------------- no-leak property (CH-24)


def seen_by(events, seat: int) -> set[int]:
    """Cards `seat` has legitimately seen: its own deals and draws, and public cards."""
    seen: set[int] = set()
    for audience, e in events:
        if audience == seat and isinstance(e, PRIVATE):
            seen.update(parse_card(c) for c in e.cards)
        elif audience == PUBLIC and isinstance(e, (CardPlayed, TrickWon, OpenCard)):
            seen.add(parse_card(e.card))
        elif audience == PUBLIC and isinstance(e, HandRevealed):
            seen.update(parse_card(c) for c in e.cards)
    return seen


def to_seat(events, seat: int):
    return [e for a, e in events if a in (seat, PUBLIC)]


def mapped(action, perm):
    if isinstance(action, Exchange):
        return Exchange(discard=[CARD_STR[perm[parse_card(c)]] for c in action.discard])
    if isinstance(action, PlayCard):
        return PlayCard(card=CARD_STR[perm[parse_card(action.card)]])
    return action


def offered(state):
    return [msgspec.to_builtins(a) for a in state.legal_actions()]


def leak_case(n, preset, seed, seat, *, suit_preserving, options=None, max_deals=3):
    """Play a prefix, permute the cards `seat` never saw, replay; returns (steps compared, trick steps)."""
    rng = random.Random(seed)
    dealer = rng.randrange(n)
    decks = []
    for k in range(max_deals + 2):
        deck = list(range(52))
        rng.shuffle(deck)
        decks.append(Deal((dealer + k) % n, tuple(deck)))

    def fresh(deals):
        return new_game("chicago", n, seed, preset=preset, options=options, deals=deals)

    # 1. Play game A for up to `max_deals` deals and pick a random prefix.
    a = fresh(decks)
    choose = policy(random.Random(seed + 1), 0.2)
    actions, marks = [], []
    while not a.is_terminal() and a.deal_number <= max_deals and a._tied is None:
        act = choose(a.legal_actions())
        a.apply_action(act)
        actions.append(act)
        marks.append(len(a.events))
    if not actions:
        return 0, 0
    length = rng.randint(1, len(actions))
    seen = seen_by(a.events[: marks[length - 1]], seat)

    # 2. A permutation of the unseen cards (optionally within each suit).
    perm = list(range(52))
    unseen = [c for c in range(52) if c not in seen]
    groups = [[c for c in unseen if c & 3 == su] for su in range(4)] if suit_preserving else [unseen]
    for g in groups:
        shuffled = g[:]
        rng.shuffle(shuffled)
        for src, dst in zip(g, shuffled):
            perm[src] = dst
    assert all(perm[c] == c for c in seen)
    decks_b = [Deal(d.dealer, tuple(perm[c] for c in d.deck)) for d in decks]

    # 3. Replay both in lockstep and compare what `seat` sees.
    a, b = fresh(decks), fresh(decks_b)
    assert to_seat(a.events, seat) == to_seat(b.events, seat) and a.view(seat) == b.view(seat)
    compared = tricks = 0
    for act in actions[:length]:
        assert a.current_player() == b.current_player()
        if a.current_player() == seat:
            assert offered(a) == offered(b)
        act_b = mapped(act, perm)
        if act_b != act:
            assert a.current_player() != seat, "the seat's own action names an unseen card"
        try:
            b.verify_action(act_b)
        except IllegalAction:
            # Only another seat's card play can diverge: whether it may follow suit depends on hidden cards.
            assert isinstance(act, PlayCard) and a.current_player() != seat and not suit_preserving
            return compared, tricks
        ea0, eb0 = len(a.events), len(b.events)
        a.apply_action(act)
        b.apply_action(act_b)
        new_a, new_b = to_seat(a.events[ea0:], seat), to_seat(b.events[eb0:], seat)
        for x, y in zip(new_a, new_b):
            if x != y:
                assert isinstance(x, Showdown) and isinstance(y, Showdown), f"leak: {x} != {y}"
                return compared, tricks  # a showdown result depends on hidden cards: stop here
        assert len(new_a) == len(new_b)
        assert a.view(seat) == b.view(seat)
        compared += 1
        tricks += a.view(seat).phase == "trick"
    return compared, tricks


LEAK_CONFIGS = [
    ("gamerules", None),
    ("cardgames_zone", None),
    ("cardgames_zone_short", None),
    ("swedish_common", None),
    # Without early showdowns nothing public depends on hidden cards until the final showdown,
    # so whole exchanges and trick plays are compared.
    ("gamerules", {"showdown_after": [False, False, False]}),
    ("swedish_common", {"showdown_after": [False, False, False], "no_exchange_threshold": None}),
    ("cardgames_zone", {"showdown_after": [False, False], "reveal_scoring_hand": True}),
]


@pytest.mark.parametrize("preset, options", LEAK_CONFIGS)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_no_leak_permuting_unseen_cards_changes_nothing_a_seat_sees(n, preset, options):
    """CH-24: a seat's views, offered actions and events are a function of what it has seen."""
    total = tricks = 0
    for seed in range(12):
        for suit_preserving in (False, True):
            c, t = leak_case(n, preset, 1000 * n + seed, seed % n, suit_preserving=suit_preserving, options=options)
            total += c
            tricks += t
    assert total > 100
    if options is not None:
        assert tricks > 0  # trick play was compared too


def test_no_leak_detector_catches_a_planted_leak(monkeypatch):
    """The no-leak check is sensitive: making draws public (a planted bug) is reported."""
    from referee.games import chicago

    original = chicago.ChicagoState._emit

    def leaky(self, event, audience=PUBLIC):
        original(self, event, audience)
        if isinstance(event, Drew):  # also tell everyone the suit of the first card drawn
            original(self, Exchanged(seat=event.seat, round=9, count="shdc".index(event.cards[0][1])))

    monkeypatch.setattr(chicago.ChicagoState, "_emit", leaky)
    with pytest.raises(AssertionError, match="leak"):
        for seed in range(40):
            leak_case(3, "gamerules", seed, 0, suit_preserving=False, options={"showdown_after": [False, False, False]})


def test_play_game_refuses_a_policys_illegal_action_with_the_reason() -> None:
    from referee.games import new_game, play_game

    state = new_game("chicago", 2, seed=1)
    with pytest.raises(IllegalAction, match="must send a 'exchange' action now"):
        play_game(state, [lambda d: PlayCard(card="As")] * 2)
