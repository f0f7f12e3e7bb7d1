"""Bots, their versions, and the submissions that make them.

A user may have several bots (by name; the user's own name by default); a
bot belongs to the user who first submitted it. Each accepted archive is a
new version of its bot, `queued` until it is built and checked; the same
archive twice is one submission (by sha256). A version that passes its
check becomes the bot's `active` one and retires the one before it; a
retired version keeps its games and its rating history; its owner may make
it active again (`reactivate`). The host may disqualify a bot: its active
version then plays no new unit and leaves the leaderboard and the MLE refit
(`versions_in_play`), and the bot takes no new versions until reinstated.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

from referee.errors import SubmissionRefused

Status = Literal["queued", "building", "checking", "active", "failed", "retired"]
STATUSES: tuple[Status, ...] = ("queued", "building", "checking", "active", "failed", "retired")
BOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")  # as in tournament configs

SUBMISSIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS bots (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL REFERENCES users(name),
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    bot TEXT NOT NULL REFERENCES bots(name),
    version INTEGER NOT NULL CHECK (version >= 1),
    sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
    size INTEGER NOT NULL CHECK (size > 0),
    kind TEXT NOT NULL,
    files INTEGER NOT NULL,
    unpacked INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'building', 'checking', 'active', 'failed', 'retired')),
    reason TEXT,                         -- why it failed, in one line
    language TEXT,                       -- from its build recipe
    check_log TEXT,                      -- the gate's report, for its owner
    active_since TEXT,
    created TEXT NOT NULL,
    created_epoch REAL NOT NULL,
    updated TEXT NOT NULL,
    UNIQUE (bot, version),
    UNIQUE (bot, sha256)
);
CREATE INDEX IF NOT EXISTS submissions_by_status ON submissions (status);
"""

DISQUALIFICATIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS disqualifications (   -- a bot the host took out of play, while it is out
    bot TEXT PRIMARY KEY REFERENCES bots(name),
    reason TEXT NOT NULL,                -- one line, shown on the bot's page
    set_by TEXT NOT NULL,                -- the admin who disqualified it
    since TEXT NOT NULL
);
"""
# The versions that play and are rated: active, of a bot not disqualified (submissions aliased `s`).
IN_PLAY = "s.status = 'active' AND s.bot NOT IN (SELECT bot FROM disqualifications)"


@dataclass(frozen=True)
class Submission:
    """One submission, as the API shows it (logs are fetched on their own)."""

    id: int
    bot: str
    owner: str
    version: int
    sha256: str
    size: int
    kind: str
    status: Status
    reason: str | None
    created: str
    updated: str
    active_since: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "bot": self.bot,
            "owner": self.owner,
            "version": self.version,
            "sha256": self.sha256,
            "size": self.size,
            "kind": self.kind,
            "status": self.status,
            "created": self.created,
            "updated": self.updated,
        }
        if self.reason is not None:
            d["reason"] = self.reason
        if self.active_since is not None:
            d["active_since"] = self.active_since
        return d


_COLUMNS = (
    "s.id, s.bot, b.owner, s.version, s.sha256, s.size, s.kind, s.status, s.reason, s.created, s.updated,"
    " s.active_since"
    " FROM submissions s JOIN bots b ON b.name = s.bot"
)


def _row(r: tuple[Any, ...]) -> Submission:
    return Submission(*r)


def check_bot_name(name: str) -> str:
    if not BOT_NAME.match(name):
        raise SubmissionRefused(f"bot name {name!r}: use 1-40 letters, digits, '_', '.' or '-', starting alphanumeric")
    return name


def bot_owner(conn: sqlite3.Connection, name: str) -> str | None:
    row = conn.execute("SELECT owner FROM bots WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def owners_of(conn: sqlite3.Connection, submissions: list[int]) -> dict[int, str]:
    """Each submission's owner (through its bot)."""
    marks = ",".join("?" * len(submissions))
    rows = conn.execute(
        f"SELECT s.id, b.owner FROM submissions s JOIN bots b ON b.name = s.bot WHERE s.id IN ({marks})", submissions
    )
    return {int(r[0]): str(r[1]) for r in rows}


def check_owner(name: str, owner: str, current: str | None) -> None:
    if current is not None and current != owner:
        raise SubmissionRefused(f"the bot name {name!r} belongs to another user: choose another name", status=403)


def claim_bot(conn: sqlite3.Connection, name: str, owner: str, now: str) -> None:
    """The bot `name` is `owner`'s: made now if new, refused if another user's."""
    check_bot_name(name)
    current = bot_owner(conn, name)
    check_owner(name, owner, current)
    if current is None:
        conn.execute("INSERT INTO bots (name, owner, created) VALUES (?, ?, ?)", (name, owner, now))


