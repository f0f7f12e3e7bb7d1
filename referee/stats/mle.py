"""Many bots at once: the maximum-likelihood Elo of every bot from all their
pairwise comparisons (the logistic model of Ordo and BayesElo), with
cluster-robust error bars and the LOS of every pair.

`fit_ratings` tallies the comparisons (`_tally`), adds BayesElo-style virtual
draws (`_with_prior`), maximises the likelihood by Newton's method
(`_maximise`), and turns the fit's information and the clusters' scores into
covariances of the reported ratings (`_covariances`, `_as_reported`). A 3-4
bot table enters as its pairwise placements (`comparisons_from_scores`).
Pure stdlib; the checks against Ordo and BayesElo are in tests/stats.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from operator import mul

from referee.stats.ratings import N01, Z95, K, RatingError, expected_score

Pairs = dict[tuple[int, int], list[float]]
"""(i, j) with i < j -> [weight of their comparisons, points of i]."""


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


def comparisons_from_scores(scores: Mapping[str, float], cluster: Hashable, weight: float = 1.0) -> list[Comparison]:
    """Break one table's final scores into its C(n,2) pairwise placements.

    Higher score finishes ahead (1), equal scores tie (1/2). Pass
    weight = 1/(n-1) to count each table once per bot instead.
    """
    if len(scores) < 2:
        raise RatingError("a table needs at least 2 bots")
    return [
        Comparison(a, b, 1.0 if scores[a] > scores[b] else 0.0 if scores[a] < scores[b] else 0.5, cluster, weight)
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


def _check_graph(
    names: list[str], pairs: Iterable[tuple[int, int]], scored: set[tuple[int, int]], prior: float
) -> None:
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
        raise RatingError(
            "these groups of bots never played each other, so they cannot be rated on one scale: " + " | ".join(groups)
        )
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
        raise RatingError(
            f"with prior 0 the ratings are infinite: {{{who}}} never dropped a point "
            "against the other bots; use a prior > 0 (e.g. 2 virtual draws)"
        )


@dataclass
class _Tally:
    """The comparisons summed by pair, and per bot."""

    pairs: Pairs
    games: list[float]
    points: list[float]
    scored: set[tuple[int, int]]  # (i, j): i took a point (or half) from j


def _tally(comparisons: Sequence[Comparison], idx: Mapping[str, int]) -> _Tally:
    n = len(idx)
    t = _Tally(pairs={}, games=[0.0] * n, points=[0.0] * n, scored=set())
    for c in comparisons:
        if c.a not in idx or c.b not in idx:
            raise RatingError(f"comparison {c.a!r} vs {c.b!r} names a bot not in the player list")
        if c.a == c.b or not 0.0 <= c.score_a <= 1.0 or not c.weight > 0.0:
            raise RatingError(f"bad comparison {c!r}: need two bots, score in [0, 1], weight > 0")
        i, j, s = idx[c.a], idx[c.b], c.score_a
        if i > j:
            i, j, s = j, i, 1.0 - s
        acc = t.pairs.setdefault((i, j), [0.0, 0.0])
        acc[0] += c.weight
        acc[1] += c.weight * s
        t.games[i] += c.weight
        t.games[j] += c.weight
        t.points[i] += c.weight * s
        t.points[j] += c.weight * (1.0 - s)
        if s > 0.0:
            t.scored.add((i, j))
        if s < 1.0:
            t.scored.add((j, i))
    return t


def _with_prior(t: _Tally, prior: float) -> Pairs:
    """The pairs with each bot's prior/2 virtual draws spread over its opponents by games played."""
    fit_pairs = {k: v[:] for k, v in t.pairs.items()}
    if prior > 0.0:
        for (i, j), (w, _) in t.pairs.items():
            vd = 0.5 * prior * w * (1.0 / t.games[i] + 1.0 / t.games[j])
            fit_pairs[(i, j)][0] += vd
            fit_pairs[(i, j)][1] += 0.5 * vd
    return fit_pairs


def _loglik(pairs: Pairs, x: Sequence[float]) -> float:
    return sum(
        s * _log_expected(K * (x[i] - x[j])) + (w - s) * _log_expected(K * (x[j] - x[i]))
        for (i, j), (w, s) in pairs.items()
    )


def _gradient_and_information(pairs: Pairs, x: Sequence[float]) -> tuple[list[float], list[list[float]]]:
    n = len(x)
    g, h = [0.0] * n, [[0.0] * n for _ in range(n)]
    for (i, j), (w, s) in pairs.items():
        e = expected_score(x[i] - x[j])
        r, v = K * (s - w * e), K * K * w * e * (1.0 - e)
        g[i] += r
        g[j] -= r
        h[i][i] += v
        h[j][j] += v
        h[i][j] -= v
        h[j][i] -= v
    return g, h


def _maximise(pairs: Pairs, n: int, max_iter: int) -> list[float]:
    """Newton on bots 0..n-2 with the last one pinned at 0. The likelihood is
    concave; far from the optimum the step is capped at 400 Elo and halved
    until the likelihood rises, near it plain Newton converges quadratically."""
    x = [0.0] * n
    f = n - 1
    for _ in range(max_iter):
        g, h = _gradient_and_information(pairs, x)
        step = [*_solve_spd([row[:f] for row in h[:f]], g[:f]), 0.0]
        big = max(abs(d) for d in step)
        if big < 1e-10 * max(1.0, *(abs(v) for v in x)):
            return x
        if big > 400.0:
            step = [d * 400.0 / big for d in step]
        if big > 1.0:
            old = _loglik(pairs, x)
            for _ in range(60):
                if _loglik(pairs, [xi + d for xi, d in zip(x, step)]) >= old:
                    break
                step = [d / 2 for d in step]
        x = [xi + d for xi, d in zip(x, step)]
    raise RatingError("rating fit did not converge")


