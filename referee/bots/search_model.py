"""Chicago: another seat's hand, inferred from its whole deal.

Everything the other seat does in a deal says something about its cards:
how many it changed in each round, whether it won each showdown and with
what, the hand it showed when breaking up a scored one, and the cards it
plays. A world drawn only from the cards in play ignores most of that, and
it matters most where the stakes are: a Chicago call fails on the one high
card the other seat kept for the last trick.

So `HistoryModel` plays the other seat's deal forward many times
(`PARTICLES`), as a particle filter does:

* it is dealt five of the cards this seat has never held;
* in each round it keeps cards the way a sensible player keeps that many
  (`keep_of_size`); a count that such a player would not choose for the
  hand makes the particle `UNLIKELY`;
* it draws the rest from the cards still unaccounted for;
* after each showdown only hands that give the announced result survive
  (who won, with which category, a tie, nobody);
* a hand shown when breaking up a scored hand replaces the particle's.

When few particles carry the weight they are resampled. In the trick phase
a particle's last draw, which is uniform given what it kept, is drawn again
to hold the cards the other seat has played and none of a suit it has shown
void in; the particle is weighted by the chance of such a draw. So every
world fits everything seen, and the kept part of the hand carries the
inference.

Where nothing fits (a seat that plays unlike any sensible player),
`PlausibleHands` draws positions filtered only by the last exchange's
count; `world_source` picks between the two. At three and four seats the
model runs for each other seat (a showdown then says the same of all of
them: the winner holds the announced category and nobody holds better),
and `search_table` joins their hands for the Chicago call; the trick
search there deals the others' cards uniformly, as the model's worlds
were worth nothing measurable to it (docs/bots.md).
"""

from __future__ import annotations

import math
import random
from itertools import combinations
from typing import Any

from referee.bots.rollout import chicago_keep
from referee.games.cards import CARD_INT
from referee.games.poker import CATEGORY_CODES, category_code, category_index, evaluate

PARTICLES = 300  # histories of the other seat's deal per decision
UNLIKELY = 0.1  # the weight of a hand with no keep of its exchange's size (a count a sensible player would not choose)
MAX_DRAWS = 30  # sampled positions PlausibleHands tries per world before one is taken as it is
QUEEN = 10
KING = 11
SHOWDOWN_TRIES = 8  # draws tried for a particle to give the announced showdown
FIRST_TRIES = 40  # first-round histories tried per particle
MODELS_KEPT = 8  # built particle sets kept: one per other seat of the deal being played
FEWEST = 60  # particles built at least, however late (the decision's deadline passed)


def card_bits(cards: list[int]) -> int:
    out = 0
    for c in cards:
        out |= 1 << c
    return out


