"""Elo ratings and match statistics for bot tournaments.

Two kinds of question, two kinds of answer:

* Two bots, many games: `trinomial` (per-game W/L/D), `set_stats` and
  `pentanomial` (per deal set, when the same deal is replayed with the seats
  rotated), and the GSPRT in `sprt`. The formulas are the fastchess/fishtest
  ones, so the numbers can be checked against those tools.
* Many bots: `fit_ratings` is a batch maximum-likelihood fit of the logistic
  Elo model (Bradley-Terry, draw = 1/2; the Ordo model) over every pairwise
  comparison at once. Unlike online Elo it does not depend on game order.
  A 3-4 bot table enters as its pairwise placements (`comparisons_from_scores`);
  under Plackett-Luce the pairwise fit is consistent and "100 Elo" still means
  a 64 % chance to finish ahead. Error bars are sandwich (cluster-robust)
  estimates, clustered by game, deal set or table, because comparisons from
  one table, and games on one deal, are not independent.

Everything is on the standard scale E(d) = 1 / (1 + 10^(-d/400)). Pure stdlib.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from operator import mul
from statistics import NormalDist
from typing import Literal

from referee.errors import ConfigError, RefereeError

_N01 = NormalDist()
Z95 = _N01.inv_cdf(0.975)  # 1.959963984540054, the constant fastchess hard-codes
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
        return MatchStats(games, round(n), mu, elo, math.nan, 0.5 + 0.5 * sign,
                          math.copysign(math.inf, sign) if sign else math.nan, math.nan)
    err95 = (score_to_elo(mu + Z95 * se) - score_to_elo(mu - Z95 * se)) / 2.0
    per_game_sd = sd * math.sqrt(games_per_set)  # a set of m games has ~m times the variance of a mean
    return MatchStats(games, round(n), mu, elo, err95, _N01.cdf((mu - 0.5) / se),
                      (mu - 0.5) / per_game_sd * NELO_SCALE, Z95 * se / per_game_sd * NELO_SCALE)


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


@dataclass(frozen=True, slots=True)
class Comparison:
    """One pairwise result: `a` scored `score_a` (1, 1/2, 0) against `b`.

    `cluster` groups comparisons that are not independent (one table, one deal
    set, or just one game); the error bars treat clusters as the samples.
    """

    a: str
    b: str
    score_a: float
    cluster: Hashable
    weight: float = 1.0


def comparisons_from_scores(scores: Mapping[str, float], cluster: Hashable,
                            weight: float = 1.0) -> list[Comparison]:
    """Break one table's final scores into its C(n,2) pairwise placements.

    Higher score finishes ahead (1), equal scores tie (1/2). Pass
    weight = 1/(n-1) to count each table once per bot instead.
    """
    if len(scores) < 2:
        raise RatingError("a table needs at least 2 bots")
    return [
        Comparison(a, b, 1.0 if scores[a] > scores[b] else 0.0 if scores[a] < scores[b] else 0.5,
                   cluster, weight)
        for a, b in combinations(sorted(scores), 2)
    ]


@dataclass(frozen=True, slots=True)
class Ratings:
    """Result of `fit_ratings`; vectors follow `players`, matrices are [row][column].

    `err95` is relative to the pool mean, or to the anchor (whose own is 0).
    Two bots' bars must not be added: use `pair_err95` / `los`, which include
    the covariance. `flags` is '>' (all wins, true rating probably higher),
    '<' (all losses) or ''; flagged bots use model-based errors because the
    sandwich collapses for them.
    """

    players: tuple[str, ...]
    elo: tuple[float, ...]
    err95: tuple[float, ...]
    err95_model: tuple[float, ...]
    flags: tuple[str, ...]
    games: tuple[float, ...]  # weighted comparisons, prior not included
    points: tuple[float, ...]
    pair_err95_matrix: tuple[tuple[float, ...], ...]
    los_matrix: tuple[tuple[float, ...], ...]  # P(row stronger than column)
    covariance: tuple[tuple[float, ...], ...]  # cluster-robust (sandwich)
    covariance_model: tuple[tuple[float, ...], ...]
    prior: float
    anchor: str | None
    anchor_value: float

    def _i(self, name: str) -> int:
        try:
            return self.players.index(name)
        except ValueError:
            raise RatingError(f"unknown bot {name!r}") from None

    def rating(self, name: str) -> float:
        return self.elo[self._i(name)]

    def err(self, name: str) -> float:
        return self.err95[self._i(name)]

    def pair_err95(self, a: str, b: str) -> float:
        """95 % half-width of rating(a) - rating(b)."""
        return self.pair_err95_matrix[self._i(a)][self._i(b)]

    def los(self, a: str, b: str) -> float:
        """Likelihood of superiority: probability that a is stronger than b."""
        return self.los_matrix[self._i(a)][self._i(b)]


def _log_expected(z: float) -> float:
    """log(1 / (1 + e^-z)) without overflow."""
    return -math.log1p(math.exp(-z)) if z >= 0 else z - math.log1p(math.exp(z))


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    """Lower-triangular L with L L^T = a; a is the (positive definite) information."""
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        li = low[i]
        for j in range(i + 1):
            lj = low[j]
            rest = a[i][j] - sum(map(mul, li[:j], lj[:j]))
            if i == j:
                if rest <= 0.0:
                    raise RatingError("singular rating system (is the schedule connected?)")
                li[i] = math.sqrt(rest)
            else:
                li[j] = rest / lj[j]
    return low


def _forward(low: list[list[float]], b: list[float]) -> list[float]:
    """Solve L y = b."""
    y: list[float] = []
    for i, row in enumerate(low):
        y.append((b[i] - sum(map(mul, row[:i], y))) / row[i])
    return y


def _solve_spd(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve a x = b as L (L^T x) = b; L^T with both axes reversed is lower-triangular."""
    low = _cholesky(a)
    rev = [list(row[::-1]) for row in zip(*low)][::-1]
    return _forward(rev, _forward(low, b)[::-1])[::-1]


