"""A simulated arena: the matchmaking policy and the online ratings driven by
a clock, a number of slots and bots of hidden strength, with no processes.

Each unit takes `unit_seconds`; when one ends its slot asks `next_unit` again,
as the server will, and so does adding a bot. A unit's outcome is drawn from
the hidden strengths: in each of its games (one per rotation of the seats) a
seat scores round(strength + noise), and the seats' sums are the unit's
scores (integers, so ties happen). The deal's luck is left out because the
rotations cancel it. Shared by tests/arena and tests/benchmarks.
"""

from __future__ import annotations

import heapq
import random
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from referee.arena.matchmaking import Entrant, Ledger, MatchmakingPolicy, next_unit
from referee.arena.online import Rating, UnitResult, update

HOUR = 3600.0
UNIT_SECONDS = 20.0  # a realistic unit: a deal set of short games


@dataclass(frozen=True)
class Started:
    """One unit as it started: when, its seats (focal first), and which of
    them were still in placement."""

    at: float
    seats: tuple[str, ...]
    placing: frozenset[str]


@dataclass
class SimArena:
    table_size: int
    slots: int
    unit_seconds: float
    policy: MatchmakingPolicy = field(default_factory=MatchmakingPolicy)
    seed: int = 0
    noise: float = 6.0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)  # the server's: matchmaking only
        self.luck = random.Random(f"outcomes {self.seed}")  # the cards' and the bots' noise
        self.ledger = Ledger(self.policy.window_seconds)
        self.now = 0.0
        self.strength: dict[str, float] = {}
        self.since: dict[str, float] = {}
        self.ratings: dict[str, Rating] = {}
        self.results: list[UnitResult] = []
        self.started: list[Started] = []
        self.playing: set[str] = set()
        self._running: list[tuple[float, int, tuple[str, ...]]] = []
        self.calls = 0

    # the server's side

    def add(self, key: str, strength: float) -> None:
        """A version passes its check now and joins the field."""
        assert key not in self.strength
        self.strength[key] = strength
        self.since[key] = self.now
        self._fill()

    def run_until(self, t: float) -> None:
        while self._running and self._running[0][0] <= t:
            self._finish_next()
        self.now = max(self.now, t)
        self._fill()

    def run_units(self, count: int) -> None:
        """Play until `count` more units have finished."""
        target = len(self.results) + count
        while len(self.results) < target:
            assert self._running, "the arena stalled"
            self._finish_next()

    def entrants(self) -> list[Entrant]:
        return [
            Entrant(key, r.mu, r.sigma, self.since[key], key in self.playing)
            for key in self.strength
            for r in [self.ratings.get(key, Rating())]
        ]

    def _fill(self) -> None:
        while len(self._running) < self.slots:
            self.calls += 1
            seats = next_unit(self.entrants(), self.table_size, self.policy, self.rng, self.now, self.ledger)
            if seats is None:
                return
            assert len(set(seats)) == self.table_size, seats
            assert not self.playing & set(seats), f"{seats} seats a bot that is playing"
            placing = frozenset(k for k in seats if self.ledger.units(k) < self.policy.placement_units)
            self.started.append(Started(self.now, seats, placing))
            self.ledger.record(seats, self.now)
            self.playing.update(seats)
            heapq.heappush(self._running, (self.now + self.unit_seconds, len(self.started), seats))

    def _finish_next(self) -> None:
        end, _, seats = heapq.heappop(self._running)
        self.now = end
        scores = tuple(float(self._unit_score(key)) for key in seats)
        result = UnitResult(seats, scores)
        self.results.append(result)
        update(self.ratings, result)
        self.playing.difference_update(seats)
        self._fill()

    def _unit_score(self, key: str) -> int:
        return sum(round(self.luck.gauss(self.strength[key], self.noise)) for _ in range(self.table_size))

    # what the tests measure

    def first_unit_delay(self, key: str) -> float:
        return next(u.at for u in self.started if key in u.seats) - self.since[key]

    def placement_opponents(self, key: str) -> list[str]:
        return [k for u in self.started if key in u.placing for k in u.seats if k != key]

    def units_per_bot(self, keys: Iterable[str], start: float, end: float) -> dict[str, int]:
        """Units started in [start, end) by each of `keys`, placement units left out."""
        counts = dict.fromkeys(keys, 0)
        for u in self.started:
            if start <= u.at < end:
                for k in u.seats:
                    if k in counts and k not in u.placing:
                        counts[k] += 1
        return counts

    def units_until_met_everyone(self, key: str) -> int | None:
        """How many units the arena started, from `key`'s arrival, until `key`
        had shared a table with every other bot, or None if it never did."""
        others = set(self.strength) - {key}
        for n, u in enumerate((u for u in self.started if u.at >= self.since[key]), 1):
            if key in u.seats:
                others -= set(u.seats)
                if not others:
                    return n
        return None

    def units_until_all_pairs_met(self, keys: Sequence[str], after: int = 0) -> int | None:
        """How many units (counted from the `after`-th started) it took until
        every pair of `keys` had shared a table, or None if some never did."""
        wanted = {(a, b) for a in keys for b in keys if a < b}
        for n, u in enumerate(self.started[after:], 1):
            wanted -= {(a, b) for a in u.seats for b in u.seats if a < b}
            if not wanted:
                return n
        return None

    def spearman(self, keys: Sequence[str] | None = None) -> float:
        """Rank correlation of the leaderboard's order (mu - 3 sigma) with the hidden strengths."""
        keys = list(self.strength) if keys is None else list(keys)
        ordinal = [self.ratings.get(k, Rating()).ordinal for k in keys]
        return spearman(ordinal, [self.strength[k] for k in keys])


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rho: Pearson's correlation of the ranks (ties share their mean rank)."""
    return statistics.correlation(_ranks(xs), _ranks(ys))


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2
        i = j + 1
    return ranks


def field_of(count: int, step: float = 1.0, prefix: str = "bot") -> dict[str, float]:
    """`count` bots of strengths 0, step, 2 step, ... (keys sort in strength order)."""
    return {f"{prefix}{i:03d}": i * step for i in range(count)}


def thirds(strengths: dict[str, float], exclude: str) -> dict[str, int]:
    """Each bot's third of the field by hidden strength (0 low, 1 middle, 2 high), `exclude` left out."""
    ranked = sorted((k for k in strengths if k != exclude), key=lambda k: strengths[k])
    return {k: 3 * i // len(ranked) for i, k in enumerate(ranked)}


def ladder(
    table_size: int,
    bots: int = 20,
    slots: int = 2,
    seed: int = 1,
    step: float = 1.0,
    policy: MatchmakingPolicy | None = None,
) -> tuple[SimArena, list[str]]:
    """A field of `bots` (strengths `step` apart) that starts together, plays
    2 hours, takes 4 newcomers at odd times (as weak as the weakest, the
    middle, as strong as the strongest, one at random) and plays on to 5
    hours. Returns the arena and the newcomers."""
    arena = SimArena(table_size, slots, UNIT_SECONDS, policy or MatchmakingPolicy(), seed)
    for key, strength in field_of(bots, step).items():
        arena.add(key, strength)
    arena.run_until(2 * HOUR)
    rng = random.Random(seed)
    newcomers = []
    for i, place in enumerate((0.0, 0.5, 1.0, rng.random())):
        arena.run_until(2 * HOUR + i * 900 + rng.uniform(0, 300))
        newcomers.append(f"new{i}")
        arena.add(newcomers[-1], place * (bots - 1) * step)
    arena.run_until(5 * HOUR)
    return arena, newcomers