def find_same(conn: sqlite3.Connection, bot: str, sha256: str) -> Submission | None:
    """The submission of this very archive to this bot, if there is one."""
    r = conn.execute(f"SELECT {_COLUMNS} WHERE s.bot = ? AND s.sha256 = ?", (bot, sha256)).fetchone()
    return None if r is None else _row(r)


def add_submission(
    conn: sqlite3.Connection,
    *,
    bot: str,
    sha256: str,
    size: int,
    kind: str,
    files: int,
    unpacked: int,
    now: str,
    epoch: float,
) -> Submission:
    """A new `queued` version of `bot` (call inside a transaction, after `claim_bot`)."""
    (last,) = conn.execute("SELECT coalesce(max(version), 0) FROM submissions WHERE bot = ?", (bot,)).fetchone()
    cur = conn.execute(
        "INSERT INTO submissions (bot, version, sha256, size, kind, files, unpacked, status, created,"
        " created_epoch, updated) VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?)",
        (bot, last + 1, sha256, size, kind, files, unpacked, now, epoch, now),
    )
    return get_submission(conn, int(cur.lastrowid or 0))


def get_submission(conn: sqlite3.Connection, submission_id: int) -> Submission:
    r = conn.execute(f"SELECT {_COLUMNS} WHERE s.id = ?", (submission_id,)).fetchone()
    if r is None:
        raise KeyError(submission_id)
    return _row(r)


def submissions_of(conn: sqlite3.Connection, owner: str) -> list[Submission]:
    rows = conn.execute(f"SELECT {_COLUMNS} WHERE b.owner = ? ORDER BY s.id DESC", (owner,)).fetchall()
    return [_row(r) for r in rows]


def recent_count(conn: sqlite3.Connection, owner: str, since_epoch: float) -> tuple[int, float | None]:
    """(submissions by `owner` since then, the epoch of the oldest of them)."""
    n, oldest = conn.execute(
        "SELECT count(*), min(s.created_epoch) FROM submissions s JOIN bots b ON b.name = s.bot"
        " WHERE b.owner = ? AND s.created_epoch >= ?",
        (owner, since_epoch),
    ).fetchone()
    return int(n), oldest


def kept_bytes(conn: sqlite3.Connection, owner: str) -> int:
    """Bytes of archives kept for `owner`, every version of every bot together."""
    (total,) = conn.execute(
        "SELECT coalesce(sum(s.size), 0) FROM submissions s JOIN bots b ON b.name = s.bot WHERE b.owner = ?",
        (owner,),
    ).fetchone()
    return int(total)


def set_status(conn: sqlite3.Connection, submission: int, status: Status, now: str, reason: str | None = None) -> None:
    conn.execute(
        "UPDATE submissions SET status = ?, reason = ?, updated = ? WHERE id = ?", (status, reason, now, submission)
    )


def next_queued(conn: sqlite3.Connection) -> Submission | None:
    """The oldest queued submission whose owner has no build or check under way (one at a time per user)."""
    r = conn.execute(
        f"SELECT {_COLUMNS} WHERE s.status = 'queued' AND b.owner NOT IN "
        "(SELECT b2.owner FROM submissions s2 JOIN bots b2 ON b2.name = s2.bot"
        " WHERE s2.status IN ('building', 'checking')) ORDER BY s.id LIMIT 1"
    ).fetchone()
    return None if r is None else _row(r)


def requeue_unfinished(conn: sqlite3.Connection, now: str) -> int:
    """After a restart: a build or check that was running runs again."""
    cur = conn.execute(
        "UPDATE submissions SET status = 'queued', updated = ? WHERE status IN ('building', 'checking')", (now,)
    )
    return cur.rowcount


def _make_active(conn: sqlite3.Connection, sub: Submission, now: str) -> list[int]:
    """`sub` is its bot's active version; the one before retires. Returns the retired ids."""
    retired = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM submissions WHERE bot = ? AND status = 'active' AND id != ?", (sub.bot, sub.id)
        )
    ]
    conn.executemany("UPDATE submissions SET status = 'retired', updated = ? WHERE id = ?", [(now, r) for r in retired])
    conn.execute(
        "UPDATE submissions SET status = 'active', reason = NULL, active_since = ?, updated = ? WHERE id = ?",
        (now, now, sub.id),
    )
    return retired