def _inverse_spd(a: list[list[float]]) -> list[list[float]]:
    """a^-1 = L^-T L^-1, with the columns of L^-1 from forward substitution."""
    low = _cholesky(a)
    n = len(a)
    inv_low_t = [_forward(low, [float(i == j) for i in range(n)]) for j in range(n)]
    return _matmul(inv_low_t, [list(r) for r in zip(*inv_low_t)])


def _matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    cols = list(zip(*b))
    return [[sum(map(mul, row, col)) for col in cols] for row in a]


def _closure(links: list[list[int]], start: int) -> set[int]:
    """Everything reachable from `start` along `links` (adjacency lists)."""
    seen, stack = {start}, [start]
    while stack:
        for k in links[stack.pop()]:
            if k not in seen:
                seen.add(k)
                stack.append(k)
    return seen


def _check_graph(names: list[str], pairs: Iterable[tuple[int, int]], scored: set[tuple[int, int]],
                 prior: float) -> None:
    """Refuse schedules whose ratings are not all finite and on one scale.

    Bots that never met (even indirectly) have no common scale. With prior 0
    a group that nobody outside ever took a point from has infinite ratings;
    `scored` holds (i, j) when i took a point from j.
    """
    n = len(names)
    both: list[list[int]] = [[] for _ in range(n)]
    for i, j in pairs:
        both[i].append(j)
        both[j].append(i)
    groups, left = [], set(range(n))
    while left:
        g = _closure(both, min(left))
        groups.append("{" + ", ".join(names[i] for i in sorted(g)) + "}")
        left -= g
    if len(groups) > 1:
        raise RatingError("these groups of bots never played each other, so they cannot be rated "
                          "on one scale: " + " | ".join(groups))
    if prior > 0.0:
        return
    takers: list[list[int]] = [[] for _ in range(n)]
    victims: list[list[int]] = [[] for _ in range(n)]
    for i, j in scored:
        takers[j].append(i)
        victims[i].append(j)
    unbeaten = _closure(takers, 0)  # nobody outside took a point from these
    if len(unbeaten) == n:
        unbeaten = set(range(n)) - _closure(victims, 0)  # the rest took none from those
    if unbeaten:
        who = ", ".join(names[i] for i in sorted(unbeaten))
        raise RatingError(f"with prior 0 the ratings are infinite: {{{who}}} never dropped a point "
                          "against the other bots; use a prior > 0 (e.g. 2 virtual draws)")


