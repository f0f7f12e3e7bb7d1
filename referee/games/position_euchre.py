"""Ghost Hand Euchre positions: describe a live state, check a position, rebuild it.

Whose turn it is, the high bid, the declarer, trick winners and reneges all
follow from the bids and the tricks, so they are derived and checked here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from protocol.common import PlayedCard
from protocol.euchre import BidRecord, EuchreRules, EuchreTrickRecord
from referee.games.base import Deal
from referee.games.cards import CARD_INT, CARD_STR, SUIT_NAMES, SUITS, card_strs
from referee.games.euchre_moves import wire_bid
from referee.games.ghost_euchre import (
    EUCHRE_DECK,
    HAND_SIZE,
    MOON,
    N_PLAYERS,
    TRICKS,
    GhostEuchreState,
    effective_suit,
    trick_winner,
)
from referee.games.position import (
    EuchrePosition,
    PositionError,
    default_euchre_stream,
    euchre_stream,
)

PHASES = ("bidding", "name_trump", "trick")
EUCHRE_CARDS = frozenset(CARD_STR[c] for c in EUCHRE_DECK)


def _ints(cards: Sequence[str]) -> list[int]:
    return [CARD_INT[c] for c in cards]


def _stream_of(st: GhostEuchreState) -> tuple[int, ...]:
    """The draws behind the state's random stream: the seeded default, or the
    fewer draws a game with explicit deals made."""
    target = st._rng.getstate()
    candidates = [default_euchre_stream(st.deal_number)]
    candidates += [(3,) * d + (24,) * k for d in (1, 0) for k in range(st.deal_number, -1, -1)]
    for stream in candidates:
        if euchre_stream(st.seed, stream).getstate() == target:
            return stream
    raise PositionError("this state's random stream cannot be described (its history is not this game's)")


def describe_euchre(st: GhostEuchreState) -> EuchrePosition:
    """The position of a live Ghost Hand Euchre state."""
    stream = _stream_of(st)
    return EuchrePosition(
        dealer=st._dealer,
        hands=tuple(card_strs(h) for h in st._hands),
        scores=tuple(st._scores),
        deal=st.deal_number,
        seed=st.seed,
        stream=None if stream == default_euchre_stream(st.deal_number) else stream,
        tiebreak=st._tiebreak,
        ghost=card_strs(st._ghost),
        dead=card_strs(st._dead),
        swapped_by=st._swapped_by,
        phase=st._phase,
        to_act=st._to_act,
        bids=tuple(b.bid for b in st._bids),
        trump=SUITS[st._trump] if st._trump is not None else None,
        tricks=tuple(tuple(p.card for p in rec.cards) for rec in st._rec_tricks),
        trick=card_strs([c for _, c in st._trick]),
    )


def _bid_value(bid: object, where: str) -> int:
    if bid is None:
        return 0
    if bid == "moon":
        return MOON
    if isinstance(bid, int) and not isinstance(bid, bool) and 1 <= bid <= 5:
        return bid
    raise PositionError(f"{where}: {bid!r} is not a bid (1-5, 'moon', or None for a pass)")


def _check_cards(p: EuchrePosition) -> None:
    places = [(f"hands[{s}]", h) for s, h in enumerate(p.hands)] + [("ghost", p.ghost), ("dead", p.dead)]
    places += [(f"tricks[{i}]", t) for i, t in enumerate(p.tricks)] + [("trick", p.trick)]
    seen: dict[str, str] = {}
    for where, cards in places:
        for c in cards:
            if c not in EUCHRE_CARDS:
                raise PositionError(f"{where}: {c} is not in the 24-card pack (nines to aces)")
            if c in seen:
                raise PositionError(f"card {c} is in two places: {seen[c]} and {where}")
            seen[c] = where
    if len(seen) != len(EUCHRE_DECK):
        missing = " ".join(c for c in card_strs(EUCHRE_DECK) if c not in seen)
        raise PositionError(f"the cards add up to {len(seen)}, not the 24 of the pack; missing: {missing}")


def build_euchre(p: EuchrePosition, rules: EuchreRules, deals: Sequence[Deal]) -> GhostEuchreState:
    """Check `p` under `rules` and build the state it describes."""
    _check_table(p, rules)
    _check_cards(p)
    eldest = (p.dealer + 1) % N_PLAYERS
    order = [eldest, (eldest + 1) % N_PLAYERS, p.dealer]
    bids = _read_bids(p, rules, order)
    expected = _bidder_to_act(p, order, bids.high_seat)
    _check_trump(p)
    _check_ghost(p, order)
    trump = SUITS.index(p.trump) if p.trump is not None else None
    hands = [_ints(h) for h in p.hands]
    tricks = _replay_tricks(p, trump, bids.high_seat)
    if trump is not None:
        assert tricks.leader is not None
        expected = (tricks.leader + len(tricks.current)) % N_PLAYERS
    if p.to_act is not None and p.to_act != expected:
        raise PositionError(
            f"to_act: it is seat {expected}'s turn ({p.phase.replace('_', ' ')}), not seat {p.to_act}'s"
        )
    _check_hand_sizes(hands, tricks.plays)
    reneges = _reneges(p, rules, tricks.plays, hands, trump)
    stream = default_euchre_stream(p.deal) if p.stream is None else p.stream

    fields = dict(
        _rng=euchre_stream(p.seed, stream),
        _scores=list(p.scores),
        _tiebreak=bool(p.tiebreak),
        deal_number=p.deal,
        _dealer=p.dealer,
        _order=order,
        _hands=hands,
        _ghost=_ints(p.ghost),
        _dead=_ints(p.dead),
        _swapped_by=p.swapped_by,
        _bids=bids.records,
        _high=bids.high,
        _high_seat=bids.high_seat,
        _declarer=bids.high_seat if p.phase != "bidding" else None,
        _trump=trump,
        _trick=tricks.current,
        _played=[c for _, c in tricks.plays],
        _trick_no=len(p.tricks) + 1 if p.phase == "trick" else 0,
        _leader=tricks.leader if p.phase == "trick" else None,
        _tricks_won=tricks.won,
        _rec_tricks=tricks.records,
        _reneges=reneges,
        _turn=len(p.bids),
        _phase=p.phase,
        _to_act=expected,
    )
    return GhostEuchreState.restored(rules, p.seed, deals, fields)


def _check_table(p: EuchrePosition, rules: EuchreRules) -> None:
    """The rules, one hand and one score a seat, the dealer, the deal number and the phase."""
    if not isinstance(rules, EuchreRules):
        raise PositionError(f"a Ghost Hand Euchre position needs its rules, not {type(rules).__name__}")
    for name in ("hands", "scores"):
        if len(getattr(p, name)) != N_PLAYERS:
            raise PositionError(f"{name}: give one entry per seat (3), not {len(getattr(p, name))}")
    if p.dealer not in range(N_PLAYERS):
        raise PositionError(f"dealer: {p.dealer} is not a seat (0-2)")
    if not 1 <= p.deal <= rules.max_hands:
        raise PositionError(f"deal: {p.deal} is not a hand of this game (1-{rules.max_hands})")
    if p.phase not in PHASES:
        raise PositionError(f"phase: {p.phase!r} is not one of {', '.join(PHASES)}")


class _Bids(NamedTuple):
    high: int  # 0: no bid yet; MOON = 6
    high_seat: int | None
    records: list[BidRecord]


def _read_bids(p: EuchrePosition, rules: EuchreRules, order: list[int]) -> _Bids:
    """This hand's bids in turn order, each a bid or a pass, each bid above the last (GE-05)."""
    if len(p.bids) > N_PLAYERS:
        raise PositionError(f"bids: each seat bids once a hand; {len(p.bids)} bids is too many")
    high, high_seat, high_bid = 0, None, None
    records = []
    for i, bid in enumerate(p.bids):
        value = _bid_value(bid, f"bids[{i}]")
        if value and value < rules.min_bid:
            raise PositionError(f"bids[{i}]: {bid} is below the minimum bid {rules.min_bid}")
        if value and value <= high:
            raise PositionError(f"bids[{i}]: {bid} does not beat the high bid {high_bid}")
        if value:
            high, high_seat, high_bid = value, order[i], bid
        records.append(BidRecord(seat=order[i], bid=wire_bid(value) if value else None))
    return _Bids(high, high_seat, records)


