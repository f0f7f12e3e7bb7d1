"""The arena's online ratings: Plackett-Luce updates checked by hand, scores
turned into places, the conservative ordinal, and a replay that gives the
same floats every time."""

from __future__ import annotations

import ast
import math
import random

import pytest
from arena_sim import spearman
from paths import ROOT

from referee.arena.online import (
    BETA,
    DEFAULT_MU,
    DEFAULT_SIGMA,
    TAU,
    Rating,
    UnitResult,
    elo_comparisons,
    leaderboard,
    ranks_from_scores,
    rate_unit,
    replay,
    update,
)
from referee.stats.mle import fit_ratings


def test_the_defaults_are_explicit_and_a_new_version_has_ordinal_zero() -> None:
    assert (DEFAULT_MU, DEFAULT_SIGMA, BETA, TAU) == (25.0, 25.0 / 3, 25.0 / 6, 25.0 / 300)
    assert Rating() == Rating(25.0, 25.0 / 3)
    assert Rating().ordinal == pytest.approx(0.0, abs=1e-12)


def test_ordinal_is_mu_minus_three_sigma() -> None:
    assert Rating(30.0, 2.0).ordinal == 24.0
    assert Rating(10.0, 5.0).ordinal == -5.0


def test_two_equal_bots_by_hand() -> None:
    # Plackett-Luce with two seats, both at the prior: sigma is first widened
    # by tau, c^2 = sigma1^2 + sigma2^2 + 2 beta^2, each wins with p = 1/2,
    # mu moves by sigma^2/c * (1 - p), and sigma^2 shrinks by the factor
    # 1 - (sigma/c) * sigma^2/c^2 * p (1 - p).
    s2 = DEFAULT_SIGMA**2 + TAU**2
    c = math.sqrt(2 * s2 + 2 * BETA**2)
    step = s2 / c * 0.5
    sigma = math.sqrt(s2 * (1 - math.sqrt(s2) / c * s2 / c**2 * 0.25))

    winner, loser = rate_unit([Rating(), Rating()], [7.0, 3.0])

    assert winner.mu == pytest.approx(DEFAULT_MU + step, abs=1e-12)
    assert loser.mu == pytest.approx(DEFAULT_MU - step, abs=1e-12)
    assert winner.mu - DEFAULT_MU == pytest.approx(DEFAULT_MU - loser.mu, abs=1e-12)
    assert winner.sigma == loser.sigma == pytest.approx(sigma, abs=1e-12)
    assert winner.sigma < DEFAULT_SIGMA
    assert (round(winner.mu, 4), round(loser.mu, 4), round(winner.sigma, 4)) == (27.6354, 22.3646, 8.0659)


def test_the_seat_order_does_not_matter() -> None:
    a, b = rate_unit([Rating(), Rating()], [7.0, 3.0])
    b2, a2 = rate_unit([Rating(), Rating()], [3.0, 7.0])
    assert (a, b) == (a2, b2)


def test_a_tie_moves_the_mus_toward_each_other() -> None:
    high, low = rate_unit([Rating(30.0, 6.0), Rating(25.0, 6.0)], [5.0, 5.0])
    assert 25.0 < low.mu < high.mu < 30.0
    assert 30.0 - high.mu == pytest.approx(low.mu - 25.0, abs=1e-12)
    equal = rate_unit([Rating(), Rating()], [5.0, 5.0])
    assert equal[0] == equal[1] and equal[0].mu == DEFAULT_MU and equal[0].sigma < DEFAULT_SIGMA


def test_three_and_four_seats_are_ordered_by_their_scores() -> None:
    three = rate_unit([Rating()] * 3, [10.0, 30.0, 20.0])
    assert three[1].mu > three[2].mu > DEFAULT_MU > three[0].mu
    four = rate_unit([Rating()] * 4, [4.0, 3.0, 2.0, 1.0])
    assert [r.mu for r in four] == sorted((r.mu for r in four), reverse=True)
    assert len({r.mu for r in four}) == 4
    assert all(r.sigma < DEFAULT_SIGMA for r in three + four)


def test_tied_seats_get_the_same_update() -> None:
    first, second, third, last = rate_unit([Rating()] * 4, [10.0, 5.0, 5.0, 1.0])
    assert second == third
    assert first.mu > second.mu > last.mu


def test_scores_become_places_higher_first_ties_shared() -> None:
    assert ranks_from_scores([10, 5, 5, 1]) == [1, 2, 2, 4]
    assert ranks_from_scores([1, 2, 3]) == [3, 2, 1]
    assert ranks_from_scores([3, 3]) == [1, 1]
    assert ranks_from_scores([-2.5, 0.0, -2.5, 7.0]) == [3, 2, 3, 1]


def test_a_unit_result_refuses_what_is_not_a_unit() -> None:
    with pytest.raises(ValueError, match="distinct"):
        UnitResult(("a", "a"), (1.0, 2.0))
    with pytest.raises(ValueError, match="distinct"):
        UnitResult(("a",), (1.0,))
    with pytest.raises(ValueError, match="scores"):
        UnitResult(("a", "b"), (1.0,))
    with pytest.raises(ValueError, match="finite"):
        UnitResult(("a", "b"), (1.0, math.nan))
    with pytest.raises(ValueError):
        rate_unit([Rating()], [1.0])


def recorded_units(count: int, seed: int) -> list[UnitResult]:
    rng = random.Random(seed)
    bots = [f"v{i}" for i in range(12)]
    units = []
    for _ in range(count):
        seats = tuple(rng.sample(bots, rng.choice((2, 3, 4))))
        units.append(UnitResult(seats, tuple(float(rng.randint(0, 6) + bots.index(k) // 3) for k in seats)))
    return units


def test_replay_gives_the_same_floats_every_time_and_matches_the_live_updates() -> None:
    units = recorded_units(600, seed=3)
    first, second = replay(units), replay(list(units))
    assert first == second  # exact: == on the floats
    live: dict[str, Rating] = {}
    for unit in units:
        update(live, unit)
    assert live == first
    assert replay(reversed(units)) != first  # an online rating depends on the order: replay in unit order


def test_the_leaderboard_orders_by_ordinal() -> None:
    ratings = {"sure": Rating(30.0, 1.0), "lucky": Rating(40.0, 8.0), "new": Rating(), "tie": Rating(30.0, 1.0)}
    assert [key for key, _ in leaderboard(ratings)] == ["sure", "tie", "lucky", "new"]


def test_the_elo_refit_reads_the_same_units() -> None:
    units = recorded_units(400, seed=5)
    comparisons = elo_comparisons(units)
    assert len(comparisons) == sum(len(u.seats) * (len(u.seats) - 1) // 2 for u in units)
    assert len({c.cluster for c in comparisons}) == len(units)
    online = replay(units)
    players = sorted(online)
    elo = fit_ratings(comparisons, players)
    # The two views of the same units agree on the order (the health check the arena shows).
    assert spearman([online[p].ordinal for p in players], [elo.rating(p) for p in players]) > 0.9


def test_openskill_is_kept_to_the_online_module() -> None:
    users = []
    for path in sorted((ROOT / "referee").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n.split(".")[0] == "openskill" for n in names):
                users.append(str(path.relative_to(ROOT)))
    assert users == ["referee/arena/online.py"]
