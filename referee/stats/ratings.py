"""Elo ratings and match statistics for bot tournaments.

Two kinds of question, two kinds of answer:

* Two bots, many games: `trinomial` (per-game W/L/D), `set_stats` and
  `pentanomial` (per deal set, when the same deal is replayed with the seats
  rotated), and the GSPRT in `sprt`. The formulas are the fastchess/fishtest
  ones, so the numbers can be checked against those tools.
* Many bots: `referee.stats.mle.fit_ratings` is a batch maximum-likelihood
  fit of the logistic Elo model (Bradley-Terry, draw = 1/2; the Ordo model)
  over every pairwise comparison at once. Unlike online Elo it does not depend on game order.
  A 3-4 bot table enters as its pairwise placements (`comparisons_from_scores`);
  under Plackett-Luce the pairwise fit is consistent and "100 Elo" still means
  a 64 % chance to finish ahead. Error bars are sandwich (cluster-robust)
  estimates, clustered by game, deal set or table, because comparisons from
  one table, and games on one deal, are not independent.

Everything is on the standard scale E(d) = 1 / (1 + 10^(-d/400)). Pure stdlib.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

from referee.errors import ConfigError, RefereeError

N01 = NormalDist()
Z95 = N01.inv_cdf(0.975)  # 1.959963984540054, the constant fastchess hard-codes
K = math.log(10.0) / 400.0  # slope of the logit per Elo point
NELO_SCALE = 800.0 / math.log(10.0)  # nElo units: score excess per standard deviation


class RatingError(RefereeError):
    """The results cannot be rated as asked (disconnected schedule, no games...)."""


def expected_score(diff: float) -> float:
    """Expected score of a bot rated `diff` Elo above its opponent."""
    z = K * diff
    if z >= 0:  # two branches so that exp() never overflows
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def score_to_elo(score: float) -> float:
    """Inverse of `expected_score`; +-inf for a perfect or a zero score."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return 400.0 * math.log10(score / (1.0 - score))


# ---- Two-player match statistics ----


@dataclass(frozen=True, slots=True)
class MatchStats:
    """Head-to-head summary from bot A's point of view.

    `samples` is the number of independent observations the error bar is based
    on: games for `trinomial`, deal sets for `set_stats`/`pentanomial`.
    """

    games: int
    samples: int
    score: float  # mean score per game, in [0, 1]
    elo: float
    err95: float  # half-width of the 95 % interval, mapped from score to Elo
    los: float  # probability that A is the stronger bot (score-based)
    nelo: float  # normalised Elo: score excess per standard deviation
    nelo_err95: float


def _match_stats(support: Sequence[float], counts: Sequence[float], games_per_set: int) -> MatchStats:
    """Shared core: `counts[i]` samples scored `support[i]` (a per-game mean)."""
    n = sum(counts)
    if n <= 0:
        raise RatingError("no games to compute statistics from")
    mu = sum(c * a for c, a in zip(counts, support)) / n
    var = sum(c * (a - mu) ** 2 for c, a in zip(counts, support)) / n
    sd = math.sqrt(var)
    se = sd / math.sqrt(n)
    elo = score_to_elo(mu)
    games = round(n) * games_per_set
    if se == 0.0:  # every sample identical (e.g. 10-0-0): no spread to measure
        sign = (mu > 0.5) - (mu < 0.5)
        return MatchStats(
            games,
            round(n),
            mu,
            elo,
            math.nan,
            0.5 + 0.5 * sign,
            math.copysign(math.inf, sign) if sign else math.nan,
            math.nan,
        )
    err95 = (score_to_elo(mu + Z95 * se) - score_to_elo(mu - Z95 * se)) / 2.0
    per_game_sd = sd * math.sqrt(games_per_set)  # a set of m games has ~m times the variance of a mean
    return MatchStats(
        games,
        round(n),
        mu,
        elo,
        err95,
        N01.cdf((mu - 0.5) / se),
        (mu - 0.5) / per_game_sd * NELO_SCALE,
        Z95 * se / per_game_sd * NELO_SCALE,
    )


def trinomial(wins: int, losses: int, draws: int) -> MatchStats:
    """Per-game statistics; right when games are independent (no replayed deals)."""
    if min(wins, losses, draws) < 0:
        raise RatingError("win/loss/draw counts must not be negative")
    return _match_stats((0.0, 0.5, 1.0), (losses, draws, wins), 1)


def set_counts(set_scores: Iterable[float], games_per_set: int = 2) -> list[int]:
    """Histogram of set mean scores over the 2m+1 possible values (for `sprt`).

    For 2-game sets this is the pentanomial vector [LL, LD, WL+DD, WD, WW].
    """
    if games_per_set < 1:
        raise RatingError("games_per_set must be at least 1")
    steps = 2 * games_per_set
    counts = [0] * (steps + 1)
    for s in set_scores:
        k = round(s * steps)
        if not 0 <= k <= steps or abs(k - s * steps) > 1e-9:
            raise RatingError(f"set score {s!r} is not a multiple of 1/{steps} in [0, 1]")
        counts[k] += 1
    return counts