def _bidder_to_act(p: EuchrePosition, order: list[int], high_seat: int | None) -> int:
    """Whose turn it is once the bids are read: the next bidder, or the
    declarer who names trump (trick play works its own out later)."""
    if p.phase == "bidding":
        if len(p.bids) == N_PLAYERS:
            raise PositionError("bids: all three seats have bid, so the phase cannot be bidding")
        return order[len(p.bids)]
    if len(p.bids) != N_PLAYERS or high_seat is None:
        raise PositionError(f"bids: {p.phase.replace('_', ' ')} follows three bids with at least one not a pass")
    return high_seat


def _check_trump(p: EuchrePosition) -> None:
    if (p.trump is not None) != (p.phase == "trick"):
        raise PositionError("trump: it is named exactly when trick play has begun")
    if p.trump is not None and (not isinstance(p.trump, str) or len(p.trump) != 1 or p.trump not in SUITS):
        raise PositionError(f"trump: {p.trump!r} is not a suit (s h d c)")
    if p.phase != "trick" and (p.tricks or p.trick):
        raise PositionError(f"tricks and trick belong to trick play, not to {p.phase.replace('_', ' ')}")


def _check_ghost(p: EuchrePosition, order: list[int]) -> None:
    """The ghost hand until a seat swaps for it (GE-06), then the dead hand."""
    if p.swapped_by is None:
        if len(p.ghost) != HAND_SIZE or p.dead:
            raise PositionError("ghost, dead: before a swap the ghost holds 6 cards and there is no dead hand")
        return
    if p.swapped_by not in range(N_PLAYERS):
        raise PositionError(f"swapped_by: {p.swapped_by} is not a seat (0-2)")
    if p.ghost or len(p.dead) != HAND_SIZE:
        raise PositionError("ghost, dead: after a swap the ghost is empty and the dead hand holds 6 cards")
    if p.phase == "bidding" and order.index(p.swapped_by) > len(p.bids):
        raise PositionError(f"swapped_by: seat {p.swapped_by} has not had its turn to bid yet")


