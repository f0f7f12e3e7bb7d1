"""Ghost Hand Euchre for 3 players as a pure state machine (docs/rules.md, GE-01..GE-14);
what is legal, and why not, is `euchre_moves`.

Same shape as `chicago.py`: no I/O and no clock; a game is fully determined by
its rules, seed, optional explicit deals and the actions applied. Information
leaves only through events (with an audience) and per-seat views. The ghost
hand and the dead hand are never put into either, which is what the no-leak
tests check.

Cards use the shared int encoding (`rank * 4 + suit`); the 24-card pack is the
ints 28..51 (nines to aces).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec

from protocol.common import (
    CardPlayed,
    DealEnded,
    DealStarted,
    GameEnded,
    HandDealt,
    PlayedCard,
    ScoreChanged,
    TrickWon,
)
from protocol.euchre import (
    AllPassed,
    Bid,
    BidMade,
    BidRecord,
    EuchreRules,
    EuchreTrickRecord,
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
from referee.errors import ConfigError
from referee.games.base import PUBLIC, TERMINAL, Deal, EngineState, shuffle
from referee.games.cards import CARD_STR, card_names, sort_hand
from referee.games.euchre_moves import (
    EFFECTIVE,
    EUCHRE_DECK,
    HAND_SIZE,
    JACK,
    MOON,
    N_PLAYERS,
    TRICKS,
    WIRE_SUITS,
    EuchreMoves,
    effective_suit,
    same_colour,
    trick_power,
    trick_winner,
    wire_bid,
)

# The pack and the rules of the cards live in `euchre_moves`; positions, the
# search bots and tests import them from here, with the engine.
__all__ = [
    "EUCHRE_DECK",
    "HAND_SIZE",
    "JACK",
    "MOON",
    "N_PLAYERS",
    "TRICKS",
    "GhostEuchreState",
    "effective_suit",
    "new_state",
    "same_colour",
    "trick_power",
    "trick_winner",
]

# Play events are frozen Structs, made once and shared: [trick][seat][card].
_CARD_PLAYED = tuple(
    tuple(tuple(CardPlayed(seat=seat, card=name, trick=trick) for name in CARD_STR) for seat in range(N_PLAYERS))
    for trick in range(TRICKS + 1)
)


class GhostEuchreState(EuchreMoves, EngineState):
    """One game of Ghost Hand Euchre for exactly 3 seats."""

    def __init__(self, rules: EuchreRules, n_players: int, seed: int, deals: Sequence[Deal] = ()) -> None:
        if n_players != N_PLAYERS:
            raise ConfigError(f"Ghost Hand Euchre is for exactly 3 players, not {n_players} (GE-01)")
        self.rules = rules
        self.n_players = n_players
        self.seed = seed
        self._rng = random.Random(seed)
        self._explicit = list(deals)
        self._decks: list[Deal] = []
        self.events: list[tuple[int, msgspec.Struct]] = []
        self._scores = [0] * N_PLAYERS
        self._winner: int | None = None
        self._end_reason = ""
        self._over = False
        self._tiebreak = False
        self.deal_number = 0
        dealer = self._explicit[0].dealer if self._explicit else self._rng.randrange(N_PLAYERS)
        self._start_deal(dealer)

    @classmethod
    def restored(
        cls, rules: EuchreRules, seed: int, deals: Sequence[Deal], fields: dict[str, object]
    ) -> GhostEuchreState:
        """A state resumed in the middle of a hand from fields that
        `referee.games.restore` has checked: no events yet, and only the decks
        of deals dealt from here on."""
        self = cls.__new__(cls)
        self.rules = rules
        self.n_players = N_PLAYERS
        self.seed = seed
        self._explicit = list(deals)
        self._decks = []
        self.events = []
        self._winner = None
        self._end_reason = ""
        self._over = False
        self.__dict__.update(fields)
        return self

    # ------------------------------------------------------------ public API

    def apply_action(self, action: msgspec.Struct) -> None:
        value = self._check(action)
        seat = self._to_act
        if isinstance(action, SwapGhost):
            self._do_swap(seat)
        elif isinstance(action, (Pass, Bid)):
            self._do_bid(seat, value)
        elif isinstance(action, NameTrump):
            self._do_trump(seat, value)
        else:
            self._do_play(seat, value)

    def view(self, seat: int) -> EuchreView:
        """What `seat` may know; `PUBLIC` (-1) gives what every spectator may know (no hand)."""
        if not PUBLIC <= seat < self.n_players:
            raise ValueError(f"no seat {seat}: seats are 0-{self.n_players - 1}, or PUBLIC (-1) for the public view")
        in_tricks = self._phase == "trick" and not self._over
        trump = self._trump
        led = effective_suit(self._trick[0][1], trump) if in_tricks and self._trick and trump is not None else None
        return EuchreView(
            seat=seat,
            n_players=N_PLAYERS,
            phase="game_over" if self._over else self._phase,  # type: ignore[arg-type]
            deal=self.deal_number,
            dealer=self._dealer,
            tiebreak=self._tiebreak,
            target_score=self.rules.target_score,
            scores=list(self._scores),
            hand=card_names(sort_hand(self._hands[seat])) if seat != PUBLIC else [],
            bids=list(self._bids),
            high_bid=wire_bid(self._high) if self._high else None,
            swapped_by=self._swapped_by,
            declarer=self._declarer,
            contract=wire_bid(self._high) if self._declarer is not None else None,
            trump=WIRE_SUITS[trump] if trump is not None else None,
            trick_number=self._trick_no if in_tricks else 0,
            leader=self._leader if in_tricks else None,
            led_suit=WIRE_SUITS[led] if led is not None else None,
            trick=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in self._trick],
            tricks=list(self._rec_tricks),
            tricks_won=list(self._tricks_won),
        )

    # ------------------------------------------------------------ deals

    def _emit(self, event: msgspec.Struct, audience: int = PUBLIC) -> None:
        self.events.append((audience, event))

    def _start_deal(self, dealer: int) -> None:
        """GE-04: deck[i] goes to position i mod 4 of [eldest, next, ghost, dealer]."""
        self.deal_number += 1
        if self._explicit:
            spec = self._explicit.pop(0)
            dealer = spec.dealer
            deck = list(spec.deck)
            if not 0 <= dealer < N_PLAYERS:
                raise ConfigError(f"explicit deal {self.deal_number}: dealer {dealer} is not a seat (0-2)")
            if sorted(deck) != list(EUCHRE_DECK):
                raise ConfigError(
                    f"explicit deal {self.deal_number}: the deck must hold each of the 24 cards 9..A once"
                )
        else:
            deck = list(EUCHRE_DECK)
            shuffle(deck, self._rng)
        self._decks.append(Deal.of_pack(dealer, deck))
        self._dealer = dealer
        eldest = (dealer + 1) % N_PLAYERS
        self._order = [eldest, (eldest + 1) % N_PLAYERS, dealer]  # bidding order, dealer last
        piles: list[list[int]] = [deck[pos::4] for pos in range(4)]
        self._hands: list[list[int]] = [[] for _ in range(N_PLAYERS)]
        self._hands[self._order[0]] = piles[0]
        self._hands[self._order[1]] = piles[1]
        self._ghost: list[int] = piles[2]
        self._hands[dealer] = piles[3]
        self._dead: list[int] = []
        self._swapped_by: int | None = None
        self._bids: list[BidRecord] = []
        self._high = 0  # 0 = no bid yet; MOON = 6
        self._high_seat: int | None = None
        self._declarer: int | None = None
        self._trump: int | None = None
        self._trick: list[tuple[int, int]] = []
        self._played: list[int] = []
        self._trick_no = 0
        self._leader: int | None = None
        self._tricks_won = [0] * N_PLAYERS
        self._rec_tricks: list[EuchreTrickRecord] = []
        self._reneges: list[tuple[int, int, int, int]] = []  # (seat, trick, card, led)
        self._turn = 0
        self._emit(
            DealStarted(deal=self.deal_number, dealer=dealer, active=list(range(N_PLAYERS)), tiebreak=self._tiebreak)
        )
        for seat in self._order:
            self._emit(HandDealt(seat=seat, cards=card_names(self._hands[seat])), seat)
        self._phase = "bidding"
        self._to_act = self._order[0]

    def cards_in_play(self) -> list[int]:
        """Every card of the current deal wherever it is (for conservation checks)."""
        return [c for h in self._hands for c in h] + self._ghost + self._dead + self._played

    # ------------------------------------------------------------ bidding

    def _do_swap(self, seat: int) -> None:
        """GE-06: the whole hand for the ghost, unseen; the old hand is dead."""
        self._dead = self._hands[seat]
        self._hands[seat] = self._ghost
        self._ghost = []
        self._swapped_by = seat
        self._emit(GhostSwapped(seat=seat))
        self._emit(GhostHandTaken(seat=seat, cards=card_names(self._hands[seat])), seat)

    def _do_bid(self, seat: int, value: int) -> None:
        wire = wire_bid(value) if value else None
        self._bids.append(BidRecord(seat=seat, bid=wire))
        self._emit(BidMade(seat=seat, bid=wire))
        if value:
            self._high, self._high_seat = value, seat
        self._turn += 1
        if self._turn < N_PLAYERS:
            self._to_act = self._order[self._turn]
            return
        if self._high_seat is None:  # GE-07
            self._emit(AllPassed(deal=self.deal_number, next_dealer=(self._dealer + 1) % N_PLAYERS))
            self._end_deal()
            return
        self._declarer = self._high_seat
        self._phase = "name_trump"
        self._to_act = self._declarer

    def _do_trump(self, seat: int, suit: int) -> None:
        """GE-08: the declarer names trump and leads trick 1."""
        self._trump = suit
        self._emit(TrumpNamed(seat=seat, contract=wire_bid(self._high), suit=WIRE_SUITS[suit]))
        self._phase = "trick"
        self._trick_no = 1
        self._leader = seat
        self._to_act = seat

    # ------------------------------------------------------------ tricks

    def _do_play(self, seat: int, card: int) -> None:
        trump = self._trump
        assert trump is not None
        hand = self._hands[seat]
        trick = self._trick
        if trick:
            suit_of = EFFECTIVE[trump]
            led = suit_of[trick[0][1]]
            if suit_of[card] != led and any(suit_of[c] == led for c in hand):
                self._reneges.append((seat, self._trick_no, card, led))  # only reachable under `penalize`
        hand.remove(card)
        trick.append((seat, card))
        self._played.append(card)
        self.events.append((PUBLIC, _CARD_PLAYED[self._trick_no][seat][card]))
        if len(trick) < N_PLAYERS:
            self._to_act = (seat + 1) % N_PLAYERS
            return
        winner, wcard = trick_winner(self._trick, trump)
        self._tricks_won[winner] += 1
        assert self._leader is not None
        self._rec_tricks.append(
            EuchreTrickRecord(
                number=self._trick_no,
                leader=self._leader,
                cards=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in self._trick],
                winner=winner,
            )
        )
        self._emit(TrickWon(trick=self._trick_no, seat=winner, card=CARD_STR[wcard]))
        self._trick = []
        if self._trick_no == TRICKS:
            self._score_hand()
            return
        self._trick_no += 1
        self._leader = winner
        self._to_act = winner

    # ------------------------------------------------------------ scoring

    def _add(self, seat: int, points: int, reason: str) -> None:
        self._scores[seat] += points  # GE-12: no floor, scores may go negative
        self._emit(ScoreChanged(seat=seat, points=points, total=self._scores[seat], reason=reason))

    def _score_hand(self) -> None:
        """GE-11 (plus GE-10 penalties), then the end check (GE-13)."""
        r = self.rules
        declarer, bid, trump = self._declarer, self._high, self._trump
        assert declarer is not None and trump is not None
        before = list(self._scores)
        won = self._tricks_won
        made = won[declarer] >= bid
        for seat in self._order:
            t = won[seat]
            if seat != declarer:
                if t:
                    self._add(seat, t, "tricks")
            elif bid == MOON:
                if made:
                    self._add(seat, r.moon_points, "moon")
                else:
                    self._add(seat, -r.moon_fail_penalty, "moon_failed")
            elif made:
                self._add(seat, t, "contract_made")
            else:
                self._add(seat, -bid, "set")
        for seat, trick, card, led in self._reneges:
            self._emit(
                Reneged(seat=seat, trick=trick, card=CARD_STR[card], led_suit=WIRE_SUITS[led], penalty=r.renege_penalty)
            )
            self._add(seat, -r.renege_penalty, "renege")
        self._emit(
            HandScored(
                deal=self.deal_number,
                declarer=declarer,
                contract=wire_bid(bid),
                trump=WIRE_SUITS[trump],
                tricks_won=list(won),
                made=made,
                points=[a - b for a, b in zip(self._scores, before)],
                scores=list(self._scores),
            )
        )
        self._end_deal()

    def _end_deal(self) -> None:
        """GE-13: once anyone reaches the target, the unique top score wins; a tie
        for the top means one more full hand by all three, checked the same way."""
        self._emit(DealEnded(deal=self.deal_number, scores=list(self._scores)))
        best = max(self._scores)
        top = [s for s in range(N_PLAYERS) if self._scores[s] == best]
        was_tied, self._tiebreak = self._tiebreak, False
        if best >= self.rules.target_score:
            if len(top) == 1:
                self._finish(top[0], "tiebreak" if was_tied else "target")
                return
            self._tiebreak = True
        if self.deal_number >= self.rules.max_hands:
            self._finish(top[0] if len(top) == 1 else None, "hand_limit")
            return
        self._start_deal((self._dealer + 1) % N_PLAYERS)  # GE-04: the deal passes left

    def _finish(self, winner: int | None, reason: str) -> None:
        self._winner = winner
        self._end_reason = reason
        self._over = True
        self._phase = "game_over"
        self._to_act = TERMINAL
        res = self.result()
        self._emit(GameEnded(winner=winner, scores=res.scores, placements=res.placements, reason=reason))


def new_state(rules: EuchreRules, n_players: int, seed: int, deals: Sequence[Deal] = ()) -> GhostEuchreState:
    if n_players != N_PLAYERS:
        raise ConfigError(f"Ghost Hand Euchre is for exactly 3 players, not {n_players} (GE-01)")
    return GhostEuchreState(rules, n_players, seed, deals)