def activate(conn: sqlite3.Connection, submission: int, language: str, check_log: str, now: str) -> list[int]:
    """The version passed its gate: it is its bot's active one, and the one
    before retires (its games and rating history stay). Returns the retired ids."""
    retired = _make_active(conn, get_submission(conn, submission), now)
    conn.execute("UPDATE submissions SET language = ?, check_log = ? WHERE id = ?", (language, check_log, submission))
    return retired


def reactivate(conn: sqlite3.Connection, submission: int, now: str) -> list[int]:
    """An older version that passed its gate (`retired`) is its bot's active one
    again, with its rating, and the active one retires. Returns the retired ids."""
    sub = get_submission(conn, submission)
    if sub.status == "active":
        raise SubmissionRefused(f"{sub.bot} version {sub.version} is active already", status=409)
    if sub.status != "retired":
        raise SubmissionRefused(
            f"{sub.bot} version {sub.version} is {sub.status}: only a version that passed its check (retired) "
            "can be made active again",
            status=409,
        )
    return _make_active(conn, sub, now)


def fail(conn: sqlite3.Connection, submission: int, reason: str, now: str, check_log: str | None = None) -> None:
    conn.execute(
        "UPDATE submissions SET status = 'failed', reason = ?, check_log = coalesce(?, check_log), updated = ?"
        " WHERE id = ?",
        (reason, check_log, now, submission),
    )


def active_submissions(conn: sqlite3.Connection) -> list[Submission]:
    rows = conn.execute(f"SELECT {_COLUMNS} WHERE s.status = 'active' ORDER BY s.id").fetchall()
    return [_row(r) for r in rows]


def versions_in_play(conn: sqlite3.Connection) -> list[Submission]:
    """The active versions of bots not disqualified: those matchmaking seats and the ratings rank."""
    rows = conn.execute(f"SELECT {_COLUMNS} WHERE {IN_PLAY} ORDER BY s.id").fetchall()
    return [_row(r) for r in rows]


@dataclass(frozen=True)
class Disqualification:
    bot: str
    reason: str
    set_by: str
    since: str

    def as_dict(self, *, host_view: bool) -> dict[str, str]:
        shown = {"reason": self.reason, "since": self.since}
        return {**shown, "set_by": self.set_by} if host_view else shown


def disqualification(conn: sqlite3.Connection, bot: str) -> Disqualification | None:
    row = conn.execute("SELECT bot, reason, set_by, since FROM disqualifications WHERE bot = ?", (bot,)).fetchone()
    return None if row is None else Disqualification(*row)


def disqualifications(conn: sqlite3.Connection) -> list[Disqualification]:
    rows = conn.execute("SELECT bot, reason, set_by, since FROM disqualifications ORDER BY bot").fetchall()
    return [Disqualification(*r) for r in rows]


def check_not_disqualified(conn: sqlite3.Connection, bot: str) -> None:
    """Refuse (403) a new version of, or a version change to, a disqualified bot."""
    out = disqualification(conn, bot)
    if out is not None:
        raise SubmissionRefused(f"the bot {bot!r} is disqualified ({out.reason}): it takes no new versions", status=403)


def disqualify(conn: sqlite3.Connection, bot: str, reason: str, by: str, now: str) -> tuple[Disqualification, bool]:
    """Take `bot` out of play (inside a transaction). Returns its disqualification
    and whether it is new (False: it was out already, and stays as it was)."""
    current = disqualification(conn, bot)
    if current is not None:
        return current, False
    conn.execute(
        "INSERT INTO disqualifications (bot, reason, set_by, since) VALUES (?, ?, ?, ?)", (bot, reason, by, now)
    )
    return Disqualification(bot, reason, by, now), True


def reinstate(conn: sqlite3.Connection, bot: str) -> bool:
    """Put `bot` back in play with its active version and its rating; False if it was not out."""
    return conn.execute("DELETE FROM disqualifications WHERE bot = ?", (bot,)).rowcount > 0


def private_fields(conn: sqlite3.Connection, submission: int) -> dict[str, str | None]:
    """What only the owner and admins see: the check's report and the language."""
    row = conn.execute(
        "SELECT check_log, language, active_since FROM submissions WHERE id = ?", (submission,)
    ).fetchone()
    return {"check_log": row[0], "language": row[1], "active_since": row[2]} if row else {}


def submissions_of_bot(conn: sqlite3.Connection, bot: str) -> list[Submission]:
    rows = conn.execute(f"SELECT {_COLUMNS} WHERE s.bot = ? ORDER BY s.version", (bot,)).fetchall()
    return [_row(r) for r in rows]