class _Tricks(NamedTuple):
    """Trick play so far, replayed: every (seat, card) in order, the tricks
    taken, the one on the table and who leads it."""

    plays: list[tuple[int, int]]
    records: list[EuchreTrickRecord]
    won: list[int]
    current: list[tuple[int, int]]
    leader: int | None


def _replay_tricks(p: EuchrePosition, trump: int | None, declarer: int | None) -> _Tricks:
    """Who played each card and who took each trick; the declarer leads the first (GE-08)."""
    plays: list[tuple[int, int]] = []
    records: list[EuchreTrickRecord] = []
    won = [0] * N_PLAYERS
    current: list[tuple[int, int]] = []
    leader = declarer
    if len(p.tricks) >= TRICKS:
        raise PositionError(f"tricks: a hand has {TRICKS} tricks; after {len(p.tricks)} it is over")
    if trump is None:
        return _Tricks(plays, records, won, current, leader)
    assert leader is not None
    for i, cards in enumerate(p.tricks):
        if len(cards) != N_PLAYERS:
            raise PositionError(f"tricks[{i}]: {len(cards)} cards in a trick of 3 seats")
        trick = [((leader + j) % N_PLAYERS, c) for j, c in enumerate(_ints(cards))]
        plays += trick
        winner, _ = trick_winner(trick, trump)
        won[winner] += 1
        records.append(
            EuchreTrickRecord(
                number=i + 1,
                leader=leader,
                cards=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in trick],
                winner=winner,
            )
        )
        leader = winner
    if len(p.trick) >= N_PLAYERS:
        raise PositionError(f"trick: {len(p.trick)} cards in a trick of 3 seats")
    current = [((leader + j) % N_PLAYERS, c) for j, c in enumerate(_ints(p.trick))]
    return _Tricks(plays + current, records, won, current, leader)


def _check_hand_sizes(hands: list[list[int]], plays: list[tuple[int, int]]) -> None:
    for s in range(N_PLAYERS):
        want = HAND_SIZE - sum(1 for seat, _ in plays if seat == s)
        if len(hands[s]) != want:
            raise PositionError(f"hands[{s}]: seat {s} holds {want} cards now, not {len(hands[s])}")


def _reneges(
    p: EuchrePosition, rules: EuchreRules, plays: list[tuple[int, int]], hands: list[list[int]], trump: int | None
) -> list[tuple[int, int, int, int]]:
    """Cards played off the led suit while its seat held that suit, then or
    later (GE-09): illegal under `reject`, kept for the penalty under `penalize`."""
    reneges: list[tuple[int, int, int, int]] = []
    for i, (seat, card) in enumerate(plays):
        assert trump is not None
        led = effective_suit(plays[i - i % N_PLAYERS][1], trump)
        if i % N_PLAYERS == 0 or effective_suit(card, trump) == led:
            continue
        later = [c for s, c in plays[i + 1 :] if s == seat] + hands[seat]
        held = [CARD_STR[c] for c in later if effective_suit(c, trump) == led]
        if held:
            if rules.renege_policy == "reject":
                where = f"tricks[{i // 3}]" if i // 3 < len(p.tricks) else "trick"
                raise PositionError(
                    f"{where}: seat {seat} played {CARD_STR[card]} on a {SUIT_NAMES[led]} lead "
                    f"while holding {' '.join(held)} (must follow suit, GE-09)"
                )
            reneges.append((seat, i // 3 + 1, card, led))
    return reneges