def _covariances(
    comparisons: Sequence[Comparison], idx: Mapping[str, int], pairs: Pairs, x: Sequence[float]
) -> tuple[list[list[float]], list[list[float]]]:
    """(cluster-robust, model) covariances of the pinned fit: bread = inverse
    information (prior included), meat = the per-cluster score sums of the
    real comparisons only."""
    f = len(x) - 1
    _, h = _gradient_and_information(pairs, x)
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
    return _matmul(_matmul(h_inv, meat), h_inv), h_inv


def _as_reported(cov: list[list[float]], n: int, anchor: int | None) -> list[list[float]]:
    """Pinned-bot covariance -> covariance of the reported ratings (centred on the mean, or the anchor)."""
    f = n - 1
    full = [
        [0.5 * (cov[i][j] + cov[j][i]) if i < f and j < f else 0.0 for j in range(n)] for i in range(n)
    ]  # exact symmetry, so that LOS(a, b) + LOS(b, a) = 1
    if anchor is None:
        rows = [sum(r) / n for r in full]
        tot = sum(rows) / n
        return [[full[i][j] - rows[i] - rows[j] + tot for j in range(n)] for i in range(n)]
    k = anchor
    return [[full[i][j] - full[i][k] - full[k][j] + full[k][k] for j in range(n)] for i in range(n)]


def _tuples(mat: list[list[float]]) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(r) for r in mat)


def fit_ratings(
    comparisons: Sequence[Comparison],
    players: Sequence[str],
    prior: float = 2.0,
    anchor: str | None = None,
    anchor_value: float = 0.0,
    max_iter: int = 100,
) -> Ratings:
    """Maximum-likelihood Elo of every bot from all comparisons at once.

    `prior` adds BayesElo-style virtual draws (each bot spreads prior/2 draws
    over its opponents, in proportion to games played), so a perfect score
    gives a finite rating; 0 reproduces Ordo exactly. Ratings are centred on
    mean 0, or `anchor` is set to `anchor_value`. Raises RatingError for a
    disconnected schedule, or for infinite ratings when prior is 0.
    """
    names = list(players)
    idx = _player_index(names, prior, anchor)
    n = len(names)
    t = _tally(comparisons, idx)
    _check_graph(names, t.pairs, t.scored, prior)
    fit_pairs = _with_prior(t, prior)
    x = _maximise(fit_pairs, n, max_iter)
    robust, model = _covariances(comparisons, idx, fit_pairs, x)
    k = None if anchor is None else idx[anchor]
    c_rob, c_mod = _as_reported(robust, n, k), _as_reported(model, n, k)
    origin = sum(x) / n if k is None else x[k]
    elo = [xi - origin + (0.0 if anchor is None else anchor_value) for xi in x]
    flags = ["" if 0.0 < t.points[i] < t.games[i] else ">" if t.points[i] > 0.0 else "<" for i in range(n)]
    pair_err, los = _pairs_apart(elo, flags, c_rob, c_mod)
    err = [Z95 * math.sqrt(max((c_mod if flags[i] else c_rob)[i][i], 0.0)) for i in range(n)]
    err_mod = [Z95 * math.sqrt(max(c_mod[i][i], 0.0)) for i in range(n)]
    return Ratings(
        tuple(names),
        tuple(elo),
        tuple(err),
        tuple(err_mod),
        tuple(flags),
        tuple(t.games),
        tuple(t.points),
        pair_err,
        los,
        _tuples(c_rob),
        _tuples(c_mod),
        prior,
        anchor,
        anchor_value,
    )


def _player_index(names: list[str], prior: float, anchor: str | None) -> dict[str, int]:
    idx = {p: i for i, p in enumerate(names)}
    if len(names) < 2 or len(idx) != len(names):
        raise RatingError("rating needs at least 2 distinct bots")
    if prior < 0:
        raise RatingError("prior (virtual draws) must not be negative")
    if anchor is not None and anchor not in idx:
        raise RatingError(f"anchor {anchor!r} is not one of the rated bots")
    return idx


def _pairs_apart(
    elo: list[float], flags: list[str], c_rob: list[list[float]], c_mod: list[list[float]]
) -> tuple[tuple[tuple[float, ...], ...], tuple[tuple[float, ...], ...]]:
    """Every pair's 95 % error of its difference and its LOS, covariance included."""
    n = len(elo)

    def pair_var(i: int, j: int) -> float:
        c = c_mod if flags[i] or flags[j] else c_rob  # the sandwich collapses for flagged bots
        return c[i][i] + c[j][j] - 2.0 * c[i][j]

    var = [[pair_var(i, j) for j in range(n)] for i in range(n)]  # diagonal is exactly 0
    pair_err = tuple(tuple(Z95 * math.sqrt(max(v, 0.0)) for v in row) for row in var)
    los = tuple(
        tuple(N01.cdf((elo[i] - elo[j]) / math.sqrt(v)) if v > 0.0 else math.nan for j, v in enumerate(row))
        for i, row in enumerate(var)
    )
    return pair_err, los
