"""Poker hands for the built-in bot `greedy`: what five cards are worth at a
showdown, and which cards to keep in an exchange round.

Cards are ints, rank * 4 + suit (rank 0 = deuce, 12 = ace; suits s h d c).
Standard library only, like `greedy` itself; the engine's own evaluator is
never imported, so the bot reads as a bot writer would write one.
"""

from __future__ import annotations

from collections import Counter

RANKS = "23456789TJQKA"
SUITS = "shdc"
_CARD_INT = {r + s: i * 4 + j for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)}
_CARD_STR = {v: k for k, v in _CARD_INT.items()}

HC, P1, P2, K3, ST, FL, FH, K4, SF = range(9)
ACE, KING, QUEEN, JACK = 12, 11, 10, 9
# Showdown points per category (default table); used only to weigh options.
_POINTS = (0, 1, 2, 3, 4, 5, 6, 7, 8)

# Exchange tunables; the values were picked in greedy-vs-greedy matches (1000 games each).
LAST_PAIR_KICKER = KING  # last exchange: a pair keeps a kicker this high (for the last trick)
LAST_MADE_KICKER = ACE  # ... two pair / trips keep a kicker this high
STRAIGHT_DRAW_LAST = False  # draw to an open-ended straight in the last exchange too
HIGH_KEEP = QUEEN  # no pair, no draw: keep up to two cards this high


def card_int(card: str) -> int:
    """`"As"` -> rank * 4 + suit (rank 0 = deuce, 12 = ace; suits s h d c)."""
    return _CARD_INT[card]


def card_str(card: int) -> str:
    return _CARD_STR[card]


# ------------------------------------------------------------------ evaluator


def evaluate(cards: list[int], ace_low: bool = True) -> tuple[int, tuple[int, ...]]:
    """(category, tie-break ranks) of up to five card ints; higher is better.

    With fewer than five cards only pairs/trips/quads count (no straight or
    flush), which is what the exchange heuristics need for a kept subset.
    """
    ranks = sorted((c >> 2 for c in cards), reverse=True)
    counts = Counter(ranks)
    if len(cards) == 5:
        made = _straight_or_flush(cards, ranks, len(counts) == 5, ace_low)
        if made is not None:
            return made
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return (_category_of_groups([n for _, n in groups]), tuple(r for r, _ in groups))


def _straight_or_flush(
    cards: list[int], ranks: list[int], distinct: bool, ace_low: bool
) -> tuple[int, tuple[int, ...]] | None:
    """Five cards' straight flush, straight or flush (`ranks` high first), or None."""
    flush = len({c & 3 for c in cards}) == 1
    if distinct and ranks[0] - ranks[4] == 4:
        return (SF if flush else ST, (ranks[0],))
    if distinct and ace_low and ranks == [ACE, 3, 2, 1, 0]:  # the wheel, five high
        return (SF if flush else ST, (3,))
    return (FL, tuple(ranks)) if flush else None


def _category_of_groups(shape: list[int]) -> int:
    """Quads, full house, trips, two pair, pair or high card, by the rank groups' sizes."""
    top = shape[0] if shape else 1
    second = shape[1] if len(shape) > 1 else 1
    if top == 4:
        return K4
    if top == 3:
        return FH if second == 2 else K3
    if top == 2:
        return P2 if second == 2 else P1
    return HC


def hand_score(cards: list[int]) -> float:
    """A scalar worth of five cards for comparing options: showdown points
    plus a little for higher key ranks (better odds of being the best hand)."""
    cat, key = evaluate(cards)
    return _POINTS[cat] + (key[0] / 26.0 if key else 0.0)


# ------------------------------------------------------------------ exchange


def _straight_draw(cards: list[int]) -> list[int] | None:
    """Four distinct ranks open at both ends (e.g. 5-6-7-8); the 4 cards or None."""
    by_rank: dict[int, int] = {}
    for c in cards:
        by_rank.setdefault(c >> 2, c)
    ranks = sorted(by_rank)
    for i in range(len(ranks) - 3):
        run = ranks[i : i + 4]
        if run[3] - run[0] == 3 and run[0] >= 1 and run[3] <= KING:
            return [by_rank[r] for r in run]
    return None


def _flush_draw(cards: list[int]) -> list[int] | None:
    by_suit: dict[int, list[int]] = {}
    for c in cards:
        by_suit.setdefault(c & 3, []).append(c)
    for group in by_suit.values():
        if len(group) == 4:
            return group
    return None


def keep_for_exchange(hand: list[int], last: bool) -> list[int]:
    """Which cards to keep in an exchange round. `last`: trick play and the
    final showdown follow this round, so a high card is also worth keeping
    for the last trick."""
    cat = evaluate(hand)[0]
    if cat >= ST:  # straight, flush, full house, quads, straight flush: stand pat
        return list(hand)
    if cat in (K3, P2, P1):
        return _keep_made(hand, cat, last)
    return _keep_unmade(hand, last)


def _keep_made(hand: list[int], cat: int, last: bool) -> list[int]:
    """Pairs or trips keep their cards, and in the last round a top kicker."""
    by_rank = Counter(c >> 2 for c in hand)
    made = [c for c in hand if by_rank[c >> 2] >= 2]
    rest = sorted((c for c in hand if by_rank[c >> 2] == 1), reverse=True)
    need = LAST_PAIR_KICKER if cat == P1 else LAST_MADE_KICKER
    if last and rest and (rest[0] >> 2) >= need:
        made.append(rest[0])  # a top kicker also wins the last trick
    return made


def _keep_unmade(hand: list[int], last: bool) -> list[int]:
    """No pair: four to a flush (or an open straight), else one or two high cards."""
    flush = _flush_draw(hand)
    if flush is not None:
        return flush
    straight = _straight_draw(hand)
    if straight is not None and (STRAIGHT_DRAW_LAST or not last):
        return straight
    high = sorted(hand, reverse=True)
    keep = [c for c in high[:2] if (c >> 2) >= HIGH_KEEP]
    if not keep and (last or (high[0] >> 2) >= JACK):
        keep = [high[0]]
    return keep
