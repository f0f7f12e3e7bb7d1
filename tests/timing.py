"""One time scale for every bound the suite puts on wall time.

No test may fail because the machine is slow (docs/architecture.md). Most
bounds on time are safety bounds: a match must end, a process must be gone,
a server must print its URL within N seconds, so that a broken test fails
instead of hanging. They say nothing about speed, and each goes through
`scaled`: N times `CHICAGO_REFEREE_TEST_TIME_SCALE` (default 1), which a
slower or busier machine (CI) raises. Clocks that are the thing under test
(a bot that overruns a 400 ms decision limit must be timed out) are not
scaled; how quickly the referee noticed is. Waits poll for a sign that what
they wait for happened (`wait_until`), never sleep for a guessed time.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import TypeVar

import trio

SCALE_VARIABLE = "CHICAGO_REFEREE_TEST_TIME_SCALE"
T = TypeVar("T")


def _read_scale() -> float:
    text = os.environ.get(SCALE_VARIABLE, "").strip() or "1"
    try:
        scale = float(text)
    except ValueError:
        scale = math.nan
    if not 1 <= scale < math.inf:
        # Below 1 a bound would be tighter than its author allowed for: refused, not obeyed.
        raise ValueError(f"{SCALE_VARIABLE} must be a number of at least 1, not {text!r}")
    return scale


SCALE = _read_scale()


def scaled(seconds: float) -> float:
    """A safety bound of `seconds` on an ordinary machine, stretched for this one."""
    return seconds * SCALE


def wait_until(check: Callable[[], T], within: float, every: float = 0.05) -> T:
    """Poll `check` until it returns something true, for at most `scaled(within)`
    seconds; returns that, or the last (false) answer when time ran out."""
    deadline = time.monotonic() + scaled(within)
    while True:
        got = check()
        if got or time.monotonic() >= deadline:
            return got
        time.sleep(every)


async def await_until(check: Callable[[], T], within: float, every: float = 0.05) -> T:
    """`wait_until` for a Trio test: the loop keeps running between polls."""
    deadline = time.monotonic() + scaled(within)
    while True:
        got = check()
        if got or time.monotonic() >= deadline:
            return got
        await trio.sleep(every)
