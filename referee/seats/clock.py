"""Time controls: parsing `--time-control` and keeping each seat's clock.

Form: comma-separated `key=duration` with keys `decision`, `bank`, `inc`
(or `increment`) and `startup`; durations take `ms`, `s` or `m` (bare
numbers are seconds). A lone duration sets the decision limit:
`1s`, `decision=500ms,bank=60s,inc=100ms`, `decision=2s,startup=30s`.
"""

from __future__ import annotations

import re

from protocol.messages import Clock, TimeControl
from referee.errors import ConfigError
from referee.seats.seat import Seat

DEFAULT_TIME_CONTROL = "decision=1s,startup=10s"
"""What `match`, `play`, `check` and a tournament config use unless told otherwise:
one clock, so a bot that passes `check` keeps to the clock of its first match."""

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")
_KEYS = {
    "decision": "decision_ms",
    "bank": "bank_ms",
    "inc": "increment_ms",
    "increment": "increment_ms",
    "startup": "startup_ms",
}


def parse_duration_ms(text: str) -> int:
    m = _DURATION.match(text)
    if not m:
        raise ConfigError(f"bad duration {text!r}: write e.g. 500ms, 1.5s or 2m")
    value = float(m.group(1)) * {"ms": 1, "s": 1000, "m": 60_000, None: 1000}[m.group(2)]
    return round(value)


def parse_time_control(text: str) -> TimeControl:
    """`"decision=1s,bank=60s,inc=100ms"` -> TimeControl (see module doc)."""
    fields: dict[str, int] = {}
    if not text.strip():
        raise ConfigError("the time control is empty: write e.g. 1s or decision=500ms,bank=60s,inc=100ms,startup=10s")
    for part in [p for p in text.split(",") if p.strip()]:
        key, sep, value = part.partition("=")
        if not sep:
            key, value = "decision", part
        name = _KEYS.get(key.strip().lower())
        if name is None:
            raise ConfigError(f"unknown time-control key {key.strip()!r} in {text!r}; use decision, bank, inc, startup")
        fields[name] = parse_duration_ms(value)
    if fields.get("decision_ms", 1) <= 0:
        raise ConfigError(f"the decision limit must be positive in {text!r}")
    if "increment_ms" in fields and "bank_ms" not in fields:
        raise ConfigError(
            f"inc= needs bank= in {text!r}: the increment is added to a time bank after each decision; "
            "write e.g. decision=1s,bank=60s,inc=100ms"
        )
    return TimeControl(**fields)


def format_time_control(tc: TimeControl) -> str:
    """The form `--time-control` takes, durations as a person writes them: `decision=1s,startup=10s`."""
    parts = [f"decision={format_duration(tc.decision_ms)}"]
    if tc.bank_ms is not None:
        parts.append(f"bank={format_duration(tc.bank_ms)}")
        if tc.increment_ms:
            parts.append(f"inc={format_duration(tc.increment_ms)}")
    parts.append(f"startup={format_duration(tc.startup_ms)}")
    return ",".join(parts)


def format_duration(ms: int) -> str:
    """1000 -> `1s`, 1500 -> `1.5s`, 500 -> `500ms`, 120000 -> `120s` (parses back to the same)."""
    if ms >= 1000 and ms % 1000 == 0:
        return f"{ms // 1000}s"
    if ms >= 1000 and ms % 100 == 0:
        return f"{ms // 1000}.{ms % 1000 // 100}s"
    return f"{ms}ms"


class SeatClock:
    """One seat's clock for one game: a per-decision cap and an optional bank.

    The limit and the `Clock` sent with each request change only when a bank
    is charged, so they are computed then, not on every request.
    """

    def __init__(self, tc: TimeControl) -> None:
        self.tc = tc
        self.bank_ms: float | None = None if tc.bank_ms is None else float(tc.bank_ms)
        self._update()

    def _update(self) -> None:
        ms = float(self.tc.decision_ms)
        if self.bank_ms is not None:
            ms = min(ms, max(self.bank_ms, 0.0))
        self._limit_s = ms / 1000.0
        bank = None if self.bank_ms is None else int(self.bank_ms)
        self._snapshot = Clock(decision_ms=int(self._limit_s * 1000), bank_ms=bank)

    def limit_s(self) -> float:
        """Seconds allowed for the next decision."""
        return self._limit_s

    def snapshot(self) -> Clock:
        return self._snapshot

    def charge(self, elapsed_s: float) -> None:
        if self.bank_ms is not None:
            self.bank_ms = max(0.0, self.bank_ms - elapsed_s * 1000.0) + self.tc.increment_ms
            self._update()


class DecisionMeter:
    """One seat's CPU time per decision, and `freeze_idle`'s stop and start.

    A seat that tells its CPU time (`measures_cpu`: a bot process, not a
    person) is read when its request's clock starts and again after its
    reply, once it is frozen or waiting for its next turn; every seat is
    frozen in between its turns (`freeze`, `thaw`: a no-op for one that
    cannot be); the thaw comes before the clock starts, so it is not the
    seat's time."""

    def __init__(self, seat: Seat | None) -> None:
        self._seat = seat
        self._measured = seat is not None and seat.measures_cpu
        self.cpu_s = 0.0  # CPU seconds of its decisions so far
        self.asked = 0  # decisions it was asked

    def start(self) -> float:
        """Before the request's clock starts: thaw, and read the CPU time."""
        self.wake()
        return self._seat.cpu_seconds() if self._seat is not None and self._measured else 0.0

    def stop(self, started_cpu: float) -> float | None:
        """The reply came (or the deadline passed): freeze, then this
        decision's CPU seconds (None if not measured)."""
        self.idle()
        return self.used_since(started_cpu)

    def used_since(self, started_cpu: float) -> float | None:
        """This decision's CPU seconds (None if not measured), read after `idle`
        and before the seat's next `start`: the runner reads it once the next
        request is out, while the seat is frozen or waiting for its turn."""
        self.asked += 1
        if self._seat is None or not self._measured:
            return None
        used = max(0.0, self._seat.cpu_seconds() - started_cpu)
        self.cpu_s += used
        return used

    def idle(self) -> None:
        if self._seat is not None:
            self._seat.freeze()

    def wake(self) -> None:
        if self._seat is not None:
            self._seat.thaw()

    def cpu_ms(self) -> float | None:
        return round(self.cpu_s * 1000, 3) if self._measured else None
