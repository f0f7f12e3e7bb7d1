"""Swedish Chicago positions: describe a live state, check a position, rebuild it.

The checks say what cannot be (a card twice, a hand of the wrong size, a turn
out of order, a trick that breaks follow-suit with the hand shown), and the
rebuild derives what the position does not store twice (the exchange round,
whose turn it is, trick winners, the records a view shows).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from protocol.chicago import ChicagoRules, ExchangeRecord, StockReshuffled, TrickRecord
from protocol.common import DealStarted, PlayedCard
from referee.games.base import Deal
from referee.games.cards import CARD_INT, CARD_STR, SUIT_NAMES, card_strs
from referee.games.chicago import ChicagoState
from referee.games.chicago_moves import HAND_SIZE, TRICKS
from referee.games.position import ChicagoPosition, PositionError, chicago_stream

PHASES = ("exchange", "take_open", "chicago_call", "trick")
DEFAULT_STREAM = (52,)


def _ints(cards: Sequence[str]) -> list[int]:
    return [CARD_INT[c] for c in cards]


def describe_chicago(st: ChicagoState) -> ChicagoPosition:
    """The position of a live Chicago state, checked to rebuild its random stream."""
    stream = _stream_of(st)
    return ChicagoPosition(
        n_players=st.n_players,
        dealer=st._dealer,
        hands=tuple(card_strs(h) for h in st._hands),
        stock=card_strs(st._stock[::-1]),
        scores=tuple(st._scores),
        deal=st.deal_number,
        seed=st.seed,
        stream=None if stream == DEFAULT_STREAM else stream,
        tied=tuple(st._tied) if st._tied is not None else None,
        discards=card_strs(st._discards),
        phase=st._phase,
        to_act=st._to_act,
        exchanged=tuple(r.count for r in st._rec_exchanges),
        open_card=CARD_STR[st._open] if st._open is not None else None,
        showdowns=tuple(st._rec_showdowns),
        revealed=tuple(st._rec_reveals),
        scored_hands=tuple(card_strs(sorted(st._scored_hands.get(s, ()))) for s in range(st.n_players)),
        declarer=st._declarer,
        tricks=tuple(tuple(p.card for p in rec.cards) for rec in st._rec_tricks),
        trick=card_strs([c for _, c in st._trick]),
        start_hands=_start_hands_shown(st),
    )


def _stream_of(st: ChicagoState) -> tuple[int, ...]:
    """The shuffle lengths behind this deal's random stream, checked against the state's."""
    reshuffles: list[int] = []
    for _, event in reversed(st.events):
        if isinstance(event, DealStarted):
            # A deal dealt by the engine: its deck's shuffle, then the reshuffles seen.
            stream = (() if st._explicit_used else DEFAULT_STREAM) + tuple(reshuffles)
            break
        if isinstance(event, StockReshuffled):
            reshuffles.insert(0, event.stock_size)
    else:  # still the deal the state was built in from a position
        stream = st._position_stream + tuple(reshuffles)
    if chicago_stream(st.seed, st.deal_number, stream).getstate() != st._rng.getstate():
        raise PositionError("this state's random stream cannot be described (its history is not this game's)")
    return stream


def _start_hands_shown(st: ChicagoState) -> tuple[tuple[str, ...], ...] | None:
    """The hands when trick play began, or None where they are what a position
    assumes anyway: each hand with the cards its seat has played put back."""
    if st._phase != "trick":
        return None
    played = _played_by(
        st.n_players, [(p.seat, CARD_INT[p.card]) for rec in st._rec_tricks for p in rec.cards] + st._trick
    )
    start = tuple(card_strs(h) for h in st._start_hands)
    if start == tuple(card_strs(h + played[s]) for s, h in enumerate(st._hands)):
        return None
    return start


def _played_by(n: int, plays: Sequence[tuple[int, int]]) -> list[list[int]]:
    out: list[list[int]] = [[] for _ in range(n)]
    for seat, card in plays:
        out[seat].append(card)
    return out


def _check_cards(p: ChicagoPosition, active: list[int]) -> None:
    """Every card of the pack once: in a hand, the stock, the discards, the open card or a trick."""
    places: list[tuple[str, Sequence[str]]] = [(f"hands[{s}]", h) for s, h in enumerate(p.hands)]
    places += [("stock", p.stock), ("discards", p.discards), ("open_card", [p.open_card] if p.open_card else [])]
    places += [(f"tricks[{i}]", t) for i, t in enumerate(p.tricks)] + [("trick", p.trick)]
    seen: dict[str, str] = {}
    for where, cards in places:
        for c in cards:
            if c in seen:
                raise PositionError(f"card {c} is in two places: {seen[c]} and {where}")
            seen[c] = where
    if len(seen) != 52:
        missing = " ".join(c for c in CARD_STR if c not in seen)
        raise PositionError(f"the cards add up to {len(seen)}, not the 52 of the pack; missing: {missing}")
    for s, h in enumerate(p.hands):
        if s not in active and h:
            raise PositionError(f"hands[{s}]: seat {s} sits out this tie-break deal and holds no cards")


def build_chicago(p: ChicagoPosition, rules: ChicagoRules, deals: Sequence[Deal]) -> ChicagoState:
    """Check `p` under `rules` and build the state it describes."""
    active = _check_table(p, rules)
    _check_scores(p, rules)
    if p.phase not in PHASES:
        raise PositionError(f"phase: {p.phase!r} is not one of {', '.join(PHASES)}")
    _check_cards(p, active)
    n, k = p.n_players, len(active)
    order = _deal_order(p.dealer, active)
    turn, rnd = _exchange_progress(p, rules, k)
    _check_showdowns(p, rules, rnd, active)
    _check_trick_fields(p)
    expected, callers = _turn_before_tricks(p, rules, order, turn)
    _check_declarer(p, rules, active)
    tricks = _replay_tricks(p, rules, active, order)
    in_tricks = p.phase == "trick"
    if in_tricks:
        expected = active[(active.index(tricks.leader) + len(tricks.current)) % k]
    if p.to_act is not None and p.to_act != expected:
        raise PositionError(
            f"to_act: it is seat {expected}'s turn ({p.phase.replace('_', ' ')}), not seat {p.to_act}'s"
        )
    hands = [_ints(h) for h in p.hands]
    played = _played_by(n, tricks.plays)
    _check_hand_sizes(p, hands, played, active, expected)
    _check_follow_suit(p, tricks.plays, hands, k)
    start_hands = _start_hands(p, hands, played)
    scored = _scored_hands(p)
    stream = _checked_stream(p)

    fields = dict(
        _rng=chicago_stream(p.seed, p.deal, stream),
        _explicit_used=stream[:1] != DEFAULT_STREAM,
        _position_stream=tuple(stream),
        _scores=list(p.scores),
        _hands=hands,
        _tied=list(p.tied) if p.tied is not None else None,
        deal_number=p.deal,
        _active=active,
        _dealer=p.dealer,
        _order=order,
        _stock=_ints(p.stock)[::-1],
        _discards=_ints(p.discards),
        _round=rnd,
        _turn=turn,
        _open=CARD_INT[p.open_card] if p.open_card is not None else None,
        _pending_discards=_ints(p.discards[-1:]) if p.phase == "take_open" else [],
        _scored_hands=scored,
        _declarer=p.declarer,
        _trick=tricks.current,
        _trick_no=len(p.tricks) + 1 if in_tricks else 0,
        _leader=tricks.leader if in_tricks else None,
        _tricks_won=tricks.won,
        _start_hands=start_hands,
        _rec_exchanges=[
            ExchangeRecord(seat=order[i % k], round=i // k + 1, count=c) for i, c in enumerate(p.exchanged)
        ],
        _rec_showdowns=list(p.showdowns),
        _rec_reveals=list(p.revealed),
        _rec_tricks=tricks.records,
        _trick_cards=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in tricks.current],
        _phase=p.phase,
        _to_act=expected,
        _callers=callers,
    )
    return ChicagoState.restored(rules, n, p.seed, deals, fields)


def _check_table(p: ChicagoPosition, rules: ChicagoRules) -> list[int]:
    """The rules, the seats, the deal number, the tie-break and the dealer; the seats of this deal."""
    if not isinstance(rules, ChicagoRules):
        raise PositionError(f"a Chicago position needs Chicago rules, not {type(rules).__name__}")
    n = p.n_players
    if not 2 <= n <= 4:
        raise PositionError(f"n_players: Swedish Chicago is for 2-4 players, not {n}")
    for name in ("hands", "scores"):
        if len(getattr(p, name)) != n:
            raise PositionError(f"{name}: give one entry per seat ({n}), not {len(getattr(p, name))}")
    if not 1 <= p.deal <= rules.max_deals:
        raise PositionError(f"deal: {p.deal} is not a deal of this game (1-{rules.max_deals})")
    active = list(range(n))
    if p.tied is not None:
        if len(p.tied) < 2 or list(p.tied) != sorted(set(p.tied)) or not set(p.tied) <= set(active):
            raise PositionError(f"tied: {list(p.tied)} must be two or more seats of 0-{n - 1}, in order")
        active = list(p.tied)
    if p.dealer not in active:
        raise PositionError(f"dealer: {p.dealer} is not a seat of this deal (seats {active})")
    return active


def _check_scores(p: ChicagoPosition, rules: ChicagoRules) -> None:
    """No score below the floor, and none at the target where reaching it ends the game at once."""
    floor = rules.score_floor
    for s, score in enumerate(p.scores):
        if floor is not None and score < floor:
            raise PositionError(f"scores: seat {s} has {score}, below the score floor {floor}")
    if rules.win_check == "immediate" and p.tied is None and max(p.scores) >= rules.target_score:
        s = p.scores.index(max(p.scores))
        raise PositionError(
            f"scores: seat {s} has {p.scores[s]} >= target {rules.target_score}: the game would be over"
        )


def _deal_order(dealer: int, active: list[int]) -> list[int]:
    """The seats of the deal in turn order: eldest first, the dealer last."""
    order, s = [], dealer
    for _ in active:
        s = active[(active.index(s) + 1) % len(active)]
        order.append(s)
    return order


def _exchange_progress(p: ChicagoPosition, rules: ChicagoRules, k: int) -> tuple[int, int]:
    """(turn, round) of the exchanges, from the counts exchanged so far and the phase."""
    exchanged = p.exchanged
    turns = rules.exchanges * k
    if any(not isinstance(c, int) or not 0 <= c <= HAND_SIZE for c in exchanged):
        raise PositionError(f"exchanged: counts are 0-{HAND_SIZE}, not {list(exchanged)}")
    if p.phase == "exchange":
        if len(exchanged) >= turns:
            raise PositionError(f"exchanged: all {turns} exchanges are done, so the phase cannot be exchange")
        turn, rnd = len(exchanged) % k, len(exchanged) // k
    elif p.phase == "take_open":
        if not rules.one_open:
            raise PositionError("phase: take_open needs the one_open rule")
        if not exchanged or exchanged[-1] != 1 or len(exchanged) > turns:
            raise PositionError("exchanged: take_open follows an exchange of exactly one card")
        turn, rnd = (len(exchanged) - 1) % k, (len(exchanged) - 1) // k
    else:
        if len(exchanged) != turns:
            raise PositionError(f"exchanged: {p.phase} comes after all {turns} exchanges, not {len(exchanged)}")
        turn, rnd = 0, rules.exchanges
    if (p.open_card is not None) != (p.phase == "take_open"):
        raise PositionError("open_card: there is an open card exactly when the phase is take_open")
    if p.phase == "take_open" and not p.discards:
        raise PositionError("discards: take_open follows a discard, so the discards cannot be empty")
    return turn, rnd


def _check_showdowns(p: ChicagoPosition, rules: ChicagoRules, rnd: int, active: list[int]) -> None:
    """The showdowns held after the rounds that have one (or none given), and whole hands revealed."""
    rounds_shown = [i + 1 for i in range(rnd) if rules.showdown_after[i]]
    if p.showdowns and [r.round for r in p.showdowns] != rounds_shown:  # none given: a puzzle may leave them out
        raise PositionError(
            f"showdowns: this deal has had showdowns after rounds {rounds_shown}, not {[r.round for r in p.showdowns]}"
        )
    for r in p.revealed:
        if r.seat not in active or len(r.cards) != HAND_SIZE:
            raise PositionError(
                f"revealed: seat {r.seat} shows {len(r.cards)} cards; a reveal is a hand of 5 of a seat in the deal"
            )


def _check_trick_fields(p: ChicagoPosition) -> None:
    if p.phase != "trick" and (p.tricks or p.trick or p.declarer is not None or p.start_hands is not None):
        raise PositionError(f"tricks, trick, declarer and start_hands belong to trick play, not to {p.phase}")


def _may_call(rules: ChicagoRules, p: ChicagoPosition, seat: int) -> bool:
    return rules.chicago_enabled and p.scores[seat] >= rules.chicago_min_score


def _turn_before_tricks(
    p: ChicagoPosition, rules: ChicagoRules, order: list[int], turn: int
) -> tuple[int | None, list[int]]:
    """Whose turn it is before trick play (None in trick play), and the seats
    still to say whether they call Chicago, the one to act first."""
    if p.phase == "exchange" or p.phase == "take_open":
        return order[turn], []
    if p.phase != "chicago_call":
        return None, []
    callers = [s for s in order if _may_call(rules, p, s)]
    expected = p.to_act if p.to_act is not None else (callers[0] if callers else -1)
    if expected not in callers:
        raise PositionError(f"to_act: seat {expected} may not call Chicago (seats that may: {callers})")
    return expected, callers[callers.index(expected) :]


def _check_declarer(p: ChicagoPosition, rules: ChicagoRules, active: list[int]) -> None:
    if p.declarer is not None and (p.declarer not in active or not _may_call(rules, p, p.declarer)):
        raise PositionError(
            f"declarer: seat {p.declarer} may not have called Chicago (needs score >= "
            f"{rules.chicago_min_score} and Chicago enabled)"
        )


class _Tricks(NamedTuple):
    """Trick play so far, replayed: every (seat, card) in order, the tricks
    taken, the one on the table and who leads it."""

    plays: list[tuple[int, int]]
    records: list[TrickRecord]
    won: list[int]
    current: list[tuple[int, int]]
    leader: int


def _replay_tricks(p: ChicagoPosition, rules: ChicagoRules, active: list[int], order: list[int]) -> _Tricks:
    """Who played each card and who took each trick; a called Chicago must have taken them all."""
    k = len(active)
    leader = p.declarer if p.declarer is not None and rules.chicago_leader == "declarer" else order[0]
    plays: list[tuple[int, int]] = []
    records: list[TrickRecord] = []
    won = [0] * p.n_players
    if len(p.tricks) >= TRICKS:
        raise PositionError(f"tricks: a deal has {TRICKS} tricks; after {len(p.tricks)} it is over")
    for i, cards in enumerate(p.tricks):
        if len(cards) != k:
            raise PositionError(f"tricks[{i}]: {len(cards)} cards in a trick of {k} seats")
        trick = _seated(cards, leader, active)
        plays += trick
        led = trick[0][1] & 3
        winner, _ = max((x for x in trick if x[1] & 3 == led), key=lambda x: x[1] >> 2)
        won[winner] += 1
        records.append(
            TrickRecord(
                number=i + 1,
                leader=leader,
                cards=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in trick],
                winner=winner,
            )
        )
        if p.declarer is not None and winner != p.declarer:
            raise PositionError(
                f"tricks[{i}]: seat {winner} won it, so the Chicago of seat {p.declarer} failed "
                "and the deal would be over"
            )
        leader = winner
    if len(p.trick) >= k:
        raise PositionError(f"trick: {len(p.trick)} cards in a trick of {k} seats")
    current = _seated(p.trick, leader, active)
    return _Tricks(plays + current, records, won, current, leader)


def _seated(cards: Sequence[str], leader: int, active: list[int]) -> list[tuple[int, int]]:
    """(seat, card) of a trick's cards, played in turn from `leader`."""
    k = len(active)
    return [(active[(active.index(leader) + j) % k], card) for j, card in enumerate(_ints(cards))]


