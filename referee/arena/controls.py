"""The host's switches: matchmaking paused or running, and when submissions close.

They live in the database, not in memory, so a restarted server keeps them,
and the API (which sets them) and the matchmaker (which obeys them) need no
channel between them but the store. The close time has two sources: the
optional `submissions_close` of `arena.toml`, and the host's last word
through the API (`close` at a time, or `open`), which wins over the file.
Whether submissions are open is decided here alone (`check_open`), for the
upload route and for an owner making an old version active again.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from referee.errors import SubmissionRefused

CONTROLS_SCHEMA = """
CREATE TABLE IF NOT EXISTS controls (     -- the host's switches (controls.py); a missing key is its default
    key TEXT PRIMARY KEY CHECK (key IN ('matchmaking', 'submissions_close')),
    value TEXT NOT NULL,                 -- 'paused' or 'running'; a UTC time, or 'open'
    set_by TEXT NOT NULL,                -- the admin who set it
    updated TEXT NOT NULL
);
"""

OPEN = "open"  # the override that keeps submissions open whatever arena.toml says


def utc_text(when: datetime) -> str:
    """A close time as the arena shows it and stores it: UTC, to the second, `Z`."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc(text: str) -> datetime:
    """An ISO-8601 time with its zone (`Z` or an offset), in UTC, to the second;
    ValueError in one line if it is not one."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO-8601 time such as 2026-12-24T18:00:00Z") from None
    return in_utc(when)


def in_utc(when: datetime) -> datetime:
    """`when` in UTC, to the second; a time without a zone is refused (whose evening would it be?)."""
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(f"{when.isoformat()} has no time zone: write it in UTC, such as 2026-12-24T18:00:00Z")
    return when.astimezone(UTC).replace(microsecond=0)


@dataclass(frozen=True)
class Controls:
    """The switches as they stand: `close` is the effective close time (None: open)."""

    paused: bool
    close: datetime | None
    close_set_by_host: bool  # the API's word, not arena.toml's

    def closed(self, now: float) -> bool:
        return self.close is not None and now >= self.close.timestamp()

    def as_dict(self, now: float) -> dict[str, Any]:
        return {
            "matchmaking": "paused" if self.paused else "running",
            "submissions": "closed" if self.closed(now) else "open",
            "submissions_close": None if self.close is None else utc_text(self.close),
        }


def _value(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM controls WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _set(conn: sqlite3.Connection, key: str, value: str, by: str, now: str) -> None:
    conn.execute(
        "INSERT INTO controls (key, value, set_by, updated) VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE"
        " SET value = excluded.value, set_by = excluded.set_by, updated = excluded.updated",
        (key, value, by, now),
    )


def read_controls(conn: sqlite3.Connection, configured_close: datetime | None) -> Controls:
    """The switches, with `configured_close` (arena.toml's) where the host has not spoken."""
    override = _value(conn, "submissions_close")
    if override is None:
        close, by_host = configured_close, False
    else:
        close, by_host = (None if override == OPEN else parse_utc(override)), True
    return Controls(paused=matchmaking_paused(conn), close=close, close_set_by_host=by_host)


def matchmaking_paused(conn: sqlite3.Connection) -> bool:
    return _value(conn, "matchmaking") == "paused"


def set_matchmaking(conn: sqlite3.Connection, *, paused: bool, by: str, now: str) -> None:
    """Pause (no new unit starts; running ones finish) or resume matchmaking."""
    _set(conn, "matchmaking", "paused" if paused else "running", by, now)


def set_close(conn: sqlite3.Connection, at: datetime | None, *, by: str, now: str) -> None:
    """Close submissions at `at` (UTC), or keep them open (`None`), whatever arena.toml says."""
    _set(conn, "submissions_close", OPEN if at is None else utc_text(in_utc(at)), by, now)


def check_open(conn: sqlite3.Connection, configured_close: datetime | None, now: float) -> None:
    """Refuse (403, one line saying since when) once submissions have closed."""
    controls = read_controls(conn, configured_close)
    if controls.closed(now):
        assert controls.close is not None
        raise SubmissionRefused(
            f"submissions are closed since {utc_text(controls.close)}: the arena takes no new versions", status=403
        )
