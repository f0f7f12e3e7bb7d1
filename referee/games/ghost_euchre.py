"""Ghost Hand Euchre for 3 players as a pure state machine (docs/rules.md, GE-01..GE-14).

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
    PlayCard,
    PlayedCard,
    ScoreChanged,
    TrickWon,
)
from protocol.euchre import (
    AllPassed,
    Bid,
    BidMade,
    BidRecord,
    EuchreAction,
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
from referee.errors import ConfigError, IllegalAction
from referee.games.base import PUBLIC, TERMINAL, Deal, EngineState, shuffle
from referee.games.cards import (
    CARD_STR,
    SUIT_NAMES,
    SUITS,
    CardError,
    card_names,
    parse_card,
    sort_hand,
)

N_PLAYERS = 3
HAND_SIZE = 6
TRICKS = 6
MOON = 6  # a moon contracts all six tricks and outranks every numeric bid
JACK = 9  # rank index of the jack (2 = 0 ... A = 12)
NINE = 7
EUCHRE_DECK: tuple[int, ...] = tuple(range(NINE * 4, 52))  # 9c..As: 24 cards

Contract = int | str  # wire form: 1..5 or "moon"


def _wire_bid(value: int) -> Contract:
    return "moon" if value == MOON else value


def same_colour(suit: int) -> int:
    """The other suit of the same colour (s<->c, h<->d): the left bower's printed suit."""
    return 3 - suit


def effective_suit(card: int, trump: int) -> int:
    """GE-03: the left bower (jack of the same colour) belongs to trump for all purposes."""
    if card >> 2 == JACK and card & 3 == same_colour(trump):
        return trump
    return card & 3


def trick_power(card: int, trump: int, led: int) -> int:
    """Higher wins the trick: right bower > left bower > other trumps > led suit > rest (-1)."""
    if card >> 2 == JACK:
        if card & 3 == trump:
            return 100
        if card & 3 == same_colour(trump):
            return 99
    suit = card & 3
    if suit == trump:
        return 50 + (card >> 2)
    return card >> 2 if suit == led else -1


def trick_winner(cards: Sequence[tuple[int, int]], trump: int) -> tuple[int, int]:
    """(seat, card) taking a trick of (seat, card) plays, led by the first (GE-09)."""
    led = effective_suit(cards[0][1], trump)
    return max(cards, key=lambda x: trick_power(x[1], trump, led))


