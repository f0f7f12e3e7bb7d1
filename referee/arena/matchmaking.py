"""Who plays next: the arena's matchmaking policy, a pure function of the field.

The arena plays *units* (one deal set at one table, every rotation of the
seats) whenever a slot is free, and asks `next_unit` for the seats. The answer
depends only on what it is given: the active versions with their ratings
(`Entrant`), what has been played (`Ledger`), the policy's parameters
(`MatchmakingPolicy`, the `[matchmaking]` table of arena.toml), the clock and
a seeded `random.Random`. No I/O, so a simulated field with hidden strengths
measures the policy in seconds (tests/arena, docs/arena.md).

Each choice follows a platform that learned it the hard way:

- A unit has a *focal* bot chosen first, and the others are chosen around it,
  as Halite's coordinator picks a seed player and then fills the table with
  players near it in rating (Halite III: `coordinator/matchmaking.py`).
- Placement: a version with fewer than `placement_units` units is focal ahead
  of everyone else (fewest units first, then the one that has waited
  longest), so it gets the next free slot and plays far more often than a
  settled bot at first. Halite seeds newly submitted bots first; Kaggle's
  simulation competitions give new submissions many more episodes. Its
  opponents cycle through the field's rating bands (middle, high, low,
  ...), so it meets the top and the bottom at once instead of climbing
  through its neighbours.
- Normal play: the focal bot is the one with the fewest units in the sliding
  window (ties: the largest sigma, the least known; then chance). That is
  the starvation argument of aiarena's rounds, where every bot meets every
  other once per round, kept without rounds: whoever has played least plays
  next, so no active bot can fall far behind.
- Opponents are drawn with a weight that falls as a Gaussian of the rating
  distance to the focal bot (Halite's near-rank opponents; Kaggle pairs
  agents of similar rating), except for a `coverage_share` of the seats,
  which go to the opponent the focal bot has met least: CG Arena plays the
  least-played pair until every pair has met, and this is its continuous
  form, so even the top and the bottom of the field meet.
- The same table is never played twice in a row: if the idle bots can form
  no other while a unit runs, there is no unit yet (its end brings choice),
  so a crowded arena does not lock the same bots together.

A bot plays at most one unit at a time: it already plays back to back when
the field is small, and a second unit at once would be chosen on a rating the
first has not updated yet. So `next_unit` seats only idle bots and says None
when fewer than `table_size` are idle; the server asks again whenever a unit
ends or a version becomes active.
"""

from __future__ import annotations

import math
import random
import statistics
from bisect import bisect_right, insort
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from referee.errors import ConfigError

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MatchmakingPolicy:
    """The parameters of `next_unit`; each field is a key of `[matchmaking]`."""

    # A new version's first units: it is focal ahead of everyone else, against opponents spread over the ratings.
    placement_units: int = 10
    # The rating bands (low to high) that a placement's opponents cycle through.
    placement_bands: int = 3
    # Normal play seats first the bot with the fewest units started within this many seconds.
    window_seconds: float = 3600.0
    # An opponent's weight is a Gaussian of its mu distance to the focal bot, this many field standard deviations wide.
    width_sigmas: float = 1.0
    # The share of opponent seats given to the bot the focal bot has met least (pair coverage), not drawn by rating.
    coverage_share: float = 0.15

    def __post_init__(self) -> None:
        if self.placement_units < 0:
            raise ConfigError(f"matchmaking.placement_units must be 0 or more, not {self.placement_units}")
        if self.placement_bands < 1:
            raise ConfigError(f"matchmaking.placement_bands must be 1 or more, not {self.placement_bands}")
        if not self.window_seconds > 0:
            raise ConfigError(f"matchmaking.window_seconds must be positive, not {self.window_seconds}")
        if not self.width_sigmas > 0:
            raise ConfigError(f"matchmaking.width_sigmas must be positive, not {self.width_sigmas}")
        if not 0.0 <= self.coverage_share <= 1.0:
            raise ConfigError(f"matchmaking.coverage_share must be between 0 and 1, not {self.coverage_share}")