def fit_ratings(comparisons: Sequence[Comparison], players: Sequence[str], prior: float = 2.0,
                anchor: str | None = None, anchor_value: float = 0.0,
                max_iter: int = 100) -> Ratings:
    """Maximum-likelihood Elo of every bot from all comparisons at once.

    `prior` adds BayesElo-style virtual draws (each bot spreads prior/2 draws
    over its opponents, in proportion to games played), so a perfect score
    gives a finite rating; 0 reproduces Ordo exactly. Ratings are centred on
    mean 0, or `anchor` is set to `anchor_value`. Raises RatingError for a
    disconnected schedule, or for infinite ratings when prior is 0.
    """
    names = list(players)
    n = len(names)
    idx = {p: i for i, p in enumerate(names)}
    if n < 2 or len(idx) != n:
        raise RatingError("rating needs at least 2 distinct bots")
    if prior < 0:
        raise RatingError("prior (virtual draws) must not be negative")
    if anchor is not None and anchor not in idx:
        raise RatingError(f"anchor {anchor!r} is not one of the rated bots")
    pairs: dict[tuple[int, int], list[float]] = {}  # (i<j) -> [weight, points of i]
    games, points = [0.0] * n, [0.0] * n
    scored: set[tuple[int, int]] = set()
    for c in comparisons:
        if c.a not in idx or c.b not in idx:
            raise RatingError(f"comparison {c.a!r} vs {c.b!r} names a bot not in the player list")
        if c.a == c.b or not 0.0 <= c.score_a <= 1.0 or not c.weight > 0.0:
            raise RatingError(f"bad comparison {c!r}: need two bots, score in [0, 1], weight > 0")
        i, j, s = idx[c.a], idx[c.b], c.score_a
        if i > j:
            i, j, s = j, i, 1.0 - s
        acc = pairs.setdefault((i, j), [0.0, 0.0])
        acc[0] += c.weight
        acc[1] += c.weight * s
        games[i] += c.weight
        games[j] += c.weight
        points[i] += c.weight * s
        points[j] += c.weight * (1.0 - s)
        if s > 0.0:
            scored.add((i, j))
        if s < 1.0:
            scored.add((j, i))
    _check_graph(names, pairs, scored, prior)
    fit_pairs = {k: v[:] for k, v in pairs.items()}
    if prior > 0.0:
        for (i, j), (w, _) in pairs.items():
            vd = 0.5 * prior * w * (1.0 / games[i] + 1.0 / games[j])
            fit_pairs[(i, j)][0] += vd
            fit_pairs[(i, j)][1] += 0.5 * vd

    def loglik(x: list[float]) -> float:
        return sum(s * _log_expected(K * (x[i] - x[j])) + (w - s) * _log_expected(K * (x[j] - x[i]))
                   for (i, j), (w, s) in fit_pairs.items())

    def grad_info(x: list[float]) -> tuple[list[float], list[list[float]]]:
        g, h = [0.0] * n, [[0.0] * n for _ in range(n)]
        for (i, j), (w, s) in fit_pairs.items():
            e = expected_score(x[i] - x[j])
            r, v = K * (s - w * e), K * K * w * e * (1.0 - e)
            g[i] += r
            g[j] -= r
            h[i][i] += v
            h[j][j] += v
            h[i][j] -= v
            h[j][i] -= v
        return g, h

    # Newton on bots 0..n-2 with the last one pinned at 0. The likelihood is
    # concave; far from the optimum the step is capped at 400 Elo and halved
    # until the likelihood rises, near it plain Newton converges quadratically.
    x = [0.0] * n
    f = n - 1
    for _ in range(max_iter):
        g, h = grad_info(x)
        step = [*_solve_spd([row[:f] for row in h[:f]], g[:f]), 0.0]
        big = max(abs(d) for d in step)
        if big < 1e-10 * max(1.0, max(abs(v) for v in x)):
            break
        if big > 400.0:
            step = [d * 400.0 / big for d in step]
        if big > 1.0:
            old = loglik(x)
            for _ in range(60):
                if loglik([xi + d for xi, d in zip(x, step)]) >= old:
                    break
                step = [d / 2 for d in step]
        x = [xi + d for xi, d in zip(x, step)]
    else:
        raise RatingError("rating fit did not converge")

    # Covariances: bread = inverse information (prior included), meat = the
    # per-cluster score sums of the real comparisons only.
    _, h = grad_info(x)
    h_inv = _inverse_spd([row[:f] for row in h[:f]])
    units: dict[Hashable, dict[int, float]] = {}
    for c in comparisons:
        i, j = idx[c.a], idx[c.b]
        r = c.weight * K * (c.score_a - expected_score(x[i] - x[j]))
        u = units.setdefault(c.cluster, {})
        u[i] = u.get(i, 0.0) + r
        u[j] = u.get(j, 0.0) - r
    meat = [[0.0] * f for _ in range(f)]
    for u in units.values():
        items = [(i, v) for i, v in u.items() if i < f]
        for i, vi in items:
            for j, vj in items:
                meat[i][j] += vi * vj
    robust = _matmul(_matmul(h_inv, meat), h_inv)

    def report(cov: list[list[float]]) -> list[list[float]]:
        """Pinned-bot covariance -> covariance of the reported ratings."""
        full = [[0.5 * (cov[i][j] + cov[j][i]) if i < f and j < f else 0.0 for j in range(n)]
                for i in range(n)]  # exact symmetry, so that LOS(a, b) + LOS(b, a) = 1
        if anchor is None:
            rows = [sum(r) / n for r in full]
            tot = sum(rows) / n
            return [[full[i][j] - rows[i] - rows[j] + tot for j in range(n)] for i in range(n)]
        k = idx[anchor]
        return [[full[i][j] - full[i][k] - full[k][j] + full[k][k] for j in range(n)] for i in range(n)]

    c_rob, c_mod = report(robust), report(h_inv)
    origin = sum(x) / n if anchor is None else x[idx[anchor]]
    elo = [xi - origin + (0.0 if anchor is None else anchor_value) for xi in x]
    flags = ["" if 0.0 < points[i] < games[i] else ">" if points[i] > 0.0 else "<" for i in range(n)]

    def pair_var(i: int, j: int) -> float:
        c = c_mod if flags[i] or flags[j] else c_rob  # the sandwich collapses for flagged bots
        return c[i][i] + c[j][j] - 2.0 * c[i][j]

    var = [[pair_var(i, j) for j in range(n)] for i in range(n)]  # diagonal is exactly 0
    pair_err = tuple(tuple(Z95 * math.sqrt(max(v, 0.0)) for v in row) for row in var)
    los = tuple(tuple(_N01.cdf((elo[i] - elo[j]) / math.sqrt(v)) if v > 0.0 else math.nan
                      for j, v in enumerate(row)) for i, row in enumerate(var))
    err = [Z95 * math.sqrt(max((c_mod if flags[i] else c_rob)[i][i], 0.0)) for i in range(n)]
    err_mod = [Z95 * math.sqrt(max(c_mod[i][i], 0.0)) for i in range(n)]

    def tup(mat: list[list[float]]) -> tuple[tuple[float, ...], ...]:
        return tuple(tuple(r) for r in mat)

    return Ratings(tuple(names), tuple(elo), tuple(err), tuple(err_mod), tuple(flags), tuple(games),
                   tuple(points), pair_err, los, tup(c_rob), tup(c_mod), prior, anchor,
                   anchor_value)