def set_stats(set_scores: Sequence[float], games_per_set: int = 2) -> MatchStats:
    """Statistics over deal sets; each entry is one set's mean score for bot A.

    Games on the same deal with the seats swapped are correlated (the luck of
    the deal cancels), so the set, not the game, is the independent sample.
    2-game sets give exactly the pentanomial numbers; 3- or 4-seat rotations
    generalise to 2m+1 outcomes. `games_per_set` only affects `games` and nElo.
    """
    if games_per_set < 1:
        raise RatingError("games_per_set must be at least 1")
    if any(not 0.0 <= s <= 1.0 for s in set_scores):
        raise RatingError("set scores must lie in [0, 1]")
    return _match_stats(list(set_scores), [1] * len(set_scores), games_per_set)


def pentanomial(counts: Sequence[int]) -> MatchStats:
    """Pair statistics from [LL, LD, WL+DD, WD, WW] (fastchess/fishtest order)."""
    if len(counts) != 5 or min(counts) < 0:
        raise RatingError("a pentanomial vector has 5 non-negative counts [LL, LD, WL+DD, WD, WW]")
    return _match_stats((0.0, 0.25, 0.5, 0.75, 1.0), counts, 2)


# ---- Sequential probability ratio test (fishtest / fastchess GSPRT) ----

Decision = Literal["H0", "H1"]


@dataclass(frozen=True, slots=True)
class SprtResult:
    """Log-likelihood ratio against Wald's bounds; `decision` None = keep playing."""

    llr: float
    lower: float
    upper: float
    decision: Decision | None


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds for type-I error alpha, type-II beta."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ConfigError(f"SPRT needs 0 < alpha, beta and alpha + beta < 1 (got {alpha}, {beta})")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _constrained_mle(support: Sequence[float], p_hat: Sequence[float], s: float) -> list[float]:
    """Most likely law near p_hat whose mean is s (Van den Bergh, Prop. 1.1).

    p_i = p_hat_i / (1 + theta (a_i - s)), with theta the root of a decreasing
    function on an open interval; bisection only ever evaluates interior points,
    which matters when the root hugs the boundary (near-perfect scores).
    """
    d = [a - s for a in support]
    lo, hi = -1.0 / max(d), -1.0 / min(d)
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if sum(p * di / (1.0 + mid * di) for p, di in zip(p_hat, d)) > 0.0:
            lo = mid
        else:
            hi = mid
    theta = 0.5 * (lo + hi)
    return [p / (1.0 + theta * di) for p, di in zip(p_hat, d)]


def llr_logistic(elo0: float, elo1: float, counts: Sequence[float]) -> float:
    """Generalised LLR of Elo = elo1 against Elo = elo0 (fishtest `LLR_logistic`).

    `counts` is [L, D, W] for games, or the 2m+1 set histogram from `set_counts`
    (e.g. pentanomial). Zero counts become 1e-3, as in fishtest, so the result
    matches fishtest and stays finite for lopsided samples.
    """
    if len(counts) < 3 or len(counts) % 2 == 0 or min(counts) < 0:
        raise RatingError("SPRT counts need 2m+1 >= 3 non-negative entries, e.g. [L, D, W]")
    reg = [c if c > 0 else 1e-3 for c in counts]
    n = sum(reg)
    p_hat = [c / n for c in reg]
    support = [i / (len(reg) - 1) for i in range(len(reg))]
    p0 = _constrained_mle(support, p_hat, expected_score(elo0))
    p1 = _constrained_mle(support, p_hat, expected_score(elo1))
    return n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(p_hat, p0, p1))


def sprt(elo0: float, elo1: float, alpha: float, beta: float, counts: Sequence[float]) -> SprtResult:
    """One SPRT look: accept H1 once LLR >= upper, H0 once LLR <= lower."""
    if not elo0 < elo1:
        raise ConfigError(f"SPRT needs elo0 < elo1 (got {elo0}, {elo1})")
    lower, upper = sprt_bounds(alpha, beta)
    llr = llr_logistic(elo0, elo1, counts)
    decision: Decision | None = "H1" if llr >= upper else "H0" if llr <= lower else None
    return SprtResult(llr, lower, upper, decision)


def parse_sprt(text: str) -> tuple[float, float, float, float]:
    """Parse `elo0,elo1[,alpha,beta]` (alpha = beta = 0.05 by default)."""
    try:
        parts = [float(x) for x in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) not in (2, 4):
        raise ConfigError(f"bad --sprt {text!r}: write elo0,elo1 or elo0,elo1,alpha,beta (e.g. 0,10)")
    elo0, elo1, alpha, beta = [*parts, 0.05, 0.05] if len(parts) == 2 else parts
    if not elo0 < elo1:
        raise ConfigError(f"bad --sprt {text!r}: elo0 must be below elo1")
    sprt_bounds(alpha, beta)
    return elo0, elo1, alpha, beta


# ---- Batch maximum-likelihood ratings ----
