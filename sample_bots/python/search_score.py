"""Playing the score at a two-seat table: points are worth what they do to
the chance of winning the game.

Far from the target a point is a point. Near it, it is not: with the
opponent a pair away from 52, stopping its next showdown matters more than
making one's own, and points past the target buy nothing. The search bots
value showdowns and the trick phase in points; here those points are
turned into a change of the chance of winning (`win_chance`) and back into
points at the rate a point is worth at these scores (`points_value`), so
the rest of the search is unchanged far from the end.

`win_chance` is a race model, not a measurement: each seat still needs `r`
points and scores about `GAIN` a deal with a spread of `SPREAD`, so the time
it takes is about normal, and the seat that needs fewer deals is ahead.
"""

from __future__ import annotations

import math
from functools import lru_cache

GAIN_PER_DEAL = 7.5  # points a seat scores in a two-seat deal, on average
VARIANCE_PER_POINT = 6.5  # variance of a deal's points over their mean (lumpy: 5s and 15s)
SLACK = 20.0  # extra variance: points come in lumps, a race is never certain before it ends
NEAR = 20  # the score is played when either seat needs at most this many points


@lru_cache(maxsize=65536)
def win_chance(mine: int, theirs: int, target: int) -> float:
    """The chance that the seat with `mine` points wins against `theirs`."""
    need_me = target - mine
    need_them = target - theirs
    if need_me <= 0:
        return 1.0
    if need_them <= 0:
        return 0.0
    z = (need_them - need_me) / math.sqrt((need_me + need_them) * VARIANCE_PER_POINT + SLACK)
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def near_end(mine: int, theirs: int, target: int) -> bool:
    return min(target - mine, target - theirs) <= NEAR


def point_rate(mine: int, theirs: int, target: int) -> float:
    """What one point of swing is worth in chance of winning, from a wide
    swing (8 points each way), so that it never reads zero."""
    up = win_chance(mine + 8, theirs, target)
    down = win_chance(mine, theirs + 8, target)
    return max((up - down) / 16, 1e-3)


def points_value(gain_mine: int, gain_theirs: int, mine: int, theirs: int, target: int, floor: int = 0) -> float:
    """A change of the scores, in points at the rate of these scores: the
    change of the chance of winning over `point_rate`."""
    before = win_chance(mine, theirs, target)
    after = win_chance(max(floor, mine + gain_mine), max(floor, theirs + gain_theirs), target)
    return (after - before) / point_rate(mine, theirs, target)


def trick_value(value: int, called: bool, mine: int, theirs: int, target: int) -> float:
    """A two-seat trick phase's exact value (`search_tricks.Solver`: my points
    minus the other seat's) at these scores: a loss is the other seat's
    gain, except a failed Chicago of mine, which costs me the penalty."""
    if value >= 0 or called:
        return points_value(value, 0, mine, theirs, target)
    return points_value(0, -value, mine, theirs, target)
