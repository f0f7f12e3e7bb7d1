"""Swedish Chicago as a pure state machine (docs/rules.md, CH-01..CH-25);
what is legal, and why not, is `chicago_moves`; showdowns, points and the
end of the game are `chicago_scoring`.

No I/O and no clock: a game is fully determined by its rules, seed, optional
explicit deals and the actions applied. The engine emits events with an
audience (a seat or PUBLIC) and builds per-seat views, which are the only
ways information leaves it; that is what the no-leak tests check.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec

from protocol.chicago import (
    ChicagoDecision,
    ChicagoRules,
    ChicagoView,
    Drew,
    Exchanged,
    ExchangeRecord,
    FirstDealerCut,
    OpenCard,
    OpenCardDecision,
    Reveal,
    ShowdownRecord,
    StockReshuffled,
    TrickRecord,
)
from protocol.common import (
    CardPlayed,
    DealStarted,
    HandDealt,
    PlayedCard,
    TrickWon,
)
from referee.errors import ConfigError
from referee.games.base import PUBLIC, Deal, EngineState, shuffle
from referee.games.cards import CARD_STR, card_names
from referee.games.chicago_moves import HAND_SIZE, PHASE_ACTION, TRICKS, ChicagoMoves
from referee.games.chicago_scoring import ChicagoScoring

# A view shows the hand by suit (s h d c), high rank first within a suit:
# cards are sorted by their place in that order, then named.
_VIEW_PLACE = tuple((c & 3) * 13 + 12 - (c >> 2) for c in range(52))
_VIEW_NAME = tuple(CARD_STR[c] for c in sorted(range(52), key=_VIEW_PLACE.__getitem__))
# Play events are frozen Structs too, made once and shared.
_PLAYED = tuple(tuple(PlayedCard(seat=seat, card=name) for name in CARD_STR) for seat in range(4))
_CARD_PLAYED = tuple(
    tuple(tuple(CardPlayed(seat=seat, card=name, trick=trick) for name in CARD_STR) for seat in range(4))
    for trick in range(TRICKS + 1)
)
_EXCHANGE_EVENTS: dict[tuple[int, int, int], tuple[ExchangeRecord, Exchanged]] = {}


def _exchange_events(seat: int, rnd: int, count: int) -> tuple[ExchangeRecord, Exchanged]:
    """The record and the event of an exchange, made once per (seat, round, count) and shared."""
    key = (seat, rnd, count)
    made = _EXCHANGE_EVENTS.get(key)
    if made is None:
        made = _EXCHANGE_EVENTS[key] = (
            ExchangeRecord(seat=seat, round=rnd, count=count),
            Exchanged(seat=seat, round=rnd, count=count),
        )
    return made


class ChicagoState(ChicagoMoves, ChicagoScoring, EngineState):
    """One game of Swedish Chicago for 2-4 seats."""

    _position_stream: tuple[int, ...] = ()  # built from a position: its deal's random stream so far

    def __init__(
        self,
        rules: ChicagoRules,
        n_players: int,
        seed: int,
        deals: Sequence[Deal] = (),
    ) -> None:
        if not 2 <= n_players <= 4:
            raise ConfigError(f"Swedish Chicago is for 2-4 players, not {n_players} (CH-02)")
        self.rules = rules
        self.n_players = n_players
        self.seed = seed
        # Independent streams: the deck of deal k depends only on (seed, k), so
        # every game of a deal set sees the same deck sequence however it is played.
        self._rng = random.Random(f"{seed}/first-dealer")
        self._explicit = list(deals)
        self._decks: list[Deal] = []
        self.events: list[tuple[int, msgspec.Struct]] = []
        self._scores = [0] * n_players
        self._hands: list[list[int]] = [[] for _ in range(n_players)]
        self._points = dict(rules.hand_points)
        self._winner: int | None = None
        self._end_reason = ""
        self._over = False
        self._tied: list[int] | None = None  # seats in a tie-break (CH-22)
        self.deal_number = 0
        dealer = self._explicit[0].dealer if self._explicit else self._choose_first_dealer()
        self._start_deal(dealer)

    @classmethod
    def restored(
        cls, rules: ChicagoRules, n_players: int, seed: int, deals: Sequence[Deal], fields: dict[str, object]
    ) -> ChicagoState:
        """A state resumed in the middle of a deal from fields that
        `referee.games.restore` has checked: no events yet, and only the decks
        of deals dealt from here on."""
        self = cls.__new__(cls)
        self.rules = rules
        self.n_players = n_players
        self.seed = seed
        self._explicit = list(deals)
        self._decks = []
        self.events = []
        self._points = dict(rules.hand_points)
        self._winner = None
        self._end_reason = ""
        self._over = False
        self._explicit_used = False
        self._deal_closed = False
        self._pending_discards = []
        self.__dict__.update(fields)
        return self

    # ------------------------------------------------------------ public API

    def apply_action(self, action: msgspec.Struct) -> None:
        phase = self._phase
        if self._over or type(action) is not PHASE_ACTION[phase]:
            self._check(action)  # raises IllegalAction saying why
        seat = self._to_act
        # Each kind's own check (the same `_check` runs) before it is applied.
        if phase == "trick":
            self._do_play(seat, self._check_play(seat, action))  # type: ignore[arg-type]
        elif phase == "exchange":
            self._do_exchange(seat, self._check_exchange(seat, action))  # type: ignore[arg-type]
        elif phase == "take_open":
            self._do_take_open(seat, action.take)  # type: ignore[attr-defined]
        else:
            self._check_call(seat, action)  # type: ignore[arg-type]
            self._do_chicago(seat, action.call)  # type: ignore[attr-defined]

    def view(self, seat: int) -> ChicagoView:
        """What `seat` may know; `PUBLIC` (-1) gives what every spectator may know (no hand)."""
        if not PUBLIC <= seat < self.n_players:
            raise ValueError(f"no seat {seat}: seats are 0-{self.n_players - 1}, or PUBLIC (-1) for the public view")
        r = self.rules
        return ChicagoView(
            seat=seat,
            n_players=self.n_players,
            phase="game_over" if self._over else self._phase,  # type: ignore[arg-type]
            deal=self.deal_number,
            dealer=self._dealer,
            active=list(self._active),
            tiebreak=self._tied is not None,
            target_score=r.target_score,
            scores=list(self._scores),
            hand=[_VIEW_NAME[i] for i in sorted([_VIEW_PLACE[c] for c in self._hands[seat]])] if seat != PUBLIC else [],
            exchange_round=self._round + 1 if self._phase in ("exchange", "take_open") else 0,
            stock_size=len(self._stock),
            discard_size=len(self._discards),
            open_card=CARD_STR[self._open] if self._open is not None else None,
            exchanges=list(self._rec_exchanges),
            showdowns=list(self._rec_showdowns),
            revealed=list(self._rec_reveals),
            chicago_declarer=self._declarer,
            trick_number=self._trick_no if self._phase == "trick" else 0,
            leader=self._leader if self._phase == "trick" else None,
            trick=list(self._trick_cards),
            tricks=list(self._rec_tricks),
            tricks_won=list(self._tricks_won),
        )

    # ------------------------------------------------------------ deals

    def _emit(self, event: msgspec.Struct, audience: int = PUBLIC) -> None:
        """Every event a seat alone may see goes out here (the no-leak tests
        plant their leaks here); the hot public ones are appended in place."""
        self.events.append((audience, event))

    def _choose_first_dealer(self) -> int:
        """CH-03: low cut from a seeded deck (ties for lowest cut again)."""
        n = self.n_players
        if self.rules.first_dealer == "seeded_random":
            dealer = self._rng.randrange(n)
            self._emit(FirstDealerCut(rounds=[], dealer=dealer))
            return dealer
        deck = list(range(52))
        shuffle(deck, self._rng)
        cutters = list(range(n))
        rounds: list[list[PlayedCard]] = []
        pos = 0
        while True:
            cut = {s: deck[pos + i] for i, s in enumerate(cutters)}
            pos += len(cutters)
            rounds.append([PlayedCard(seat=s, card=CARD_STR[c]) for s, c in cut.items()])
            low = min(c >> 2 for c in cut.values())
            cutters = [s for s, c in cut.items() if c >> 2 == low]
            if len(cutters) == 1:
                self._emit(FirstDealerCut(rounds=rounds, dealer=cutters[0]))
                return cutters[0]

    def _next_active(self, seat: int) -> int:
        n = self.n_players
        if len(self._active) == n:
            return (seat + 1) % n
        for k in range(1, n + 1):
            s = (seat + k) % n
            if s in self._active:
                return s
        raise AssertionError("no active seat")

    def _start_deal(self, dealer: int) -> None:
        self.deal_number += 1
        self._active = list(self._tied) if self._tied is not None else list(range(self.n_players))
        self._explicit_used = bool(self._explicit)
        if self._explicit:
            spec = self._explicit.pop(0)
            if spec.dealer not in self._active:
                raise ConfigError(
                    f"explicit deal {self.deal_number}: dealer {spec.dealer} is not a seat in this deal "
                    f"(seats {self._active})"
                )
            dealer = spec.dealer
            deck = list(spec.deck)
            if sorted(deck) != list(range(52)):
                raise ConfigError(f"explicit deal {self.deal_number}: the deck must hold each of the 52 cards once")
        self._rng = random.Random(f"{self.seed}/deal/{self.deal_number}")
        if not self._explicit_used:
            deck = list(range(52))
            shuffle(deck, self._rng)
        self._decks.append(Deal.of_pack(dealer, deck))
        self._dealer = dealer
        order = []
        s = dealer
        for _ in self._active:
            s = self._next_active(s)
            order.append(s)
        self._order = order  # eldest first, dealer last
        hands: list[list[int]] = [[] for _ in range(self.n_players)]
        self._hands = hands
        k = len(order)
        dealt = HAND_SIZE * k
        for j, seat in enumerate(order):  # one card at a time round the table: every k-th card
            hands[seat] = deck[j:dealt:k]
        self._stock = deck[: dealt - 1 : -1]  # pop() takes the top card
        self._discards: list[int] = []
        self._round = 0
        self._turn = 0
        self._open: int | None = None
        self._pending_discards: list[int] = []
        self._scored_hands: dict[int, frozenset[int]] = {}
        self._declarer: int | None = None
        self._trick: list[tuple[int, int]] = []
        self._trick_no = 0
        self._leader: int | None = None
        self._tricks_won = [0] * self.n_players
        self._start_hands: list[list[int]] = []
        self._rec_exchanges: list[ExchangeRecord] = []
        self._rec_showdowns: list[ShowdownRecord] = []
        self._rec_reveals: list[Reveal] = []
        self._rec_tricks: list[TrickRecord] = []
        self._trick_cards: list[PlayedCard] = []
        self._deal_closed = False
        self._emit(
            DealStarted(
                deal=self.deal_number,
                dealer=dealer,
                active=list(self._active),
                tiebreak=self._tied is not None,
                stock_size=len(self._stock),
            )
        )
        for seat in order:
            self._emit(HandDealt(seat=seat, cards=[CARD_STR[c] for c in hands[seat]]), seat)
        self._phase = "exchange"
        self._to_act = order[0]

    # ------------------------------------------------------------ exchange

    def _draw(self, seat: int, count: int) -> list[int]:
        """Draw from the stock; CH-09 reshuffles the older discards if needed."""
        stock = self._stock
        if len(stock) >= count:  # the usual case: the top `count` cards, top first
            cut = len(stock) - count
            got = stock[cut:]
            del stock[cut:]
            got.reverse()
            return got
        got = []
        while len(got) < count:
            if not self._stock:
                keep = self._pending_discards
                older = self._discards[: len(self._discards) - len(keep)]
                shuffle(older, self._rng)
                self._stock = older
                self._discards = list(keep)
                self._emit(StockReshuffled(stock_size=len(self._stock)))
                if not self._stock:
                    raise AssertionError("stock and discards both empty")
            got.append(self._stock.pop())
        return got

    def _do_exchange(self, seat: int, discard: list[int]) -> None:
        hand = self._hands[seat]
        scored = self._scored_hands.get(seat)
        if discard and scored is not None and frozenset(hand) == scored:
            self._reveal(seat, hand, "break_up")  # CH-13
        for c in discard:
            hand.remove(c)
        self._discards.extend(discard)
        self._pending_discards = list(discard)
        count = len(discard)
        record, event = _exchange_events(seat, self._round + 1, count)
        self._rec_exchanges.append(record)
        self.events.append((PUBLIC, event))
        if count == 1 and self.rules.one_open:
            (self._open,) = self._draw(seat, 1)
            self._emit(OpenCard(seat=seat, card=CARD_STR[self._open]))
            self._phase = "take_open"
            return
        if count:
            drawn = self._draw(seat, count)
            hand.extend(drawn)
            self._emit(Drew(seat=seat, cards=[CARD_STR[c] for c in drawn]), seat)
        self._after_exchange_turn()

    def _do_take_open(self, seat: int, take: bool) -> None:
        card = self._open
        assert card is not None
        self._open = None
        self._emit(OpenCardDecision(seat=seat, take=take))
        if take:
            self._hands[seat].append(card)
        else:
            self._discards.append(card)
            self._pending_discards.append(card)
            drawn = self._draw(seat, 1)
            self._hands[seat].extend(drawn)
            self._emit(Drew(seat=seat, cards=card_names(drawn)), seat)
        self._phase = "exchange"
        self._after_exchange_turn()

    def _after_exchange_turn(self) -> None:
        self._pending_discards = []
        self._turn += 1
        if self._turn < len(self._order):
            self._to_act = self._order[self._turn]
            return
        rnd = self._round
        rules = self.rules
        if rules.showdown_after[rnd]:
            all_hands = self._hands
            if self._showdown(rnd + 1, {s: all_hands[s] for s in self._active}):
                return
        self._round = rnd + 1
        self._turn = 0
        if rnd + 1 < rules.exchanges:
            self._to_act = self._order[0]
            return
        self._start_chicago_window()

    # ------------------------------------------------------------ chicago & tricks

    def _start_chicago_window(self) -> None:
        self._callers = [s for s in self._order if self._chicago_eligible(s)]
        if self._callers:
            self._phase = "chicago_call"
            self._to_act = self._callers[0]
        else:
            self._start_tricks()

    def _do_chicago(self, seat: int, call: bool) -> None:
        self._emit(ChicagoDecision(seat=seat, call=call))
        if call:
            self._declarer = seat
            self._start_tricks()
            return
        self._callers.pop(0)
        if self._callers:
            self._to_act = self._callers[0]
        else:
            self._start_tricks()

    def _start_tricks(self) -> None:
        self._start_hands = [list(h) for h in self._hands]
        self._phase = "trick"
        self._trick_no = 1
        declarer = self._declarer
        self._leader = declarer if declarer is not None and self.rules.chicago_leader == "declarer" else self._order[0]
        self._to_act = self._leader

    def _do_play(self, seat: int, card: int) -> None:
        self._hands[seat].remove(card)
        trick = self._trick
        trick.append((seat, card))
        self._trick_cards.append(_PLAYED[seat][card])
        self.events.append((PUBLIC, _CARD_PLAYED[self._trick_no][seat][card]))
        if len(trick) < len(self._active):
            self._to_act = self._next_active(seat)
            return
        # The highest card of the led suit takes the trick: within a suit, card ints order as ranks do.
        winner, wcard = trick[0]
        led = wcard & 3
        for s, c in trick:
            if c > wcard and c & 3 == led:
                winner, wcard = s, c
        self._tricks_won[winner] += 1
        assert self._leader is not None
        self._rec_tricks.append(
            TrickRecord(number=self._trick_no, leader=self._leader, cards=self._trick_cards, winner=winner)
        )
        self._emit(TrickWon(trick=self._trick_no, seat=winner, card=CARD_STR[wcard]))
        self._trick = []
        self._trick_cards = []
        declarer = self._declarer
        if declarer is not None and winner != declarer:
            self._add(declarer, -self.rules.chicago_penalty, "chicago_failed")  # CH-17
            self._end_tricks()
            return
        if self._trick_no == TRICKS:
            if declarer is not None:
                self._add(declarer, self.rules.chicago_points, "chicago")
            else:
                pts = self.rules.last_trick_points
                bonus = self.rules.last_trick_two_bonus
                if bonus is not None and wcard >> 2 == 0:
                    pts = bonus
                self._add(winner, pts, "last_trick")
            if self._immediate_check([winner if declarer is None else declarer]):
                return
            self._end_tricks()
            return
        self._trick_no += 1
        self._leader = winner
        self._to_act = winner

    def _end_tricks(self) -> None:
        r = self.rules
        if r.final_showdown and (self._declarer is None or r.showdown_after_chicago):
            for s in self._order:
                self._reveal(s, self._start_hands[s], "final_showdown")
            hands = {s: self._start_hands[s] for s in self._active}
            if self._showdown(0, hands):
                return
        self._end_deal()

    def _next_deal(self) -> None:
        """The deal passes clockwise (CH-04), among the tied seats in a tie-break."""
        self._close_deal()
        self._active = list(self._tied) if self._tied is not None else list(range(self.n_players))
        self._start_deal(self._next_active(self._dealer))


def new_state(rules: ChicagoRules, n_players: int, seed: int, deals: Sequence[Deal] = ()) -> ChicagoState:
    return ChicagoState(rules, n_players, seed, deals)