class GhostEuchreState(EngineState):
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
    def restored(cls, rules: EuchreRules, seed: int, deals: Sequence[Deal],
                 fields: dict[str, object]) -> GhostEuchreState:
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

    def legal_actions(self) -> list[msgspec.Struct]:
        """Ready-made legal actions; the first is always the cautious default.

        Bidding: pass, the bids that beat the high bid, then the swap if still
        available. Trump: suits by how many trumps they would give the hand.
        Play: cards that follow (lowest first); under `renege_policy=penalize`
        the reneging cards follow them, since they are accepted (at a cost).
        """
        if self._over:
            return []
        seat = self._to_act
        if self._phase == "bidding":
            acts: list[msgspec.Struct] = [Pass()]
            acts += [Bid(bid=_wire_bid(b)) for b in self._open_bids()]
            if self._swapped_by is None:
                acts.append(SwapGhost())
            return acts
        if self._phase == "name_trump":
            hand = self._hands[seat]
            order = sorted(range(4), key=lambda t: -sum(effective_suit(c, t) == t for c in hand))
            return [NameTrump(suit=SUITS[t]) for t in order]  # type: ignore[arg-type]
        follow, rest = self._playable(seat)
        if self.rules.renege_policy == "penalize":
            follow = follow + rest
        return [PlayCard(card=CARD_STR[c]) for c in follow]

    def verify_action(self, action: msgspec.Struct) -> None:
        """Raise IllegalAction saying why `action` is not legal now."""
        self._check(action)

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
            high_bid=_wire_bid(self._high) if self._high else None,
            swapped_by=self._swapped_by,
            declarer=self._declarer,
            contract=_wire_bid(self._high) if self._declarer is not None else None,
            trump=SUITS[trump] if trump is not None else None,  # type: ignore[arg-type]
            trick_number=self._trick_no if in_tricks else 0,
            leader=self._leader if in_tricks else None,
            led_suit=SUITS[led] if led is not None else None,  # type: ignore[arg-type]
            trick=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in self._trick],
            tricks=list(self._rec_tricks),
            tricks_won=list(self._tricks_won),
        )

    # ------------------------------------------------------------ for playout policies
    # What a playout policy reads of the state to act: the view holds the
    # same, as names, but building one per step costs more than the step.

    def phase(self) -> str:
        """`bidding`, `name_trump` or `trick` (`game_over` at the end), as the view says."""
        return "game_over" if self._over else self._phase

    def trump(self) -> int | None:
        """The trump suit (0-3: s h d c), None before it is named."""
        return self._trump

    def open_bids(self) -> list[int]:
        """The contracts a bid may name now, lowest first (6 is the moon)."""
        return self._open_bids()

    def playable_cards(self, seat: int) -> list[int]:
        """The card ints `seat` may play to the trick now: those that follow
        the effective led suit, or every card when leading or void; weakest first."""
        return self._playable(seat)[0]

    def trick(self) -> list[tuple[int, int]]:
        """(seat, card int) of the cards on the table in the trick now, in the order played."""
        return list(self._trick)

    # ------------------------------------------------------------ checks

    def _open_bids(self) -> list[int]:
        """GE-05: from `min_bid` to 5, then moon, each above the current high bid."""
        low = max(self.rules.min_bid, self._high + 1)
        return list(range(low, MOON + 1))

    def _playable(self, seat: int) -> tuple[list[int], list[int]]:
        """(cards that follow the effective led suit, the others), weakest first.

        Leading, or void in the led suit: every card is in the first list."""
        trump = self._trump
        assert trump is not None
        led = effective_suit(self._trick[0][1], trump) if self._trick else -2  # -2: leading
        hand = sorted(self._hands[seat], key=lambda c: (trick_power(c, trump, led), c & 3))
        follow = [c for c in hand if effective_suit(c, trump) == led]
        if not follow:
            return hand, []
        return follow, [c for c in hand if c not in follow]

    def _check(self, action: msgspec.Struct) -> int:
        """Validate `action` for the seat to act; return its decoded value."""
        if self._over:
            raise IllegalAction("the game is over; no more actions")
        seat = self._to_act
        phase = self._phase
        kinds: dict[str, tuple[type, ...]] = {
            "bidding": (Pass, Bid, SwapGhost),
            "name_trump": (NameTrump,),
            "trick": (PlayCard,),
        }
        if not isinstance(action, kinds[phase]):
            kind = getattr(type(action), "__struct_config__", None)
            got = kind.tag if kind is not None else type(action).__name__
            want = " or ".join(repr(k.__struct_config__.tag) for k in kinds[phase])
            raise IllegalAction(f"seat {seat} must send a {want} action now ({phase.replace('_', ' ')}), not {got!r}")
        if isinstance(action, SwapGhost):
            if self._swapped_by == seat:
                raise IllegalAction(f"seat {seat} already swapped this hand and must now pass or bid (GE-06)")
            if self._swapped_by is not None:
                raise IllegalAction(
                    f"only one ghost swap per hand (GE-06): seat {self._swapped_by} already swapped"
                )
            return -1
        if isinstance(action, Pass):
            return 0
        if isinstance(action, Bid):
            return self._check_bid(action.bid)
        if isinstance(action, NameTrump):
            if not isinstance(action.suit, str) or action.suit not in SUITS or len(action.suit) != 1:
                raise IllegalAction(f"bad trump suit {action.suit!r}: name one of s h d c (GE-08)")
            return SUITS.index(action.suit)
        return self._check_play(seat, action)

    def _check_bid(self, raw: object) -> int:
        r = self.rules
        if raw == "moon":
            value = MOON
        elif isinstance(raw, int) and not isinstance(raw, bool) and 1 <= raw <= 5:
            value = raw
        else:
            raise IllegalAction(f"bad bid {raw!r}: bid {r.min_bid}..5 tricks or \"moon\", or pass (GE-05)")
        if value < r.min_bid:
            raise IllegalAction(f"bid {raw} is below the minimum bid {r.min_bid} (GE-05)")
        if value <= self._high:
            raise IllegalAction(
                f"bid {raw} must exceed the high bid {_wire_bid(self._high)} of seat {self._high_seat} (GE-05)"
            )
        return value

    def _check_play(self, seat: int, action: PlayCard) -> int:
        try:
            card = parse_card(action.card)
        except CardError as exc:
            raise IllegalAction(str(exc)) from None
        hand = self._hands[seat]
        if card not in hand:
            raise IllegalAction(f"cannot play {CARD_STR[card]}: not in hand {' '.join(card_names(sort_hand(hand)))}")
        if self._trick and self.rules.renege_policy == "reject":
            trump = self._trump
            assert trump is not None
            led = effective_suit(self._trick[0][1], trump)
            follow = [c for c in hand if effective_suit(c, trump) == led]
            if follow and effective_suit(card, trump) != led:
                raise IllegalAction(
                    f"must follow suit (GE-09): {SUIT_NAMES[led]} led with {SUIT_NAMES[trump]} trump"
                    f"{self._bower_note(card, led, trump)}, hand holds {' '.join(card_names(follow))}"
                )
        return card

    @staticmethod
    def _bower_note(card: int, led: int, trump: int) -> str:
        """Explain the left bower where it is the likely cause of the renege (GE-03)."""
        left = JACK * 4 + same_colour(trump)
        trump_name = SUIT_NAMES[trump][:-1]
        if card == left:
            return f" ({CARD_STR[left]} is the left bower, a {trump_name})"
        if led in (trump, same_colour(trump)):
            return f" ({CARD_STR[left]} counts as a {trump_name})"
        return ""

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
        self._decks.append(Deal(dealer, tuple(deck)))
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
        self._emit(DealStarted(deal=self.deal_number, dealer=dealer, active=list(range(N_PLAYERS)), tiebreak=self._tiebreak))
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
        wire = _wire_bid(value) if value else None
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
        self._emit(TrumpNamed(seat=seat, contract=_wire_bid(self._high), suit=SUITS[suit]))  # type: ignore[arg-type]
        self._phase = "trick"
        self._trick_no = 1
        self._leader = seat
        self._to_act = seat

    # ------------------------------------------------------------ tricks

    def _do_play(self, seat: int, card: int) -> None:
        trump = self._trump
        assert trump is not None
        hand = self._hands[seat]
        if self._trick:
            led = effective_suit(self._trick[0][1], trump)
            if effective_suit(card, trump) != led and any(effective_suit(c, trump) == led for c in hand):
                self._reneges.append((seat, self._trick_no, card, led))  # only reachable under `penalize`
        hand.remove(card)
        self._trick.append((seat, card))
        self._played.append(card)
        self._emit(CardPlayed(seat=seat, card=CARD_STR[card], trick=self._trick_no))
        if len(self._trick) < N_PLAYERS:
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
                Reneged(seat=seat, trick=trick, card=CARD_STR[card], led_suit=SUITS[led], penalty=r.renege_penalty)  # type: ignore[arg-type]
            )
            self._add(seat, -r.renege_penalty, "renege")
        self._emit(
            HandScored(
                deal=self.deal_number,
                declarer=declarer,
                contract=_wire_bid(bid),
                trump=SUITS[trump],  # type: ignore[arg-type]
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
