"""Online ratings for the arena: each finished unit moves its seats' (mu, sigma)
at once, so the leaderboard follows the play without a refit.

The model is the Plackett-Luce form of Weng and Lin's Bayesian ratings, from
`openskill` (kept to this module): it takes one ranking of 2, 3 or 4 seats
with ties, which is what a unit gives (each bot's summed score over the
unit's rotations, higher first). The leaderboard is ordered by the
conservative `mu - 3 sigma` (openskill's `ordinal`; the AI Challenge's
TrueSkill ladder showed the same as "skill"), so a new version does not jump
to the top on a lucky first unit.

An online filter depends on the order of the results (docs/ratings.md); the
batch maximum-likelihood Elo of referee.stats is order-free and has error
bars, and the arena shows it beside this one (`elo_comparisons` feeds it).
The store keeps the units, never the ratings: `replay` rebuilds every rating
from the defaults in unit order with the same code the live updates use, so
a restarted server has exactly the numbers it had.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from referee.stats.mle import Comparison, comparisons_from_scores

DEFAULT_MU = 25.0
"""Every version starts here, whoever submitted it."""
DEFAULT_SIGMA = DEFAULT_MU / 3
"""The prior's uncertainty: three sigmas reach down to 0, the ordinal of a new version."""
BETA = DEFAULT_SIGMA / 2
"""The spread of one unit's performance around a bot's skill (openskill's default)."""
TAU = DEFAULT_MU / 300
"""Added to sigma before each update, so sigma never freezes (openskill's default)."""

_MODEL = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA, beta=BETA, tau=TAU)


@dataclass(frozen=True, slots=True)
class Rating:
    """A version's skill as a Gaussian: `mu` the estimate, `sigma` its uncertainty."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    @property
    def ordinal(self) -> float:
        """The conservative skill, mu - 3 sigma, that orders the leaderboard."""
        return self.mu - 3.0 * self.sigma


@dataclass(frozen=True, slots=True)
class UnitResult:
    """A finished unit: its seats and each one's summed score (higher is better)."""

    seats: tuple[str, ...]
    scores: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.seats) < 2 or len(set(self.seats)) != len(self.seats):
            raise ValueError(f"a unit seats 2 or more distinct bots, not {list(self.seats)}")
        if len(self.scores) != len(self.seats):
            raise ValueError(f"{len(self.seats)} seats but {len(self.scores)} scores")
        if not all(math.isfinite(s) for s in self.scores):
            raise ValueError(f"scores must be finite numbers, not {list(self.scores)}")


def ranks_from_scores(scores: Sequence[float]) -> list[int]:
    """Places from scores: 1 for the highest, equal scores share a place and
    the next place skips (10, 5, 5, 1 -> 1, 2, 2, 4)."""
    return [1 + sum(other > score for other in scores) for score in scores]


def rate_unit(ratings: Sequence[Rating], scores: Sequence[float]) -> list[Rating]:
    """The seats' ratings after one unit, in seat order."""
    if len(ratings) != len(scores) or len(ratings) < 2:
        raise ValueError(f"a unit needs 2 or more seats, one score each: {len(ratings)} ratings, {len(scores)} scores")
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    places = [float(place) for place in ranks_from_scores(scores)]
    return [Rating(team[0].mu, team[0].sigma) for team in _MODEL.rate(teams, ranks=places)]


def update(ratings: dict[str, Rating], unit: UnitResult) -> None:
    """Apply one unit to `ratings` in place; a key not yet rated starts from the defaults.

    The live server and `replay` both rate through here, in unit order.
    """
    before = [ratings.get(key, Rating()) for key in unit.seats]
    for key, after in zip(unit.seats, rate_unit(before, unit.scores)):
        ratings[key] = after


def replay(units: Iterable[UnitResult]) -> dict[str, Rating]:
    """Every rating recomputed from the defaults, applying `units` in order."""
    ratings: dict[str, Rating] = {}
    for unit in units:
        update(ratings, unit)
    return ratings


def leaderboard(ratings: Mapping[str, Rating]) -> list[tuple[str, Rating]]:
    """Versions best first: by ordinal, then mu, then key (so ties read the same every time)."""
    return sorted(ratings.items(), key=lambda item: (-item[1].ordinal, -item[1].mu, item[0]))


def elo_comparisons(units: Iterable[UnitResult]) -> list[Comparison]:
    """The units as pairwise placements for referee.stats.mle.fit_ratings,
    one cluster per unit, so its error bars count a unit as one sample."""
    return [
        comparison
        for index, unit in enumerate(units)
        for comparison in comparisons_from_scores(dict(zip(unit.seats, unit.scores)), cluster=index)
    ]