@dataclass(frozen=True, slots=True)
class Entrant:
    """One active version as matchmaking sees it.

    `mu` and `sigma` are its online rating (referee.arena.online);
    `active_since` is the clock reading when it became active (passed its
    check); `playing` is true while one of its units runs.
    """

    key: str
    mu: float
    sigma: float
    active_since: float
    playing: bool = False


@dataclass
class Ledger:
    """What has been played, as far as matchmaking cares: units per bot (all
    time and within the window), meetings per pair, each bot's last table.

    Record every unit when it starts, in the order they start; after a
    restart, record the store's units again in that order with their start
    times. Times older than the window are forgotten as the clock moves on,
    so the ledger stays small however long the arena runs.
    """

    window_seconds: float
    _units: Counter[str] = field(default_factory=Counter)
    _recent: dict[str, list[float]] = field(default_factory=dict)
    _met: Counter[tuple[str, str]] = field(default_factory=Counter)
    _last: dict[str, frozenset[str]] = field(default_factory=dict)

    def record(self, seats: Sequence[str], when: float) -> None:
        """Count one unit of these seats, started at clock `when`."""
        table = frozenset(seats)
        if len(table) != len(seats) or len(seats) < 2:
            raise ValueError(f"a unit seats 2 or more distinct bots, not {list(seats)}")
        for key in seats:
            self._units[key] += 1
            times = self._recent.setdefault(key, [])
            insort(times, when)
            del times[: bisect_right(times, times[-1] - self.window_seconds)]
            self._last[key] = table
        for pair in _pairs(seats):
            self._met[pair] += 1

    def units(self, key: str) -> int:
        """Units `key` has played (or is playing), all time."""
        return self._units[key]

    def units_in_window(self, key: str, now: float) -> int:
        """Units `key` started after `now - window_seconds`."""
        times = self._recent.get(key, [])
        return len(times) - bisect_right(times, now - self.window_seconds)

    def meetings(self, a: str, b: str) -> int:
        """Units that seated both `a` and `b`."""
        return self._met[(a, b) if a < b else (b, a)]

    def last_table(self, key: str) -> frozenset[str]:
        """The seats of `key`'s latest unit (empty before its first)."""
        return self._last.get(key, frozenset())


def _pairs(seats: Iterable[str]) -> list[tuple[str, str]]:
    ordered = sorted(seats)
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]


def next_unit(
    entrants: Iterable[Entrant],
    table_size: int,
    policy: MatchmakingPolicy,
    rng: random.Random,
    now: float,
    ledger: Ledger,
) -> tuple[str, ...] | None:
    """The seats of the next unit, focal bot first; or None when no unit
    should start now: fewer than `table_size` bots are idle, or the idle
    ones could only replay a table they just played while other units run.

    `entrants` are the active versions (retired ones are left out). The
    result depends only on the arguments: the same field, ledger, clock and
    rng state give the same seats, whatever order `entrants` come in. The
    unit is played under every rotation, so the order of the seats returned
    says only who was chosen first.
    """
    if table_size < 2:
        raise ConfigError(f"a table has 2 or more seats, not {table_size}")
    if ledger.window_seconds != policy.window_seconds:
        raise ValueError("the ledger's window is not the policy's: build it as Ledger(policy.window_seconds)")
    everyone = sorted(entrants, key=lambda e: e.key)
    if len({e.key for e in everyone}) != len(everyone):
        raise ValueError("two entrants share a key")
    idle = [e for e in everyone if not e.playing]
    if len(idle) < table_size:
        return None
    placing = [e for e in idle if ledger.units(e.key) < policy.placement_units]
    if placing:
        focal = _least(placing, lambda e: (ledger.units(e.key), e.active_since), rng)
    else:
        focal = _least(idle, lambda e: (ledger.units_in_window(e.key, now), -e.sigma), rng)
    table = _Table(focal, idle, table_size, ledger, waiting_helps=len(idle) < len(everyone))
    seated = _seat_placement(table, everyone, policy, rng) if placing else _seat_rated(table, everyone, policy, rng)
    return table.keys() if seated else None


