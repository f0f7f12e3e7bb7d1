"""Tournament schedules: tables, balanced seating, a deterministic game list.

A *table* is a set of bots that play together (2, 3 or 4 of them):

* round robin: every combination of `table_size` bots;
* gauntlet: every candidate with every combination of `table_size - 1`
  bots of the field (candidates never meet each other).

Every table plays `deal_sets` deal sets. A deal set is one seed, so one
sequence of deals, played once under each of the `k` rotations of the
seats: each bot of the table sits in each seat exactly once per deal set,
with the same cards, so card luck largely cancels. Deal set `d` has the same
seed at every table (duplicate deals across the whole tournament).

Seating order: with 3-4 seats it also matters who sits after whom (who
plays into whom). Deal set `d` uses cyclic order number `d mod (k-1)!`, so
over `(k-1)!` deal sets (1, 2 or 6) every bot follows every other bot
equally often too.

The game list is ordered deal set by deal set (all tables play deal set 0
first), so partial results are balanced and adding deal sets later only
appends games: `game_id` (the position in the list) of every earlier game
stays the same. Each game has a stable `key` ("a+b+c/d3/r1") that the
results store and resume match on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import TYPE_CHECKING

from referee.errors import ConfigError
from referee.play.seeding import derive_seed

if TYPE_CHECKING:
    from referee.tournament.config import Tournament


@dataclass(frozen=True)
class ScheduledGame:
    key: str
    game_id: int  # 1-based position in the schedule
    table: tuple[str, ...]  # the table's bots, in config order
    deal_set: int
    rotation: int
    seats: tuple[str, ...]  # bot name per seat
    seed: int

    @property
    def table_key(self) -> str:
        return table_key(self.table)

    def log_name(self) -> str:
        return f"{self.game_id:05d}-{'-'.join(self.table)}-d{self.deal_set}-r{self.rotation}.jsonl"


def table_key(table: Iterable[str]) -> str:
    return "+".join(table)


def game_key(table: Sequence[str], deal_set: int, rotation: int) -> str:
    return f"{table_key(table)}/d{deal_set}/r{rotation}"


def seat_orders(k: int) -> list[tuple[int, ...]]:
    """The (k-1)! cyclic orders of k table members (member 0 first in each)."""
    return [(0, *p) for p in permutations(range(1, k))]


def seating(table: Sequence[str], deal_set: int, rotation: int) -> tuple[str, ...]:
    """Bot per seat for one game of a table's deal set."""
    k = len(table)
    orders = seat_orders(k)
    order = orders[deal_set % len(orders)]
    return tuple(table[order[(s + rotation) % k]] for s in range(k))


def make_tables(
    bots: Sequence[str], table_size: int, fmt: str, candidates: Sequence[str] = ()
) -> list[tuple[str, ...]]:
    """The tables of a round robin or gauntlet; bots keep their config order."""
    if table_size < 2:
        raise ConfigError("a table needs at least 2 seats")
    if fmt == "round-robin":
        return list(combinations(bots, table_size))
    if fmt == "gauntlet":
        cands = set(candidates)
        field = [b for b in bots if b not in cands]
        tables = []
        for c in (b for b in bots if b in cands):
            for rest in combinations(field, table_size - 1):
                tables.append(tuple(b for b in bots if b == c or b in rest))
        return tables
    raise ConfigError(f"unknown tournament format {fmt!r}; choose round-robin or gauntlet")


def build_schedule(
    bots: Sequence[str], table_size: int, fmt: str, deal_sets: int, seed: int, candidates: Sequence[str] = ()
) -> list[ScheduledGame]:
    """Every game of the tournament, in playing order (see the module doc)."""
    tables = make_tables(bots, table_size, fmt, candidates)
    games: list[ScheduledGame] = []
    for d in range(deal_sets):
        seed_d = derive_seed(seed, "deal-set", d)
        for table in tables:
            for r in range(table_size):
                games.append(
                    ScheduledGame(
                        key=game_key(table, d, r),
                        game_id=len(games) + 1,
                        table=table,
                        deal_set=d,
                        rotation=r,
                        seats=seating(table, d, r),
                        seed=seed_d,
                    )
                )
    return games


def schedule_for(t: Tournament, seed: int | None = None) -> list[ScheduledGame]:
    """The tournament's games from its master seed (`seed`, else the config's)."""
    master = seed if seed is not None else t.seed
    if master is None:
        raise ConfigError(
            "the master seed is drawn when the tournament starts (prepare_store); no schedule before that"
        )
    return build_schedule(t.bot_names, t.table_size, t.format, t.deal_sets, master, t.candidates)


# ------------------------------------------------------------------ balance


def seat_counts(games: Iterable[ScheduledGame]) -> dict[str, Counter[int]]:
    """bot -> Counter(seat -> games)."""
    out: dict[str, Counter[int]] = {}
    for g in games:
        for s, b in enumerate(g.seats):
            out.setdefault(b, Counter())[s] += 1
    return out


def pair_counts(games: Iterable[ScheduledGame]) -> Counter[tuple[str, str]]:
    """(a, b) with a < b -> games in which both sat at the table."""
    out: Counter[tuple[str, str]] = Counter()
    for g in games:
        for a, b in combinations(sorted(g.seats), 2):
            out[(a, b)] += 1
    return out


def successor_counts(games: Iterable[ScheduledGame]) -> Counter[tuple[str, str]]:
    """(a, b) -> games in which b sat in the seat after a's (cyclically)."""
    out: Counter[tuple[str, str]] = Counter()
    for g in games:
        k = len(g.seats)
        if k > 2:
            for s in range(k):
                out[(g.seats[s], g.seats[(s + 1) % k])] += 1
    return out
