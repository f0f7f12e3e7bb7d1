"""Ratings and match statistics against published and cross-checked vectors.

Reference numbers come from the fastchess/fishtest/cutechess unit tests, and
from Ordo 1.2.6 / BayesElo runs on the same data (see the research notes on
ratings). Each value is checked to the precision it was printed with.
"""

from __future__ import annotations

import math
import random

import pytest

from referee.errors import ConfigError, RefereeError
from referee.stats.mle import Comparison, comparisons_from_scores, fit_ratings
from referee.stats.ratings import (
    RatingError,
    expected_score,
    llr_logistic,
    parse_sprt,
    pentanomial,
    score_to_elo,
    set_counts,
    set_stats,
    sprt,
    sprt_bounds,
    trinomial,
)


def close(value: float, printed: str) -> bool:
    """True if `value` rounds to `printed` (same number of decimals)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(value - float(printed)) <= 0.5 * 10.0**-decimals + 1e-12


def pct(value: float) -> float:
    return 100.0 * value


Z_95 = 1.959963984540054  # NormalDist().inv_cdf(0.975)


# ---- logistic curve ----


def test_expected_score_and_inverse() -> None:
    assert close(expected_score(100), "0.640065")
    assert close(expected_score(200), "0.759747")
    assert expected_score(400) == pytest.approx(10 / 11, abs=1e-15)
    assert expected_score(0) == 0.5
    assert close(score_to_elo(0.76), "200.2409")
    assert score_to_elo(1.0) == math.inf and score_to_elo(0.0) == -math.inf
    for d in (-1500.0, -37.5, 0.0, 12.0, 800.0):
        assert score_to_elo(expected_score(d)) == pytest.approx(d, abs=1e-9)
    assert expected_score(-1e6) == 0.0 and expected_score(1e6) == 1.0  # no overflow


# ---- two-player statistics (§3.1) ----

# W, L, D, Elo, err95, nElo, nElo err95, LOS %
TRINOMIAL = [
    (76, 89, 123, "-15.69", "30.46", "-20.76", "40.13", "15.53"),
    (136, 96, 111, "40.70", "30.43", "49.77", "36.77", "99.60"),
    (34, 356, 0, "-407.99", "63.16", "-508.44", "34.48", "0.00"),
    (55, 40, 5, "52.5116", "68.0046", "54.1139", "68.0961", "94.0327"),
    (30, 30, 40, "0.0000", "53.1580", "0", "68.0961", "50.0000"),
    (60, 40, 100, "34.8601", "34.1593", "49.6337", "48.1512", "97.8324"),
    (500, 450, 1050, "8.6877", "10.4972", "12.6111", "15.2268", "94.7735"),
]


@pytest.mark.parametrize("w,lost,d,elo,err,nelo,nerr,los", TRINOMIAL)
def test_trinomial_vectors(w: int, lost: int, d: int, elo: str, err: str, nelo: str, nerr: str, los: str) -> None:
    s = trinomial(w, lost, d)
    assert s.games == s.samples == w + lost + d
    assert close(s.elo, elo) and close(s.err95, err)
    assert close(s.nelo, nelo) and close(s.nelo_err95, nerr)
    assert close(pct(s.los), los)


def test_trinomial_published_scores() -> None:
    assert close(trinomial(76, 89, 123).score, "0.477")
    assert close(trinomial(34, 356, 0).score, "0.087")
    assert trinomial(55, 40, 5).score == 0.575


def test_perfect_scores_do_not_crash() -> None:
    top = trinomial(10, 0, 0)
    assert top.score == 1.0 and top.elo == math.inf and math.isnan(top.err95) and top.los == 1.0
    bottom = trinomial(0, 7, 0)
    assert bottom.elo == -math.inf and math.isnan(bottom.err95) and bottom.los == 0.0
    draws = trinomial(0, 0, 9)
    assert draws.elo == 0.0 and draws.los == 0.5 and math.isnan(draws.err95)
    assert pentanomial([0, 0, 0, 0, 12]).elo == math.inf
    with pytest.raises(RatingError):
        trinomial(0, 0, 0)


# [LL, LD, WL+DD, WD, WW], Elo, err95, nElo, nElo err95, LOS %
PENTANOMIAL = [
    ([34, 54, 63, 64, 75], "55.58", "27.65", "57.94", "28.28", "100.00"),
    ([332, 433, 498, 333, 334], "-8.64", "10.33", "-9.17", "10.96", "5.05"),
    ([7895, 8757, 5685, 568, 9999], "-21.04", "2.95", "-19.01", "2.65", "0.00"),
    ([5, 20, 50, 30, 15], "43.6578", "31.9964", "60.7886", "43.9559", "99.6641"),
]


@pytest.mark.parametrize("counts,elo,err,nelo,nerr,los", PENTANOMIAL)
def test_pentanomial_vectors(counts: list[int], elo: str, err: str, nelo: str, nerr: str, los: str) -> None:
    s = pentanomial(counts)
    assert s.samples == sum(counts) and s.games == 2 * sum(counts)
    assert close(s.elo, elo) and close(s.err95, err)
    assert close(s.nelo, nelo) and close(s.nelo_err95, nerr)
    assert close(pct(s.los), los)


def test_pentanomial_new_vector_score() -> None:
    assert pentanomial([5, 20, 50, 30, 15]).score == 0.5625


def test_set_stats_equals_pentanomial_and_trinomial() -> None:
    counts = [5, 20, 50, 30, 15]
    scores = [k / 4 for k, c in enumerate(counts) for _ in range(c)]
    random.Random(7).shuffle(scores)
    assert set_counts(scores) == counts
    a, b = set_stats(scores), pentanomial(counts)
    for field in ("games", "samples", "score", "elo", "err95", "los", "nelo", "nelo_err95"):
        assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-12)
    games = [1.0] * 55 + [0.0] * 40 + [0.5] * 5  # 1-game "sets" are plain games
    g, t = set_stats(games, games_per_set=1), trinomial(55, 40, 5)
    assert g.elo == pytest.approx(t.elo) and g.err95 == pytest.approx(t.err95)
    assert g.nelo == pytest.approx(t.nelo) and g.los == pytest.approx(t.los)


def test_three_game_sets() -> None:
    scores = [0.5, 2 / 3, 1 / 3, 5 / 6, 0.5, 1.0, 1 / 6, 2 / 3]
    s = set_stats(scores, games_per_set=3)
    assert s.games == 24 and s.samples == 8
    assert set_counts(scores, 3) == [0, 1, 1, 2, 2, 1, 1]
    mean = sum(scores) / 8
    assert s.score == pytest.approx(mean) and s.elo == pytest.approx(score_to_elo(mean))
    with pytest.raises(RatingError):
        set_counts([0.3], 2)
    with pytest.raises(RatingError):
        set_stats([1.5])


def test_trinomial_mirror_symmetry() -> None:
    a, b = trinomial(55, 40, 5), trinomial(40, 55, 5)
    assert a.elo == pytest.approx(-b.elo) and a.err95 == pytest.approx(b.err95)
    assert a.los + b.los == pytest.approx(1.0) and a.nelo == pytest.approx(-b.nelo)


# ---- SPRT (§2.3, §3.2) ----


def test_sprt_bounds() -> None:
    lo, hi = sprt_bounds(0.05, 0.05)
    assert close(lo, "-2.944439") and close(hi, "2.944439")
    lo, hi = sprt_bounds(0.01, 0.01)
    assert close(lo, "-4.595120") and close(hi, "4.595120")
    lo, hi = sprt_bounds(0.05, 0.10)
    assert close(lo, "-2.251292") and close(hi, "2.890372")
    with pytest.raises(ConfigError):
        sprt_bounds(0.0, 0.05)


LLR_LOGISTIC = [
    ([21184, 40708, 21404], 0.5, 2.5, "-1.571889"),
    ([57030, 106593, 57433], 0.0, 2.0, "-2.593024"),
    ([223, 9863, 21279, 10037, 246], 0.5, 2.5, "-3.074126"),
    ([871, 26175, 55983, 26678, 821], 0.0, 2.0, "-4.978673"),
    ([10789, 19328, 33806, 19402, 10543], -3.0, 1.0, "2.1310678"),  # fishtest self-test
    ([40, 5, 55], 0.0, 10.0, "0.410910"),
    ([5, 20, 50, 30, 15], 0.0, 10.0, "1.437306"),
    ([5, 20, 50, 30, 15], 0.0, 50.0, "3.503829"),
]


@pytest.mark.parametrize("counts,elo0,elo1,llr", LLR_LOGISTIC)
def test_llr_logistic(counts: list[int], elo0: float, elo1: float, llr: str) -> None:
    value = llr_logistic(elo0, elo1, counts)
    assert close(value, llr)
    assert llr_logistic(elo1, elo0, counts) == pytest.approx(-value, abs=1e-9)


def test_llr_zero_counts_are_regularised() -> None:
    value = llr_logistic(0, 10, [0, 0, 4250])  # fishtest turns the zeros into 1e-3
    assert math.isfinite(value) and value > 100


def test_sprt_decisions() -> None:
    h1 = sprt(0, 50, 0.05, 0.05, [5, 20, 50, 30, 15])
    assert h1.decision == "H1" and close(h1.llr, "3.503829") and close(h1.upper, "2.944439")
    assert sprt(0, 10, 0.05, 0.05, [5, 20, 50, 30, 15]).decision is None
    assert sprt(0, 2, 0.05, 0.05, [871, 26175, 55983, 26678, 821]).decision == "H0"
    assert sprt(0, 2, 0.05, 0.05, [57030, 106593, 57433]).decision is None
    with pytest.raises(ConfigError):
        sprt(10, 0, 0.05, 0.05, [1, 2, 3])
    with pytest.raises(RatingError):
        llr_logistic(0, 10, [1, 2, 3, 4])


def test_parse_sprt() -> None:
    assert parse_sprt("0,10") == (0.0, 10.0, 0.05, 0.05)
    assert parse_sprt("-1.75,0.25,0.01,0.02") == (-1.75, 0.25, 0.01, 0.02)
    for bad in ("10", "0,10,0.05", "a,b", "10,0", "0,10,0.6,0.6"):
        with pytest.raises(ConfigError):
            parse_sprt(bad)


# ---- batch maximum likelihood (§3.3) ----

ROUND_ROBIN = [
    ("A", "B", 9, 5, 6),
    ("A", "C", 11, 4, 5),
    ("A", "D", 14, 2, 4),
    ("B", "C", 8, 7, 5),
    ("B", "D", 10, 5, 5),
    ("C", "D", 9, 6, 5),
]


def games(table: list[tuple[str, str, int, int, int]], start: int = 0) -> list[Comparison]:
    """One comparison per game, each game its own cluster."""
    out: list[Comparison] = []
    for a, b, won, lost, drawn in table:
        for score, count in ((1.0, won), (0.0, lost), (0.5, drawn)):
            out += [Comparison(a, b, score, start + len(out) + k) for k in range(count)]
    return out


RR = games(ROUND_ROBIN)
PAIRS = [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")]


def test_round_robin_prior0_matches_ordo() -> None:
    r = fit_ratings(RR, "ABCD", prior=0)
    for name, elo, rob, mod in zip(
        "ABCD",
        ["106.7821", "8.7739", "-22.9340", "-92.6220"],
        ["59.55", "58.41", "58.67", "59.67"],
        ["71.90", "67.83", "67.97", "70.78"],
    ):
        assert close(r.rating(name), elo)
        assert close(r.err(name), rob)
        assert close(r.err95_model[r.players.index(name)], mod)
    for (a, b), e in zip(PAIRS, ["95.97", "96.80", "97.80", "95.19", "96.63", "96.43"]):
        assert close(r.pair_err95(a, b), e) and r.pair_err95(b, a) == r.pair_err95(a, b)
    published = ["0.9773", "0.9957", None, "0.7431", "0.9801", "0.9217"]  # A>D not printed
    for (a, b), p in zip(PAIRS, published):
        if p is None:
            continue
        assert close(r.los(a, b), p)
    assert sum(r.elo) == pytest.approx(0.0, abs=1e-9)
    assert r.flags == ("",) * 4
    assert r.points == (41.5, 31.0, 27.5, 20.0) and r.games == (60.0,) * 4


def test_round_robin_prior2() -> None:
    r = fit_ratings(RR, "ABCD")  # prior 2 is the default
    for name, elo, rob in zip(
        "ABCD", ["102.8738", "8.4863", "-22.1096", "-89.2505"], ["56.99", "56.27", "56.53", "57.23"]
    ):
        assert close(r.rating(name), elo) and close(r.err(name), rob)


def test_round_robin_anchored() -> None:
    r = fit_ratings(RR, "ABCD", prior=0, anchor="D", anchor_value=1500)
    for name, elo, err in zip(
        "ABCD", ["1699.4041", "1601.3960", "1569.6881", "1500"], ["97.80", "96.63", "96.43", "0"]
    ):
        assert close(r.rating(name), elo) and close(r.err(name), err)
    centred = fit_ratings(RR, "ABCD", prior=0)
    for a, b in PAIRS:  # anchoring moves the origin, not the differences
        assert r.rating(a) - r.rating(b) == pytest.approx(centred.rating(a) - centred.rating(b))
        assert r.pair_err95(a, b) == pytest.approx(centred.pair_err95(a, b))
        assert r.los(a, b) == pytest.approx(centred.los(a, b))


def test_expected_points_equal_observed_at_prior0() -> None:
    r = fit_ratings(RR, "ABCD", prior=0)
    expected = dict.fromkeys("ABCD", 0.0)
    for c in RR:
        e = expected_score(r.rating(c.a) - r.rating(c.b))
        expected[c.a] += e
        expected[c.b] += 1.0 - e
    for name, pts in zip("ABCD", (41.5, 31.0, 27.5, 20.0)):
        assert expected[name] == pytest.approx(pts, abs=1e-8)


def test_two_bot_mle_matches_match_statistics() -> None:
    r = fit_ratings(games([("A", "B", 55, 40, 5)]), "AB", prior=0)
    assert close(r.rating("A") - r.rating("B"), "52.5116")
    assert close(r.pair_err95("A", "B"), "67.09")
    assert close(pct(r.los("A", "B")), "93.75")


@pytest.mark.parametrize("k,diff", [(1, "120.4120"), (2, "190.8485"), (3, "240.8240")])
def test_prior_closed_form(k: int, diff: str) -> None:
    r = fit_ratings([Comparison("x", "y", 1.0, g) for g in range(k)], ["x", "y"], prior=2)
    assert close(r.rating("x") - r.rating("y"), diff)
    assert r.rating("x") == pytest.approx(-r.rating("y"))
    assert r.flags == (">", "<")
    assert math.isfinite(r.err("x")) and r.err("x") > 0


# ---- perfect scores (§3.4) ----


def with_e(wins: int) -> list[Comparison]:
    """RR plus bot E playing 10 games against each of A-D, its wins dealt A, B, C, D, A, ..."""
    won = {(("ABCD"[k % 4]), k // 4) for k in range(wins)}
    extra = [Comparison("E", o, float((o, g) in won), ("E", o, g)) for o in "ABCD" for g in range(10)]
    return RR + extra


@pytest.mark.parametrize(
    "wins,elo,robust,model",
    [
        (0, "-558.9", "46.0", "310.9"),
        (1, "-439.8", "165.0", "209.2"),
        (2, "-373.7", "150.9", "169.9"),
        (5, "-259.4", "119.5", "123.2"),
    ],
)
def test_weak_bot_e(wins: int, elo: str, robust: str, model: str) -> None:
    r = fit_ratings(with_e(wins), "ABCDE", prior=2)
    assert close(r.rating("E"), elo)
    assert close(Z_95 * math.sqrt(r.covariance[4][4]), robust)
    assert close(r.err95_model[4], model)
    if wins == 0:  # flagged: the collapsed sandwich is not reported
        assert r.flags == ("", "", "", "", "<") and close(r.err("E"), model)
        for name, v in zip("ABCD", ["242.16", "148.05", "117.61", "51.05"]):
            assert close(r.rating(name), v)
        assert r.pair_err95("E", "A") == pytest.approx(
            Z_95 * math.sqrt(r.covariance_model[4][4] + r.covariance_model[0][0] - 2 * r.covariance_model[0][4])
        )
    else:
        assert r.flags == ("",) * 5 and close(r.err("E"), robust)


def test_perfect_score_with_prior0_is_refused() -> None:
    with pytest.raises(RatingError, match=r"infinite.*\{A, B, C, D\}"):
        fit_ratings(with_e(0), "ABCDE", prior=0)
    with pytest.raises(RatingError, match=r"\{x\}"):
        fit_ratings([Comparison("x", "y", 1.0, 0)], "xy", prior=0)


# ---- multiplayer tables (§3.5) ----

TABLES = [
    dict(W=52, X=31, Y=18, Z=12),
    dict(X=53, W=40, Z=22, Y=22),
    dict(W=55, Y=47, X=30, Z=5),
    dict(Y=52, W=44, X=44, Z=20),
    dict(W=52, Z=35, Y=33, X=10),
    dict(Z=54, X=41, W=38, Y=12),
    dict(W=52, X=51, Y=26, Z=26),
    dict(X=52, Y=30, W=29, Z=14),
    dict(W=52, X=20, Y=19),
    dict(Y=52, Z=40, W=33),
    dict(X=52, W=50, Z=3),
    dict(Z=52, Y=41, X=41),
]
TABLE_COMPS = [c for t, sc in enumerate(TABLES) for c in comparisons_from_scores(sc, t)]


def test_table_decomposition() -> None:
    comps = comparisons_from_scores({"X": 53, "W": 40, "Z": 22, "Y": 22}, "t1")
    got = {(c.a, c.b): c.score_a for c in comps}
    assert got == {("W", "X"): 0.0, ("W", "Y"): 1.0, ("W", "Z"): 1.0, ("X", "Y"): 1.0, ("X", "Z"): 1.0, ("Y", "Z"): 0.5}
    assert all(c.cluster == "t1" and c.weight == 1.0 for c in comps)
    assert len(comparisons_from_scores({"a": 1, "b": 2, "c": 3}, 0)) == 3
    with pytest.raises(RatingError):
        comparisons_from_scores({"a": 1}, 0)


def test_multiplayer_prior0() -> None:
    r = fit_ratings(TABLE_COMPS, "WXYZ", prior=0)
    for k, (elo, rob, naive, share) in enumerate(
        zip(
            ["103.941", "55.814", "-46.096", "-113.659"],
            ["121.99", "110.76", "111.67", "139.63"],
            ["102.26", "98.48", "98.04", "103.41"],
            ["68.33", "60.00", "41.67", "30.00"],
        )
    ):
        assert close(r.elo[k], elo) and close(r.err95[k], rob) and close(r.err95_model[k], naive)
        assert close(pct(r.points[k] / r.games[k]), share)
    for (a, b), p in zip(
        [("W", "X"), ("W", "Y"), ("W", "Z"), ("X", "Y"), ("X", "Z"), ("Y", "Z")],
        ["0.6896", "0.9375", "0.9772", "0.8911", "0.9401", "0.7316"],
    ):
        assert close(r.los(a, b), p) and r.los(a, b) + r.los(b, a) == pytest.approx(1.0)


def test_multiplayer_prior2_and_weighted() -> None:
    r = fit_ratings(TABLE_COMPS, "WXYZ", prior=2)
    for k, (elo, rob) in enumerate(
        zip(["96.381", "51.846", "-42.870", "-105.357"], ["111.78", "102.16", "103.45", "127.86"])
    ):
        assert close(r.elo[k], elo) and close(r.err95[k], rob)
    weighted = [c for t, sc in enumerate(TABLES) for c in comparisons_from_scores(sc, t, weight=1 / (len(sc) - 1))]
    w = fit_ratings(weighted, "WXYZ", prior=0)
    for k, (elo, rob) in enumerate(
        zip(["93.188", "54.393", "-45.718", "-101.863"], ["126.87", "109.57", "113.23", "136.64"])
    ):
        assert close(w.elo[k], elo) and close(w.err95[k], rob)


# ---- properties ----


def test_swapping_sides_and_player_order_changes_nothing() -> None:
    r = fit_ratings(TABLE_COMPS, "WXYZ", prior=2)
    flipped = [Comparison(c.b, c.a, 1.0 - c.score_a, c.cluster) for c in TABLE_COMPS]
    s = fit_ratings(flipped, "ZYXW", prior=2)
    for a in "WXYZ":
        assert s.rating(a) == pytest.approx(r.rating(a), abs=1e-9)
        assert s.err(a) == pytest.approx(r.err(a), rel=1e-9)
        for b in "WXYZ":
            if a != b:
                assert s.los(a, b) == pytest.approx(r.los(a, b), rel=1e-9)


def test_mirrored_results_mirror_ratings() -> None:
    mirrored = [Comparison(c.a, c.b, 1.0 - c.score_a, c.cluster) for c in RR]
    r, m = fit_ratings(RR, "ABCD"), fit_ratings(mirrored, "ABCD")
    for a in "ABCD":
        assert m.rating(a) == pytest.approx(-r.rating(a), abs=1e-9)
        assert m.err(a) == pytest.approx(r.err(a), rel=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_random_tournaments(seed: int) -> None:
    """Fixed-point and scale properties on random 2-4 bot tables."""
    rng = random.Random(seed)
    bots = [f"bot{i}" for i in range(rng.randint(3, 7))]
    comps: list[Comparison] = []
    for t in range(60):
        table = rng.sample(bots, rng.randint(2, min(4, len(bots))))
        comps += comparisons_from_scores({b: rng.randint(0, 4) for b in table}, t)
    r = fit_ratings(comps, bots, prior=0)
    assert sum(r.elo) == pytest.approx(0.0, abs=1e-8)
    exp = dict.fromkeys(bots, 0.0)
    for c in comps:
        e = expected_score(r.rating(c.a) - r.rating(c.b))
        exp[c.a] += e
        exp[c.b] += 1 - e
    for k, b in enumerate(bots):
        assert exp[b] == pytest.approx(r.points[k], abs=1e-7)
    shifted = fit_ratings(comps, bots, prior=2, anchor=bots[0], anchor_value=1000)
    assert shifted.rating(bots[0]) == 1000 and shifted.err(bots[0]) == 0.0
    for a in bots:
        for b in bots:
            if a != b:
                assert r.los(a, b) + r.los(b, a) == pytest.approx(1.0)
                assert r.pair_err95(a, b) > 0


def test_disconnected_graph_is_refused() -> None:
    comps = [
        Comparison("A", "B", 1.0, 0),
        Comparison("A", "B", 0.5, 1),
        Comparison("C", "D", 0.0, 2),
        Comparison("C", "D", 1.0, 3),
    ]
    with pytest.raises(RatingError, match=r"\{A, B\} \| \{C, D\}"):
        fit_ratings(comps, "ABCD")
    with pytest.raises(RatingError, match=r"\{E\}"):  # a bot with no games at all
        fit_ratings(RR, "ABCDE")
    assert issubclass(RatingError, RefereeError)


def test_bad_input_is_refused() -> None:
    with pytest.raises(RatingError):
        fit_ratings([Comparison("A", "Q", 1.0, 0)], "AB")
    with pytest.raises(RatingError):
        fit_ratings([Comparison("A", "A", 1.0, 0)], "AB")
    with pytest.raises(RatingError):
        fit_ratings([Comparison("A", "B", 1.5, 0)], "AB")
    with pytest.raises(RatingError):
        fit_ratings(RR, "ABCD", anchor="Q")
    with pytest.raises(RatingError):
        fit_ratings(RR, "AABCD")
    with pytest.raises(RatingError):
        fit_ratings(RR, "ABCD").rating("Q")