@dataclass
class _Table:
    """One unit being seated: the focal bot, then opponents one at a time."""

    focal: Entrant
    idle: list[Entrant]
    size: int
    ledger: Ledger
    waiting_helps: bool  # some bot is playing: once its unit ends there is more to choose from
    chosen: list[Entrant] = field(default_factory=list)

    def keys(self) -> tuple[str, ...]:
        return (self.focal.key, *(e.key for e in self.chosen))

    def open_seats(self) -> list[Entrant]:
        """Idle bots that may take the next seat: not yet seated, and, for the
        last seat, not completing a table one of its bots just played. If
        every candidate would, none may while waiting helps; else all may."""
        seated = set(self.keys())
        pool = [e for e in self.idle if e.key not in seated]
        if len(seated) + 1 < self.size:
            return pool
        fresh = [e for e in pool if not self._repeats(seated | {e.key})]
        return fresh or ([] if self.waiting_helps else pool)

    def _repeats(self, table: set[str]) -> bool:
        return any(self.ledger.last_table(key) == table for key in table)


def _seat_placement(table: _Table, everyone: list[Entrant], policy: MatchmakingPolicy, rng: random.Random) -> bool:
    """Opponents that walk the rating bands: each seat of each placement unit
    targets the next band (middle first), taking the nearest band that has an
    idle bot, and within it the one met least (settled bots before other
    newcomers, whose rating says little yet). False if no seat is open."""
    focal, ledger = table.focal, table.ledger
    ranked = sorted((e for e in everyone if e.key != focal.key), key=lambda e: (e.mu, e.key))
    bands = min(policy.placement_bands, len(ranked))
    band = {e.key: i * bands // len(ranked) for i, e in enumerate(ranked)}
    start = ledger.units(focal.key) * (table.size - 1) + bands // 2
    for seat in range(table.size - 1):
        target = (start + seat) % bands

        def preference(e: Entrant, target: int = target) -> tuple[int, int, bool]:
            return (
                abs(band[e.key] - target),
                ledger.meetings(focal.key, e.key),
                ledger.units(e.key) < policy.placement_units,
            )

        pool = table.open_seats()
        if not pool:
            return False
        table.chosen.append(_least(pool, preference, rng))
    return True


def _seat_rated(table: _Table, everyone: list[Entrant], policy: MatchmakingPolicy, rng: random.Random) -> bool:
    """Opponents drawn near the focal bot's rating, but a `coverage_share` of
    the seats go to the bot it has met least. False if no seat is open."""
    focal, ledger = table.focal, table.ledger
    width = policy.width_sigmas * statistics.pstdev(e.mu for e in everyone)
    for _ in range(table.size - 1):
        pool = table.open_seats()
        if not pool:
            return False
        if rng.random() < policy.coverage_share:
            table.chosen.append(_least(pool, lambda e: ledger.meetings(focal.key, e.key), rng))
            continue
        weights = [_closeness(e.mu - focal.mu, width) for e in pool]
        if sum(weights) > 0.0:
            table.chosen.append(rng.choices(pool, weights)[0])
        else:  # every idle bot is so far away that the weights underflow: take the nearest
            table.chosen.append(_least(pool, lambda e: abs(e.mu - focal.mu), rng))
    return True


def _closeness(distance: float, width: float) -> float:
    return 1.0 if width <= 0.0 else math.exp(-0.5 * (distance / width) ** 2)


def _least(items: Sequence[T], key: Callable[[T], SupportsRichComparison], rng: random.Random) -> T:
    """The item with the smallest key; ties broken by `rng`."""
    keys = [key(item) for item in items]
    best = min(keys)
    return rng.choice([item for item, k in zip(items, keys) if k == best])