def _check_hand_sizes(
    p: ChicagoPosition, hands: list[list[int]], played: list[list[int]], active: list[int], expected: int | None
) -> None:
    """Five cards a seat, less those played, less the discard of a seat offered the open card."""
    for s in active:
        want = HAND_SIZE - len(played[s]) - (1 if p.phase == "take_open" and s == expected else 0)
        if len(hands[s]) != want:
            raise PositionError(
                f"hands[{s}]: seat {s} holds {want} cards now ({p.phase.replace('_', ' ')}), not {len(hands[s])}"
            )


def _check_follow_suit(p: ChicagoPosition, plays: list[tuple[int, int]], hands: list[list[int]], k: int) -> None:
    """No card off the led suit while its seat held that suit, then or later (CH-15)."""
    for i, (seat, card) in enumerate(plays):
        trick_start = i - (i % k)
        led = plays[trick_start][1] & 3
        if card & 3 == led:
            continue
        later = [c for s, c in plays[i + 1 :] if s == seat] + hands[seat]
        held = [CARD_STR[c] for c in later if c & 3 == led]
        if held:
            where = f"tricks[{i // k}]" if i // k < len(p.tricks) else "trick"
            raise PositionError(
                f"{where}: seat {seat} played {CARD_STR[card]} on a {SUIT_NAMES[led]} lead while "
                f"holding {' '.join(held)} (must follow suit, CH-15)"
            )


