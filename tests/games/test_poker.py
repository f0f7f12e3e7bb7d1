"""Card notation and five-card poker hand values (rules.md §0.1 and §3).

The exhaustive enumeration re-derives the category counts of §3 over all
C(52,5) hands for both `ace_low_straight` settings. Every equivalence class is
also ranked by an independent, deliberately naive reference evaluator written
here from the §3 key table, and the two orders must agree exactly.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import ConfigError
from referee.games.cards import (
    CARD_STR,
    FULL_DECK,
    CardError,
    card_strs,
    format_cards,
    parse_card,
    parse_cards,
    rank,
    sort_hand,
    suit,
)
from referee.games.poker import (
    CATEGORY_CODES,
    DEFAULT_HAND_POINTS,
    category_code,
    describe,
    evaluate,
    hand_points,
    hand_value,
    key_ranks,
)


def value(text: str, ace_low: bool = True) -> int:
    return evaluate(parse_cards(text), ace_low)


# ------------------------------------------------------------------ cards


def test_card_encoding_is_rank_times_four_plus_suit():
    """§0.1: ranks 2..A, suits s h d c; int = rank*4 + suit."""
    assert parse_card("2s") == 0
    assert parse_card("2h") == 1
    assert parse_card("2d") == 2
    assert parse_card("2c") == 3
    assert parse_card("3s") == 4
    assert parse_card("Td") == 8 * 4 + 2
    assert parse_card("As") == 48
    assert parse_card("Ac") == 51
    assert rank(parse_card("Kh")) == 11 and suit(parse_card("Kh")) == 1
    assert len(FULL_DECK) == 52 and len(set(CARD_STR)) == 52
    assert all(parse_card(CARD_STR[c]) == c for c in FULL_DECK)


def test_card_parse_is_lenient_about_case_and_ten():
    assert parse_card("as") == parse_card("As") == parse_card("AS")
    assert parse_card("10h") == parse_card("Th") == parse_card("th")
    assert parse_card(" Qd ") == parse_card("Qd")


@pytest.mark.parametrize("bad", ["", "A", "Asx", "1s", "11h", "Ax", "Zs", "s A", "AA", "♠A", "0s", "10"])
def test_card_parse_errors_say_what_is_expected(bad):
    with pytest.raises(CardError) as info:
        parse_card(bad)
    assert repr(bad) in str(info.value)
    assert "23456789TJQKA" in str(info.value)
    # CardError is a ConfigError and a ValueError, so callers may catch either.
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)


def test_parse_cards_accepts_strings_and_lists_and_rejects_duplicates():
    assert parse_cards("As Kd") == [48, 46]
    assert parse_cards(["As", "Kd"]) == [48, 46]
    assert parse_cards("") == []
    with pytest.raises(CardError, match="duplicate card"):
        parse_cards("As Kd As")
    with pytest.raises(CardError, match=r"duplicate card.*As"):
        parse_cards(["as", "AS"])
    with pytest.raises(CardError, match="bad card"):
        parse_cards("As Xx")


def test_format_and_sort():
    cards = parse_cards("2c As Td Kh 9s")
    assert format_cards(cards) == "2c As Td Kh 9s"
    assert card_strs(cards) == ("2c", "As", "Td", "Kh", "9s")
    # Display order: suits s h d c, high rank first within a suit.
    assert format_cards(sort_hand(cards)) == "As 9s Kh Td 2c"
    assert format_cards([]) == ""


# ------------------------------------------------------------------ exhaustive enumeration

EXPECTED_COUNTS = {
    True: {
        "RF": 4,
        "SF": 36,
        "4K": 624,
        "FH": 3744,
        "FL": 5108,
        "ST": 10200,
        "3K": 54912,
        "2P": 123552,
        "1P": 1098240,
        "HC": 1302540,
    },
    False: {
        "RF": 4,
        "SF": 32,
        "4K": 624,
        "FH": 3744,
        "FL": 5112,
        "ST": 9180,
        "3K": 54912,
        "2P": 123552,
        "1P": 1098240,
        "HC": 1303560,
    },
}
# Distinct values per category; SF includes RF here (§3: "SF (incl. RF) 10/9").
EXPECTED_CLASSES = {
    True: {"HC": 1277, "1P": 2860, "2P": 858, "3K": 858, "ST": 10, "FL": 1277, "FH": 156, "4K": 156, "SF": 10},
    False: {"HC": 1278, "1P": 2860, "2P": 858, "3K": 858, "ST": 9, "FL": 1278, "FH": 156, "4K": 156, "SF": 9},
}


@pytest.mark.slow
@pytest.mark.parametrize("ace_low", [True, False], ids=["ace_low", "ace_high_only"])
def test_exhaustive_category_counts_and_7462_classes(ace_low):
    """§3: counts over all 2,598,960 hands, and 7,462 distinct values."""
    ev = functools.partial(evaluate, ace_low_straight=ace_low)
    by_value = Counter(map(ev, itertools.combinations(range(52), 5)))
    assert sum(by_value.values()) == 2_598_960
    assert len(by_value) == 7462

    per_cat: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    for v, n in by_value.items():
        code = category_code(v)
        per_cat[code] += n
        classes["SF" if code == "RF" else code] += 1
    assert dict(per_cat) == EXPECTED_COUNTS[ace_low]
    assert dict(classes) == EXPECTED_CLASSES[ace_low]
    if ace_low:
        scoring = sum(n for c, n in per_cat.items() if c != "HC")
        assert scoring == 1_296_420


# ------------------------------------------------------------------ independent reference order


def reference_key(cards: list[int], ace_low: bool) -> tuple:
    """A naive evaluator written straight from the §3 table: (category, key)."""
    ranks = sorted((c >> 2 for c in cards), reverse=True)
    flush = len({c & 3 for c in cards}) == 1
    counts = Counter(ranks)
    distinct = sorted(counts, reverse=True)
    high = None
    if len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            high = distinct[0]
        elif ace_low and distinct == [12, 3, 2, 1, 0]:
            high = 3  # the wheel is 5-high
    by_group = [r for r, _ in sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]
    shape = sorted(counts.values(), reverse=True)
    if high is not None and flush:
        return (8, (high,))
    if shape == [4, 1]:
        return (7, tuple(by_group))
    if shape == [3, 2]:
        return (6, tuple(by_group))
    if flush:
        return (5, tuple(ranks))
    if high is not None:
        return (4, (high,))
    if shape == [3, 1, 1]:
        return (3, tuple(by_group))
    if shape == [2, 2, 1]:
        return (2, tuple(by_group))
    if shape == [2, 1, 1, 1]:
        return (1, tuple(by_group))
    return (0, tuple(ranks))


def class_representatives():
    """One hand per rank multiset (non-flush), plus a flush for 5 distinct ranks."""
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if max(Counter(ranks).values()) > 4:
            continue
        seen: Counter[int] = Counter()
        cards = []
        for r in ranks:
            cards.append(r * 4 + seen[r])
            seen[r] += 1
        if len(set(ranks)) == 5:
            yield [r * 4 for r in ranks]  # all spades: a flush
            cards[-1] += 1  # one heart: not a flush
        yield cards


@pytest.mark.parametrize("ace_low", [True, False], ids=["ace_low", "ace_high_only"])
def test_value_order_matches_an_independent_reference(ace_low):
    """§3: the int order equals the (category, key) lexicographic order, on every class."""
    pairs = [(evaluate(h, ace_low), reference_key(h, ace_low)) for h in class_representatives()]
    assert len(pairs) == 7462
    values = {v for v, _ in pairs}
    keys = {k for _, k in pairs}
    assert len(values) == len(keys) == 7462  # the mapping is a bijection
    assert sorted(pairs) == sorted(pairs, key=lambda p: p[1])


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(52)), st.permutations(range(4)), st.booleans())
def test_value_ignores_card_order_and_suit_names(deck, suit_map, ace_low):
    """§3: suits never break ties; renaming suits or reordering cards changes nothing."""
    hand = list(deck[:5])
    renamed = [(c >> 2) * 4 + suit_map[c & 3] for c in reversed(hand)]
    v = evaluate(hand, ace_low)
    assert v == evaluate(renamed, ace_low)
    # Same category as the reference (which files RF under SF).
    assert reference_key(hand, ace_low)[0] == min(CATEGORY_CODES.index(category_code(v)), 8)


# ------------------------------------------------------------------ §3 pairwise vectors


def test_vector1_second_kicker_decides():
    assert value("As Ad Kc Qh 2s") > value("Ah Ac Kd Jh Ts")


def test_vector2_wheel_is_lowest_straight_but_beats_a_pair():
    wheel = value("5c 4d 3h 2s Ac")
    assert category_code(wheel) == "ST"
    assert wheel < value("6c 5d 4h 3s 2d")
    assert wheel > value("Ad Ah Kc Qs Jd")


def test_vector3_no_wrap_around():
    assert category_code(value("Ks Ah 2d 3c 4h")) == "HC"
    assert category_code(value("Ks Ah 2d 3c 4h", ace_low=False)) == "HC"


def test_vector4_steel_wheel_is_straight_flush_not_royal():
    v = value("5h 4h 3h 2h Ah")
    assert category_code(v) == "SF"
    assert v < value("6h 5h 4h 3h 2h") < value("As Ks Qs Js Ts")
    assert category_code(value("5h 4h 3h 2h Ah", ace_low=False)) == "FL"


def test_vector5_equal_straights_in_different_suits_tie_exactly():
    assert value("9c 8d 7h 6s 5c") == value("9h 8s 7d 6c 5h")


def test_vector6_two_royals_tie_exactly():
    a, b = value("As Ks Qs Js Ts"), value("Ah Kh Qh Jh Th")
    assert a == b and category_code(a) == "RF"


def test_ace_low_setting_only_changes_the_wheel():
    """C07 hand: A-2-3-4-5 is a straight by default, high card otherwise."""
    assert category_code(value("Ac 2d 3h 4s 5c")) == "ST"
    assert category_code(value("Ac 2d 3h 4s 5c", ace_low=False)) == "HC"
    assert value("Ac 2d 3h 4s 5c", ace_low=False) < value("Kh Kd 7c 6s 2h", ace_low=False)
    # Ace-high straights are unaffected.
    assert value("Ac Kd Qh Js Tc") == value("Ac Kd Qh Js Tc", ace_low=False)


def test_category_order_and_key_rules():
    """§3: HC < 1P < 2P < 3K < ST < FL < FH < 4K < SF < RF, with the key table."""
    ladder = [
        "Ah Kd 9c 7s 3h",
        "2h 2d 3c 4s 5s",
        "3h 3d 2c 2s 4s",
        "2h 2d 2c 3s 4h",
        "6s 5h 4d 3c 2s",
        "7h 5h 4h 3h 2h",
        "2h 2d 2c 3s 3h",
        "2h 2d 2c 2s 3h",
        "6h 5h 4h 3h 2h",
        "Ah Kh Qh Jh Th",
    ]
    values = [value(h) for h in ladder]
    assert [category_code(v) for v in values] == list(CATEGORY_CODES)
    assert values == sorted(values)
    # FH: trips decide, not the highest rank anywhere (liamcco's house rule is rejected).
    assert value("3h 3d 3c Ks Kh") > value("2h 2d 2c As Ah")
    # 2P: high pair, then low pair, then kicker.
    assert value("Kh Kd 3c 3s 2h") > value("Qh Qd Jc Js Ah")
    assert value("Kh Kd 4c 4s 2h") > value("Ks Kc 3d 3h Ah")
    assert value("Kh Kd 4c 4s 3h") > value("Ks Kc 4d 4h 2h")
    # 3K: trips rank first.
    assert value("4h 4d 4c 2s 3h") > value("3h 3d 3c As Kh")
    # Flush: all five ranks.
    assert value("Kh Jh 8h 6h 3h") > value("Kd Jd 8d 6d 2d")
    # Pair: three kickers in order.
    assert value("9h 9d Ac 5s 4h") > value("9s 9c Kd Qh Jh")
    assert value("9h 9d Ac 5s 4h") > value("9s 9c Ad 5h 3h")


# ------------------------------------------------------------------ describe() and HandValue


@pytest.mark.parametrize(
    "hand, words",
    [
        ("Ks Kd 4c 4h 9s", "two pair, kings and fours"),
        ("5c 4d 3h 2s Ac", "straight, five high"),
        ("As Ks Qs Js Ts", "royal flush"),
        ("Ah Ad 9c 5s 2h", "pair of aces"),
        ("7h 7d 7c Ks 2h", "three of a kind, sevens"),
        ("3h 3d 3c Js Jh", "full house, threes over jacks"),
        ("9h 9d 9c 9s 2h", "four of a kind, nines"),
        ("Qd 8d 6d 4d 3d", "flush, queen high"),
        ("9c 8c 7c 6c 5c", "straight flush, nine high"),
        ("5h 4h 3h 2h Ah", "straight flush, five high"),
        ("Ac Kd Qh Js Tc", "straight, ace high"),
        ("Ah Kd 9c 7s 3h", "high card, ace high"),
        ("7h 5d 4c 3s 2h", "high card, seven high"),
        ("6h 6d Tc Ts 2h", "two pair, tens and sixes"),
    ],
)
def test_describe_wording(hand, words):
    assert describe(value(hand)) == words
    assert hand_value(hand).describe() == words


def test_hand_value_api():
    royal = hand_value("As Ks Qs Js Ts")
    steel = hand_value("5h 4h 3h 2h Ah")
    assert royal > steel and royal != steel
    assert royal.category == "RF" and royal.name == "royal flush" and royal.points == 52
    assert steel.category == "SF" and steel.name == "straight flush" and steel.points == 8
    assert royal.cards == ("As", "Ks", "Qs", "Js", "Ts")
    assert str(royal) == "As Ks Qs Js Ts: royal flush"
    # Equality ignores which cards (only the value counts): an exact tie.
    a, b = hand_value("9c 8d 7h 6s 5c"), hand_value(["9h", "8s", "7d", "6c", "5h"])
    assert a == b and a.cards != b.cards and not a < b and not b < a
    # Lists of strings, lower case, the wheel under either setting.
    assert hand_value(["ah", "2d", "3h", "4s", "5c"]).category == "ST"
    assert hand_value("Ah 2d 3h 4s 5c", ace_low_straight=False).category == "HC"
    assert hand_value("Ah 2d 3h 4s 5c", ace_low_straight=False).points == 0
    assert sorted([royal, a, steel]) == [a, steel, royal]


@pytest.mark.parametrize("bad", ["As Ks Qs Js", "As Ks Qs Js Ts 9s", ""])
def test_hand_value_needs_exactly_five_cards(bad):
    with pytest.raises(ConfigError, match="exactly 5 cards"):
        hand_value(bad)


def test_hand_value_rejects_bad_and_duplicate_cards():
    with pytest.raises(CardError):
        hand_value("As Ks Qs Js Xs")
    with pytest.raises(CardError, match="duplicate"):
        hand_value("As Ks Qs Js As")


def test_points_table_and_key_ranks():
    """CH-11 table; high card scores nothing; a custom table is honoured."""
    examples = {
        "HC": "Ah Kd 9c 7s 3h",
        "1P": "2h 2d 3c 4s 5s",
        "2P": "3h 3d 2c 2s 4s",
        "3K": "2h 2d 2c 3s 4h",
        "ST": "6s 5h 4d 3c 2s",
        "FL": "7h 5h 4h 3h 2h",
        "FH": "2h 2d 2c 3s 3h",
        "4K": "2h 2d 2c 2s 3h",
        "SF": "6h 5h 4h 3h 2h",
        "RF": "Ah Kh Qh Jh Th",
    }
    expected = {"HC": 0, "1P": 1, "2P": 2, "3K": 3, "ST": 4, "FL": 5, "FH": 6, "4K": 7, "SF": 8, "RF": 52}
    for code, hand in examples.items():
        assert hand_points(value(hand)) == expected[code], code
    assert {k: v for k, v in expected.items() if k != "HC"} == DEFAULT_HAND_POINTS
    assert hand_points(value(examples["4K"]), {**DEFAULT_HAND_POINTS, "4K": 8}) == 8
    assert key_ranks(value("Ks Kd 4c 4h 9s")) == [11, 2, 7]
    assert key_ranks(value("5c 4d 3h 2s Ac")) == [3]
    assert key_ranks(value("Qd 8d 6d 4d 3d")) == [10, 6, 4, 2, 1]
    assert key_ranks(value("3h 3d 3c Js Jh")) == [1, 9]


def test_random_pairs_agree_with_reference():
    """Spot check on random deals: the int comparison equals the reference comparison."""
    rng = random.Random(3)
    for _ in range(20_000):
        deck = rng.sample(range(52), 10)
        a, b = deck[:5], deck[5:]
        for ace_low in (True, False):
            va, vb = evaluate(a, ace_low), evaluate(b, ace_low)
            ka, kb = reference_key(a, ace_low), reference_key(b, ace_low)
            assert (va > vb) == (ka > kb) and (va == vb) == (ka == kb)


def test_the_tables_without_ace_low_straights_equal_a_full_build() -> None:
    from referee.games import poker

    assert poker._TABLES[False] == poker._build(False)  # derived from the other setting's, wheel changed
    assert poker._TABLES[False] != poker._TABLES[True]
