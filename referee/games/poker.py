"""Five-card poker hand values with exact tie-breaking (docs/rules.md, "Showdowns and the hand ranking").

A hand value is one int: `category << 20` plus up to five 4-bit ranks in
descending importance, so comparing ints compares hands exactly (category,
then kickers; suits never break ties). Evaluation is two multiplications'
worth of table lookups: each card maps to a prime for its rank, the product
identifies the rank multiset, and a flush is detected with a suit bitmask.
Tables are built once at import for both `ace_low_straight` settings.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Final

from referee.errors import ConfigError
from referee.games.cards import CARD_STR, RANK_NAMES, RANK_PLURALS, parse_cards

HC, P1, P2, K3, ST, FL, FH, K4, SF = range(9)
CATEGORY_CODES: Final = ("HC", "1P", "2P", "3K", "ST", "FL", "FH", "4K", "SF", "RF")
CATEGORY_NAMES: Final = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
    "royal flush",
)
DEFAULT_HAND_POINTS: Final = {
    "1P": 1,
    "2P": 2,
    "3K": 3,
    "ST": 4,
    "FL": 5,
    "FH": 6,
    "4K": 7,
    "SF": 8,
    "RF": 52,
}
_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
CARD_PRIME: Final = tuple(_PRIMES[c >> 2] for c in range(52))
CARD_SUITBIT: Final = tuple(1 << (c & 3) for c in range(52))
ACE = 12
ROYAL_VALUE: Final = (SF << 20) | (ACE << 16)


def _pack(category: int, key: list[int]) -> int:
    v = 0
    for i, r in enumerate(key):
        v |= r << (16 - 4 * i)
    return (category << 20) | v


def _straight_high(ranks_desc: list[int], ace_low: bool) -> int | None:
    if len(set(ranks_desc)) != 5:
        return None
    if ranks_desc[0] - ranks_desc[4] == 4:
        return ranks_desc[0]
    if ace_low and ranks_desc == [ACE, 3, 2, 1, 0]:
        return 3
    return None


def _value_of_ranks(ranks: tuple[int, ...], flush: bool, ace_low: bool) -> int:
    desc = sorted(ranks, reverse=True)
    # (multiplicity, rank) pairs, highest first: the tie-break key of the hand ranking (docs/rules.md).
    groups: list[tuple[int, int]] = []
    for r in desc:
        if groups and groups[-1][1] == r:
            groups[-1] = (groups[-1][0] + 1, r)
        else:
            groups.append((1, r))
    groups.sort(reverse=True)
    key = [r for _, r in groups]
    shape = [n for n, _ in groups]
    high = _straight_high(desc, ace_low)
    if high is not None:
        return _pack(SF if flush else ST, [high])
    if flush:
        return _pack(FL, desc)
    if shape[0] == 4:
        return _pack(K4, key)
    if shape[:2] == [3, 2]:
        return _pack(FH, key)
    if shape[0] == 3:
        return _pack(K3, key)
    if shape[:2] == [2, 2]:
        return _pack(P2, key)
    if shape[0] == 2:
        return _pack(P1, key)
    return _pack(HC, desc)


def _build(ace_low: bool) -> tuple[dict[int, int], dict[int, int]]:
    """Every rank multiset (at most four of a rank) by its prime product; the
    ones of five distinct ranks also as a flush."""
    plain: dict[int, int] = {}
    flush: dict[int, int] = {}
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if ranks[0] == ranks[4]:  # five of a rank
            continue
        prod = _PRIMES[ranks[0]] * _PRIMES[ranks[1]] * _PRIMES[ranks[2]] * _PRIMES[ranks[3]] * _PRIMES[ranks[4]]
        plain[prod] = _value_of_ranks(ranks, False, ace_low)
        if ranks[0] < ranks[1] < ranks[2] < ranks[3] < ranks[4]:
            flush[prod] = _value_of_ranks(ranks, True, ace_low)
    return plain, flush


def _with_wheel(tables: tuple[dict[int, int], dict[int, int]], ace_low: bool) -> tuple[dict[int, int], dict[int, int]]:
    """The other setting's tables: `ace_low_straight` changes the values of A-2-3-4-5 only."""
    wheel = (0, 1, 2, 3, ACE)
    prod = _PRIMES[0] * _PRIMES[1] * _PRIMES[2] * _PRIMES[3] * _PRIMES[ACE]
    plain, flush = dict(tables[0]), dict(tables[1])
    plain[prod] = _value_of_ranks(wheel, False, ace_low)
    flush[prod] = _value_of_ranks(wheel, True, ace_low)
    return plain, flush