def _start_hands(p: ChicagoPosition, hands: list[list[int]], played: list[list[int]]) -> list[list[int]]:
    """The hands when trick play began: given, or each hand with its seat's played cards put back."""
    if p.phase != "trick":
        return []
    if p.start_hands is None:
        return [hands[s] + played[s] for s in range(p.n_players)]
    start_hands = [_ints(h) for h in p.start_hands]
    for s in range(p.n_players):
        kept = [c for c in start_hands[s] if c not in played[s]]
        if kept != hands[s] or Counter(start_hands[s]) != Counter(hands[s] + played[s]):
            raise PositionError(f"start_hands[{s}]: must be hands[{s}] with the cards seat {s} played put back")
    return start_hands


def _scored_hands(p: ChicagoPosition) -> dict[int, frozenset[int]]:
    """Per seat the hand that last scored at a showdown this deal (none: not there)."""
    scored: dict[int, frozenset[int]] = {}
    if p.scored_hands:
        if len(p.scored_hands) != p.n_players:
            raise PositionError(f"scored_hands: give one entry per seat ({p.n_players}), not {len(p.scored_hands)}")
        for s, h in enumerate(p.scored_hands):
            if h and len(h) != HAND_SIZE:
                raise PositionError(f"scored_hands[{s}]: a scoring hand has {HAND_SIZE} cards, not {len(h)}")
            if h:
                scored[s] = frozenset(_ints(h))
    return scored


def _checked_stream(p: ChicagoPosition) -> tuple[int, ...]:
    stream = DEFAULT_STREAM if p.stream is None else p.stream
    if any(not isinstance(x, int) or not 1 <= x <= 52 for x in stream):
        raise PositionError(f"stream: shuffle lengths are 1-52, not {list(stream)}")
    return stream
