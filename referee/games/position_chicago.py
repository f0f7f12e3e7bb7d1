"""Swedish Chicago positions: describe a live state, check a position, rebuild it.

The checks say what cannot be (a card twice, a hand of the wrong size, a turn
out of order, a trick that breaks follow-suit with the hand shown), and the
rebuild derives what the position does not store twice (the exchange round,
whose turn it is, trick winners, the records a view shows).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from protocol.chicago import ChicagoRules, ExchangeRecord, StockReshuffled, TrickRecord
from protocol.common import DealStarted, PlayedCard
from referee.games.base import Deal
from referee.games.cards import CARD_INT, CARD_STR, SUIT_NAMES, card_strs
from referee.games.chicago import HAND_SIZE, TRICKS, ChicagoState
from referee.games.position import ChicagoPosition, PositionError, chicago_stream

PHASES = ("exchange", "take_open", "chicago_call", "trick")
DEFAULT_STREAM = (52,)


def _ints(cards: Sequence[str]) -> list[int]:
    return [CARD_INT[c] for c in cards]


def describe_chicago(st: ChicagoState) -> ChicagoPosition:
    """The position of a live Chicago state, checked to rebuild its random stream."""
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
    in_tricks = st._phase == "trick"
    played = _played_by(st.n_players, [(s, c) for rec in st._rec_tricks for s, c in
                                       ((p.seat, CARD_INT[p.card]) for p in rec.cards)] + st._trick)
    start = None
    if in_tricks:
        start = tuple(card_strs(h) for h in st._start_hands)
        if start == tuple(card_strs(h + played[s]) for s, h in enumerate(st._hands)):
            start = None
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
        start_hands=start,
    )


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
    floor = rules.score_floor
    for s, score in enumerate(p.scores):
        if floor is not None and score < floor:
            raise PositionError(f"scores: seat {s} has {score}, below the score floor {floor}")
    if rules.win_check == "immediate" and p.tied is None and max(p.scores) >= rules.target_score:
        s = p.scores.index(max(p.scores))
        raise PositionError(f"scores: seat {s} has {p.scores[s]} >= target {rules.target_score}: the game would be over")
    if p.phase not in PHASES:
        raise PositionError(f"phase: {p.phase!r} is not one of {', '.join(PHASES)}")
    _check_cards(p, active)

    k = len(active)
    order, s = [], p.dealer
    for _ in active:
        s = active[(active.index(s) + 1) % k]
        order.append(s)
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
    rounds_shown = [i + 1 for i in range(rnd) if rules.showdown_after[i]]
    if p.showdowns and [r.round for r in p.showdowns] != rounds_shown:  # none given: a puzzle may leave them out
        raise PositionError(f"showdowns: this deal has had showdowns after rounds {rounds_shown}, "
                            f"not {[r.round for r in p.showdowns]}")
    for r in p.revealed:
        if r.seat not in active or len(r.cards) != HAND_SIZE:
            raise PositionError(f"revealed: seat {r.seat} shows {len(r.cards)} cards; a reveal is a hand of 5 of a seat in the deal")

    def eligible(seat: int) -> bool:
        return rules.chicago_enabled and p.scores[seat] >= rules.chicago_min_score

    in_tricks = p.phase == "trick"
    if not in_tricks and (p.tricks or p.trick or p.declarer is not None or p.start_hands is not None):
        raise PositionError(f"tricks, trick, declarer and start_hands belong to trick play, not to {p.phase}")
    callers: list[int] = []
    if p.phase == "exchange" or p.phase == "take_open":
        expected = order[turn]
    elif p.phase == "chicago_call":
        callers = [s for s in order if eligible(s)]
        expected = p.to_act if p.to_act is not None else (callers[0] if callers else -1)
        if expected not in callers:
            raise PositionError(f"to_act: seat {expected} may not call Chicago (seats that may: {callers})")
        callers = callers[callers.index(expected):]
    if p.declarer is not None and (p.declarer not in active or not eligible(p.declarer)):
        raise PositionError(f"declarer: seat {p.declarer} may not have called Chicago (needs score >= "
                            f"{rules.chicago_min_score} and Chicago enabled)")

    leader = p.declarer if p.declarer is not None and rules.chicago_leader == "declarer" else order[0]
    plays: list[tuple[int, int]] = []
    records: list[TrickRecord] = []
    tricks_won = [0] * n
    if len(p.tricks) >= TRICKS:
        raise PositionError(f"tricks: a deal has {TRICKS} tricks; after {len(p.tricks)} it is over")
    all_tricks = list(p.tricks) + [p.trick]
    current: list[tuple[int, int]] = []
    for i, cards in enumerate(all_tricks):
        last = i == len(p.tricks)
        if (len(cards) >= k) if last else (len(cards) != k):
            raise PositionError(f"{'trick' if last else f'tricks[{i}]'}: {len(cards)} cards in a trick of {k} seats")
        seats = [active[(active.index(leader) + j) % k] for j in range(len(cards))]
        trick = list(zip(seats, _ints(cards)))
        plays += trick
        if last:
            current = trick
            break
        led = trick[0][1] & 3
        winner, _ = max((x for x in trick if x[1] & 3 == led), key=lambda x: x[1] >> 2)
        tricks_won[winner] += 1
        records.append(TrickRecord(number=i + 1, leader=leader,
                                   cards=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in trick], winner=winner))
        if p.declarer is not None and winner != p.declarer:
            raise PositionError(f"tricks[{i}]: seat {winner} won it, so the Chicago of seat {p.declarer} failed "
                                "and the deal would be over")
        leader = winner
    if in_tricks:
        expected = active[(active.index(leader) + len(current)) % k]
    if p.to_act is not None and p.to_act != expected:
        raise PositionError(f"to_act: it is seat {expected}'s turn ({p.phase.replace('_', ' ')}), not seat {p.to_act}'s")

    hands = [_ints(h) for h in p.hands]
    played = _played_by(n, plays)
    for s in active:
        want = HAND_SIZE - len(played[s]) - (1 if p.phase == "take_open" and s == expected else 0)
        if len(hands[s]) != want:
            raise PositionError(f"hands[{s}]: seat {s} holds {want} cards now ({p.phase.replace('_', ' ')}), "
                                f"not {len(hands[s])}")
    for i, (seat, card) in enumerate(plays):
        trick_start = i - (i % k)
        led = plays[trick_start][1] & 3
        if card & 3 == led:
            continue
        later = [c for s, c in plays[i + 1:] if s == seat] + hands[seat]
        held = [CARD_STR[c] for c in later if c & 3 == led]
        if held:
            where = f"tricks[{i // k}]" if i // k < len(p.tricks) else "trick"
            raise PositionError(f"{where}: seat {seat} played {CARD_STR[card]} on a {SUIT_NAMES[led]} lead while "
                                f"holding {' '.join(held)} (must follow suit, CH-15)")
    start_hands: list[list[int]] = []
    if in_tricks:
        if p.start_hands is None:
            start_hands = [hands[s] + played[s] for s in range(n)]
        else:
            start_hands = [_ints(h) for h in p.start_hands]
            for s in range(n):
                kept = [c for c in start_hands[s] if c not in played[s]]
                if kept != hands[s] or Counter(start_hands[s]) != Counter(hands[s] + played[s]):
                    raise PositionError(f"start_hands[{s}]: must be hands[{s}] with the cards seat {s} played put back")
    scored: dict[int, frozenset[int]] = {}
    if p.scored_hands:
        if len(p.scored_hands) != n:
            raise PositionError(f"scored_hands: give one entry per seat ({n}), not {len(p.scored_hands)}")
        for s, h in enumerate(p.scored_hands):
            if h and len(h) != HAND_SIZE:
                raise PositionError(f"scored_hands[{s}]: a scoring hand has {HAND_SIZE} cards, not {len(h)}")
            if h:
                scored[s] = frozenset(_ints(h))
    stream = DEFAULT_STREAM if p.stream is None else p.stream
    if any(not isinstance(x, int) or not 1 <= x <= 52 for x in stream):
        raise PositionError(f"stream: shuffle lengths are 1-52, not {list(stream)}")

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
        _trick=current,
        _trick_no=len(p.tricks) + 1 if in_tricks else 0,
        _leader=leader if in_tricks else None,
        _tricks_won=tricks_won,
        _start_hands=start_hands,
        _rec_exchanges=[ExchangeRecord(seat=order[i % k], round=i // k + 1, count=c) for i, c in enumerate(exchanged)],
        _rec_showdowns=list(p.showdowns),
        _rec_reveals=list(p.revealed),
        _rec_tricks=records,
        _trick_cards=[PlayedCard(seat=s, card=CARD_STR[c]) for s, c in current],
        _phase=p.phase,
        _to_act=expected,
        _callers=callers,
    )
    return ChicagoState.restored(rules, n, p.seed, deals, fields)