_ACE_LOW = _build(True)  # built once: about 30 ms of start-up for every process that plays Chicago
_TABLES: Final = {True: _ACE_LOW, False: _with_wheel(_ACE_LOW, False)}


def evaluate(cards: tuple[int, ...] | list[int], ace_low_straight: bool = True) -> int:
    """Value of exactly five card ints; higher is better, equal is an exact tie."""
    c0, c1, c2, c3, c4 = cards
    prod = CARD_PRIME[c0] * CARD_PRIME[c1] * CARD_PRIME[c2] * CARD_PRIME[c3] * CARD_PRIME[c4]
    plain, flush = _TABLES[ace_low_straight]
    if CARD_SUITBIT[c0] & CARD_SUITBIT[c1] & CARD_SUITBIT[c2] & CARD_SUITBIT[c3] & CARD_SUITBIT[c4]:
        return flush[prod]
    return plain[prod]


def category_index(value: int) -> int:
    """0..9 into CATEGORY_CODES; a royal flush (ace-high straight flush) is 9."""
    return 9 if value == ROYAL_VALUE else value >> 20


def category_code(value: int) -> str:
    return CATEGORY_CODES[category_index(value)]


def key_ranks(value: int) -> list[int]:
    """The tie-break ranks of a value, most important first."""
    cat = value >> 20
    n = {HC: 5, P1: 4, P2: 3, K3: 3, ST: 1, FL: 5, FH: 2, K4: 2, SF: 1}[cat]
    return [(value >> (16 - 4 * i)) & 15 for i in range(n)]


def describe(value: int) -> str:
    """Plain words, e.g. 'two pair, kings and fours' or 'straight, five high'."""
    words = _DESCRIBED.get(value)
    if words is None:
        words = _DESCRIBED[value] = _describe(value)
    return words


_DESCRIBED: dict[int, str] = {}  # at most the 7,462 distinct hand values: a final showdown names one every deal


def _describe(value: int) -> str:
    cat = category_index(value)
    k = key_ranks(value)
    if cat == 9:
        return "royal flush"
    if cat == HC:
        return f"high card, {RANK_NAMES[k[0]]} high"
    if cat == P1:
        return f"pair of {RANK_PLURALS[k[0]]}"
    if cat == P2:
        return f"two pair, {RANK_PLURALS[k[0]]} and {RANK_PLURALS[k[1]]}"
    if cat == K3:
        return f"three of a kind, {RANK_PLURALS[k[0]]}"
    if cat in (ST, SF, FL):
        return f"{CATEGORY_NAMES[cat]}, {RANK_NAMES[k[0]]} high"
    if cat == FH:
        return f"full house, {RANK_PLURALS[k[0]]} over {RANK_PLURALS[k[1]]}"
    return f"four of a kind, {RANK_PLURALS[k[0]]}"


def hand_points(value: int, table: dict[str, int] = DEFAULT_HAND_POINTS) -> int:
    """Chicago points of a value under a points table (high card scores 0)."""
    return table.get(category_code(value), 0)


@dataclass(frozen=True, order=True)
class HandValue:
    """A comparable five-card hand value for Python bot writers.

    >>> hand_value("As Ks Qs Js Ts") > hand_value("5h 4h 3h 2h Ah")
    True
    """

    value: int
    cards: tuple[str, ...] = field(compare=False)

    @property
    def category(self) -> str:
        """Short code: HC 1P 2P 3K ST FL FH 4K SF RF."""
        return category_code(self.value)

    @property
    def name(self) -> str:
        return CATEGORY_NAMES[category_index(self.value)]

    @property
    def points(self) -> int:
        """Chicago points under the default table."""
        return hand_points(self.value)

    def describe(self) -> str:
        return describe(self.value)

    def __str__(self) -> str:
        return f"{' '.join(self.cards)}: {self.describe()}"


def hand_value(cards: str | list[str], ace_low_straight: bool = True) -> HandValue:
    """Evaluate five cards given as `"As Ks Qs Js Ts"` or a list of strings."""
    ints = parse_cards(cards)
    if len(ints) != 5:
        raise ConfigError(f"a poker hand has exactly 5 cards, got {len(ints)}: {cards!r}")
    return HandValue(evaluate(ints, ace_low_straight), tuple(CARD_STR[c] for c in ints))