def bits_cards(bits: int) -> list[int]:
    """The cards of a card bitmask, lowest first: `card_bits` undone."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def _made(keep: tuple[int, ...]) -> bool:
    """Every card pairs with another (pairs, two pair, trips, quads, full house)."""
    ranks = [c >> 2 for c in keep]
    return all(ranks.count(r) >= 2 for r in ranks)


def _keeps_like(keep: tuple[int, ...]) -> bool:
    """Would a sensible player keep exactly these cards and change the rest?"""
    n = len(keep)
    if n == 0:
        return True
    if n == 5:
        return category_index(evaluate(list(keep))) >= 2  # two pair or better stands pat
    if _made(keep):
        return True
    ranks = sorted(c >> 2 for c in keep)
    if n >= 3 and _made(tuple(c for c in keep if c >> 2 != max(ranks))) and max(ranks) >= KING:
        return True  # a made hand and a high kicker for the last trick
    if n == 4 and (len({c & 3 for c in keep}) == 1 or (ranks[-1] - ranks[0] == 3 and len(set(ranks)) == 4)):
        return True  # four to a flush or to a straight
    return n <= 2 and ranks[0] >= QUEEN  # one or two high cards


def hand_plausible(hand: list[int], kept: int) -> bool:
    """Does `hand` (the five cards after an exchange) hold a keep of `kept` cards?"""
    return kept <= 0 or any(_keeps_like(k) for k in combinations(sorted(hand), kept))


class PlausibleHands:
    """Draws the other seats' hidden cards, each sample taken with the odds
    that each one's hand looks like what its last exchange kept (see the
    module docstring). One per decision: it caches what it has judged."""

    def __init__(self, knowledge: Any, view: Any) -> None:
        self.knowledge = knowledge
        self.last_count = {r.seat: r.count for r in view.exchanges}
        self.played: dict[int, list[int]] = {}
        for p in [*(p for t in view.tricks for p in t.cards), *view.trick]:
            self.played.setdefault(p.seat, []).append(CARD_INT[p.card])
        self.others = [s for s in view.active if s != view.seat and s in self.last_count]
        self.judged: dict[tuple[int, int], bool] = {}

    def _plausible(self, hand: list[int], kept: int) -> bool:
        key = (card_bits(hand), kept)
        got = self.judged.get(key)
        if got is None:
            got = self.judged[key] = hand_plausible(hand, kept)
        return got

    def draw(self, rng: random.Random) -> dict[int, list[int]]:
        """Card numbers by seat (and the stock and discards under negative keys)."""
        cards = self.knowledge.sample_cards(rng)
        for _ in range(MAX_DRAWS):
            odds = 1.0
            for seat in self.others:
                hand = cards[seat] + self.played.get(seat, [])
                if len(hand) == 5 and not self._plausible(hand, 5 - self.last_count[seat]):
                    odds *= UNLIKELY
            if odds >= 1.0 or rng.random() < odds:
                return cards
            cards = self.knowledge.sample_cards(rng)
        return cards


def keep_of_size(hand: list[int], size: int, last: bool) -> tuple[list[int], bool]:
    """The `size` cards a sensible player keeps from `hand`, and whether
    keeping that many is natural for the hand: a plain poker player's keep
    (`rollout.chicago_keep`) when it has that size, else the best-looking
    keep of that size (pairs, then four to a flush or straight, then high
    cards), natural when `_keeps_like` says so."""
    if size >= 5:
        return list(hand), _keeps_like(tuple(sorted(hand)))
    if size <= 0:
        return [], True
    plain = chicago_keep(hand, last)
    if len(plain) == size:
        return plain, True
    best = max(combinations(hand, size), key=_keep_key)
    return list(best), _keeps_like(tuple(sorted(best)))


def _keep_key(keep: tuple[int, ...]) -> tuple[int, int, int]:
    ranks = [c >> 2 for c in keep]
    paired = sum(1 for r in ranks if ranks.count(r) >= 2)
    drawing = len(keep) == 4 and (
        len({c & 3 for c in keep}) == 1 or (len(set(ranks)) == 4 and max(ranks) - min(ranks) == 3)
    )
    return paired, int(drawing), sum(ranks)


class _Particle:
    __slots__ = ("drawn", "hand", "keep", "pool_size", "used", "weight")

    def __init__(
        self, hand: list[int], used: set[int], keep: list[int], drawn: list[int], pool_size: int, weight: float
    ) -> None:
        self.hand, self.used, self.keep, self.drawn = hand, used, keep, drawn
        self.pool_size, self.weight = pool_size, weight

    def copy(self) -> _Particle:
        return _Particle(
            list(self.hand), set(self.used), list(self.keep), list(self.drawn), self.pool_size, self.weight
        )


_BUILT: dict[tuple[tuple, int], list[_Particle]] = {}  # by history and seat


class HistoryModel:
    """Seat `other` of the deal (at two seats, the other one), as particles
    (see the module docstring). `my_hands[r]` is this seat's hand when asked to exchange in
    round r (so its hand after round r-1). The particles depend only on the
    deal's history, so the decisions between two exchanges share them;
    `rng` draws the worlds."""

    def __init__(
        self,
        view: Any,
        events: list[Any],
        my_hands: dict[int, list[int]],
        rules: Any,
        rng: random.Random,
        particles: int = PARTICLES,
        other: int | None = None,
        deadline: Any = None,
    ) -> None:
        self.view, self.rules = view, rules
        self.me = view.seat
        self.other = 1 - view.seat if other is None else other
        held = self._cards_held(events, my_hands)
        self.pool = [c for c in range(52) if c not in held]
        self.counts = {r.round: r.count for r in view.exchanges if r.seat == self.other}
        self.rounds = max(self.counts, default=0)
        my_played, self.played = self._cards_played()
        self.elsewhere = self._cards_elsewhere(events)  # in a third seat's hand or played by it
        self.voids = self._shown_voids()  # suits the other seat has shown it has none of
        self.showdowns = self._showdowns_met(my_hands, my_played)
        self.deadline = deadline  # building stops early past it, with `FEWEST` particles at least
        self._cut_short = False
        self.particles = self._particles(self._shown_hands(events), particles)
        self._trick_weights: list[float] | None = None

    # ---------------------------------------------------------------- what the deal showed

    def _cards_held(self, events: list[Any], my_hands: dict[int, list[int]]) -> set[int]:
        """Every card this seat has held in the deal: none of them is the other seat's."""
        held = {CARD_INT[c] for c in self.view.hand}
        for e in events:
            if type(e).__name__ in ("HandDealt", "Drew") and e.seat == self.me:
                held |= {CARD_INT[c] for c in e.cards}
        for hand in my_hands.values():
            held |= set(hand)
        return held

    def _shown_hands(self, events: list[Any]) -> dict[int, list[int]]:
        """The hands the other seat showed breaking up a scored one, by the
        round of the exchange that followed: a particle holds them then."""
        reveals: dict[int, list[int]] = {}
        pending: list[int] | None = None
        for e in events:
            kind = type(e).__name__
            if kind == "HandRevealed" and e.seat == self.other and e.reason == "break_up":
                pending = [CARD_INT[c] for c in e.cards]
            elif kind == "Exchanged" and e.seat == self.other and pending is not None:
                reveals[e.round] = pending
                pending = None
        return reveals

    def _cards_elsewhere(self, events: list[Any]) -> set[int]:
        """Cards a third seat has played, or shown (and so may still hold):
        at a table of three or more, never in the other seat's hand now."""
        view, mine = self.view, (self.me, self.other)
        out = {CARD_INT[p.card] for t in [*(t.cards for t in view.tricks), view.trick] for p in t if p.seat not in mine}
        for e in events:
            if type(e).__name__ == "HandRevealed" and e.seat not in mine:
                out |= {CARD_INT[c] for c in e.cards}
        return out

    def _cards_played(self) -> tuple[list[int], list[int]]:
        """The cards this seat and the other seat have played in the tricks so far."""
        view = self.view
        plays = [*(p for t in view.tricks for p in t.cards), *view.trick]
        my_played = [CARD_INT[p.card] for p in plays if p.seat == self.me]
        return my_played, [CARD_INT[p.card] for p in plays if p.seat == self.other]

    def _shown_voids(self) -> set[int]:
        """The suits the other seat did not follow when they were led."""
        view = self.view
        voids: set[int] = set()
        for trick in [*(t.cards for t in view.tricks), *([view.trick] if view.trick else [])]:
            led = CARD_INT[trick[0].card] & 3
            if any(p.seat == self.other and CARD_INT[p.card] & 3 != led for p in trick[1:]):
                voids.add(led)
        return voids

    def _showdowns_met(self, my_hands: dict[int, list[int]], my_played: list[int]) -> dict[int, tuple[Any, Any]]:
        """Each showdown's record and this seat's hand value in it, by round:
        the other seat's hand must give the result announced against it."""
        start_hand = sorted(CARD_INT[c] for c in self.view.hand) + my_played
        showdowns = {}
        for s in self.view.showdowns:
            mine = my_hands.get(s.round + 1) if s.round < self.rules.exchanges else start_hand
            if s.round >= 1 and mine is not None and len(mine) == 5:
                showdowns[s.round] = (s, evaluate(list(mine), self.rules.ace_low_straight))
        return showdowns

    def _particles(self, reveals: dict[int, list[int]], n: int) -> list[_Particle]:
        """The particles of this deal's history: built once, and seeded by what
        they are built from, so a decision gets the same particles whether they
        were built for it or for an earlier one."""
        key = (
            self.view.deal,
            self.me,
            tuple(self.pool),
            tuple(sorted(self.counts.items())),
            tuple((r, tuple(s.winners), s.category, tuple(s.tied), v) for r, (s, v) in sorted(self.showdowns.items())),
            tuple(sorted((r, tuple(c)) for r, c in reveals.items())),
            n,
        )
        built = _BUILT.get((key, self.other))
        if built is None:
            built = self._build(random.Random(repr(key)), n, reveals)
            if self._cut_short:
                return built  # not kept: a decision with the time for it builds them all
            if len(_BUILT) >= MODELS_KEPT:
                _BUILT.clear()  # one deal's histories at a time: the trick decisions share them
            _BUILT[(key, self.other)] = built
        return built

    # ---------------------------------------------------------------- building

    def _consistent(self, record: Any, mine: int, hand: list[int]) -> bool:
        """Would the other seat holding `hand` give the showdown `record`, this
        seat's hand being worth `mine`? The best hands (winners and exact
        ties) are of the announced category; nobody else's is better."""
        theirs = evaluate(hand, self.rules.ace_low_straight)
        top = {*record.winners, *record.tied}
        if not top:
            return category_index(theirs) == 0  # nobody scored: high cards only
        if self.other in top:
            if category_code(theirs) != record.category:
                return False
            return theirs == mine if self.me in top else theirs > mine
        if self.me in top:
            return theirs < mine
        if record.category not in CATEGORY_CODES:
            return True  # a record that names no category says nothing of this seat
        return category_index(theirs) <= CATEGORY_CODES.index(record.category)

    def _build(self, rng: random.Random, n: int, reveals: dict[int, list[int]]) -> list[_Particle]:
        """Round one by rejection (its hand is only a prior draw, so it is drawn
        until it fits), later rounds by weights, retried draws and resampling."""
        self._cut_short = False
        if self.rounds:
            parts = []
            for _ in range(n):
                parts.append(self._first_round(rng, reveals.get(1)))
                if len(parts) >= FEWEST and self.deadline is not None and self.deadline.passed():
                    self._cut_short = True  # a starved process: fewer particles rather than a late reply
                    break
        else:
            parts = [self._dealt(rng) for _ in range(n)]
        parts = _resampled(parts, rng, force=self.rounds <= 1)
        for r in range(2, self.rounds + 1):
            for p in parts:
                if r in reveals:
                    p.hand = list(reveals[r])
                    p.used |= set(p.hand)
                self._exchange(p, r, rng)
            parts = _resampled(parts, rng, force=r == self.rounds)
            if not parts:
                return []
        return parts

    def _dealt(self, rng: random.Random) -> _Particle:
        hand = rng.sample(self.pool, 5)
        return _Particle(hand, set(hand), [], list(hand), len(self.pool), 1.0)

    def _first_round(self, rng: random.Random, shown_hand: list[int] | None) -> _Particle:
        """A first-round history that fits the count and the showdown: drawn
        afresh until it does (a count a sensible player would not choose is
        taken at `UNLIKELY` odds); weight 0 if none fits in `FIRST_TRIES`."""
        for _ in range(FIRST_TRIES):
            p = (
                self._dealt(rng)
                if shown_hand is None
                else _Particle(list(shown_hand), set(shown_hand), [], list(shown_hand), len(self.pool), 1.0)
            )
            if self._exchange(p, 1, rng, by_rejection=True):
                return p
        p.weight = 0.0
        return p

    def _exchange(self, p: _Particle, r: int, rng: random.Random, by_rejection: bool = False) -> bool:
        """Play round `r` for particle `p`: keep as its count says, draw, meet
        the showdown. An unlikely keep lowers the weight, or `by_rejection`
        is refused unless a draw falls under `UNLIKELY`."""
        count = self.counts.get(r, 0)
        keep, natural = keep_of_size(p.hand, 5 - count, r >= self.rules.exchanges)
        if not natural:
            if not by_rejection:
                p.weight *= UNLIKELY
            elif rng.random() >= UNLIKELY:
                return False
        avail = [c for c in self.pool if c not in p.used]
        drawn = rng.sample(avail, count)
        shown = self.showdowns.get(r)
        if shown is not None:
            for _ in range(SHOWDOWN_TRIES):
                if self._consistent(shown[0], shown[1], keep + drawn):
                    break
                drawn = rng.sample(avail, count)
            else:
                p.weight = 0.0
                return False
        p.keep, p.drawn, p.pool_size = keep, drawn, len(avail)
        p.hand = keep + drawn
        p.used |= set(drawn)
        return True

    # ---------------------------------------------------------------- worlds

    def usable(self) -> bool:
        return bool(self.particles)

    def hands_after_exchange(self, rng: random.Random, count: int) -> list[list[int]]:
        """`count` hands the other seat could show after this round's exchange:
        a particle's (its last draw drawn again) if it has exchanged already,
        else a particle's put through a plain exchange (`rollout.chicago_keep`)."""
        round_now = max(1, self.view.exchange_round)
        done = round_now in self.counts
        last = round_now >= self.rules.exchanges
        out = []
        for _ in range(count):
            p = self._pick(rng, None)
            hand = self._fresh(p, rng)
            if not done:
                keep = chicago_keep(hand, last)
                avail = [c for c in self.pool if c not in p.used and c not in hand]
                hand = keep + rng.sample(avail, 5 - len(keep))
            out.append(hand)
        return out

    def _fresh(self, p: _Particle, rng: random.Random) -> list[int]:
        """The particle's hand with its last draw drawn again (uniform given what it kept)."""
        shown = self.showdowns.get(self.rounds)
        if not p.drawn or shown is not None:
            return list(p.hand)
        before = p.used - set(p.drawn)
        avail = [c for c in self.pool if c not in before and c not in p.keep]
        return p.keep + rng.sample(avail, len(p.drawn))

    def _pick(self, rng: random.Random, weights: list[float] | None) -> _Particle:
        parts = self.particles
        if weights is None:
            return parts[rng.randrange(len(parts))]
        return rng.choices(parts, weights)[0]

    def draw(self, rng: random.Random) -> dict[int, list[int]] | None:
        """The other seat's unplayed cards in one world that fits everything
        seen (`PlausibleHands.draw`'s shape), or None if no particle fits."""
        played, voids = self.played, self.voids
        if self._trick_weights is None:
            self._trick_weights = [self._trick_weight(p, played, voids) for p in self.particles]
            if not any(self._trick_weights):
                self.particles = []
        if not self.particles:
            return None
        p = self._pick(rng, self._trick_weights)
        hand = self._redraw(p, played, voids, rng)
        return {self.other: [c for c in hand if c not in played]}

    def _free_cards(self, p: _Particle, played: list[int], voids: set[int]) -> list[int]:
        before = p.used - set(p.drawn)
        away = self.elsewhere
        return [
            c
            for c in self.pool
            if c not in before and c not in p.keep and c not in played and c & 3 not in voids and c not in away
        ]

    def _trick_weight(self, p: _Particle, played: list[int], voids: set[int]) -> float:
        before = p.used - set(p.drawn)
        must = [c for c in played if c not in p.keep]
        if len(must) > len(p.drawn) or any(c in before for c in must):
            return 0.0
        if any((c & 3 in voids and c not in played) or c in self.elsewhere for c in p.keep):
            return 0.0
        free = len(self._free_cards(p, played, voids))
        slots = len(p.drawn) - len(must)
        if slots > free:
            return 0.0
        return p.weight * math.comb(free, slots) / max(1, math.comb(p.pool_size, len(p.drawn)))

    def _redraw(self, p: _Particle, played: list[int], voids: set[int], rng: random.Random) -> list[int]:
        must = [c for c in played if c not in p.keep]
        free = self._free_cards(p, played, voids)
        return p.keep + must + rng.sample(free, len(p.drawn) - len(must))


def _resampled(parts: list[_Particle], rng: random.Random, force: bool) -> list[_Particle]:
    """Systematic resampling when the weights have thinned out (or `force`:
    the particles then stand for the other seat with equal weights); [] if
    every particle died."""
    total = sum(p.weight for p in parts)
    if total <= 0:
        return []
    ess = total * total / sum(p.weight * p.weight for p in parts)
    if ess >= len(parts) / 2 and not force:
        return parts
    n = len(parts)
    step = total / n
    u = rng.random() * step
    out, acc, i = [], parts[0].weight, 0
    for _ in range(n):
        while acc < u and i < n - 1:
            i += 1
            acc += parts[i].weight
        q = parts[i].copy()
        q.weight = 1.0
        out.append(q)
        u += step
    return out


class _Worlds:
    """Draws from the history model, and from `PlausibleHands` where the model has nothing that fits."""

    def __init__(self, model: HistoryModel | None, plain: PlausibleHands) -> None:
        self.model, self.plain = model, plain

    def draw(self, rng: random.Random) -> dict[int, list[int]]:
        if self.model is not None:
            got = self.model.draw(rng)
            if got is not None:
                return got
        return self.plain.draw(rng)


def seat_models(
    view: Any,
    events: list[Any],
    my_hands: dict[int, list[int]] | None,
    rules: Any,
    rng: random.Random,
    deadline: Any = None,
) -> dict[int, HistoryModel] | None:
    """A history model for every other seat in the deal, None when this
    seat's own hands of the deal are not known or a seat's model has no
    particle that fits."""
    if my_hands is None:
        return None
    models = {}
    for seat in view.active:
        if seat != view.seat:
            model = HistoryModel(view, events, my_hands, rules, rng, other=seat, deadline=deadline)
            if not model.usable():
                return None
            models[seat] = model
    return models


def history_model(
    view: Any,
    events: list[Any],
    my_hands: dict[int, list[int]] | None,
    rules: Any,
    rng: random.Random,
    deadline: Any = None,
) -> HistoryModel | None:
    """The other seat's history model at a two-seat table, None elsewhere or
    when this seat's own hands of the deal are not known (nor any particle fits)."""
    if view.n_players != 2 or len(view.active) != 2:
        return None
    models = seat_models(view, events, my_hands, rules, rng, deadline)
    return next(iter(models.values())) if models else None


def world_source(decision: Any) -> _Worlds:
    """Where a two-seat trick search gets the other seat's hand in each world."""
    model = history_model(
        decision.view, decision.events, decision.my_hands, decision.rules, decision.rng, decision.deadline
    )
    return _Worlds(model, PlausibleHands(decision.knowledge, decision.view))
