"""Everything an arena keeps lives in its folder: `arena.toml`, the SQLite
database `arena.db` (WAL) and, by sha256, the submitted archives, the builds
and the game logs. No other server has to be installed.

The database is opened with `synchronous=FULL`: a row committed is on disk,
so what the arena has answered for survives a `kill -9` and a power cut.
Readers (`arena user list`, the API) never wait for the writer. Every SQLite
error leaves as one `ResultsError` line naming the file and saying what to do.

The database has a schema version. Opening one of an older version brings
it up to this one (`_UPGRADES`: each step adds what the next version has,
idempotently, in one transaction); a newer one is refused, so an older
referee never plays a field whose rules it does not know (version 2: the
host's pause, close time and disqualifications; the rating history).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from referee import __version__
from referee.arena.controls import CONTROLS_SCHEMA
from referee.arena.submissions import DISQUALIFICATIONS_SCHEMA, SUBMISSIONS_SCHEMA
from referee.arena.units import RATING_HISTORY_SCHEMA, UNITS_SCHEMA
from referee.arena.users import USERS_SCHEMA
from referee.errors import ResultsError

DB_NAME = "arena.db"
SCHEMA_VERSION = 2
FOLDERS = ("archives", "builds", "logs")  # by sha256 / by digest / by game

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
    + USERS_SCHEMA
    + SUBMISSIONS_SCHEMA
    + UNITS_SCHEMA
    + DISQUALIFICATIONS_SCHEMA
    + CONTROLS_SCHEMA
    + RATING_HISTORY_SCHEMA
)

# From a version to the next: what it lacks (only new tables so far, made if missing).
_UPGRADES = {
    1: DISQUALIFICATIONS_SCHEMA + CONTROLS_SCHEMA + RATING_HISTORY_SCHEMA,  # 2: the host's controls, rating charts
}

F = TypeVar("F", bound=Callable[..., Any])


def now_text() -> str:
    """The time as the arena writes it: UTC, ISO 8601, milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def sync_folder(folder: Path) -> None:
    """fsync a folder: a file renamed or made in it stays there after a crash."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _damaged(path: Path, exc: BaseException) -> ResultsError:
    what = " ".join(str(exc).split())
    if "locked" in what or "busy" in what:
        return ResultsError(f"{path}: the arena database is busy ({what}); try again in a moment")
    if "disk is full" in what or "disk I/O" in what:
        return ResultsError(f"{path}: the arena database cannot be written ({what}); free disk space and restart")
    return ResultsError(
        f"{path}: the arena database is damaged or is not one ({what}); restore it from a backup "
        "(sqlite3 .backup copies it while the arena runs)"
    )


def translated(method: F) -> F:
    """SQLite errors in an ArenaStore method become one ResultsError line naming the file."""

    @functools.wraps(method)
    def wrapper(self: ArenaStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.IntegrityError:
            raise  # a constraint the arena itself broke: a bug, not damage
        except sqlite3.DatabaseError as exc:
            raise _damaged(self.path, exc) from exc

    return wrapper  # type: ignore[return-value]


class ArenaStore:
    """An open arena database. Use `ArenaStore.open` (or `create`); always `close()`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn
        # The server uses its one connection from the event loop and from threads (uploads,
        # refits): one statement or transaction at a time, never interleaved.
        self.lock = threading.RLock()

    @classmethod
    def create(cls, folder: Path) -> ArenaStore:
        """A new arena's database and folders (the folder itself must exist)."""
        for name in FOLDERS:
            (folder / name).mkdir(exist_ok=True)
        return cls._connect(folder / DB_NAME, create=True)

    @classmethod
    def open(cls, folder: Path) -> ArenaStore:
        path = folder / DB_NAME
        if not path.is_file():
            raise ResultsError(f"{path}: no arena database here (`arena init {folder}` makes an arena)")
        return cls._connect(path, create=False)

    @classmethod
    def _connect(cls, path: Path, *, create: bool) -> ArenaStore:
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # answered for means on disk
            conn.execute("PRAGMA foreign_keys=ON")
            if create:
                conn.executescript(_SCHEMA)
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('created_by', ?)", (f"chicago-referee {__version__}",))
            _upgrade(conn)
            _check_schema(path, conn)
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            raise _damaged(path, exc) from exc
        except ResultsError:
            if conn is not None:
                conn.close()
            raise
        return cls(path, conn)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write, all or nothing; SQLite errors translated."""
        try:
            with self.lock:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self.conn
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
                self.conn.execute("COMMIT")
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:
            raise _damaged(self.path, exc) from exc

    @translated
    def read(self, query: Callable[[sqlite3.Connection], Any]) -> Any:
        """`query(conn)` with SQLite errors translated."""
        with self.lock:
            return query(self.conn)

    @translated
    def read_snapshot(self, query: Callable[[sqlite3.Connection], Any]) -> Any:
        """`query(conn)` on a read-only connection of its own, in one read
        transaction (one consistent state): for a long read on a thread (an
        export), which then holds no lock the server's loop would wait for."""
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
        try:
            conn.execute("BEGIN")
            return query(conn)
        finally:
            conn.close()


def _schema_version(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return None if row is None else str(row[0])


def _upgrade(conn: sqlite3.Connection) -> None:
    """Bring a database of an older version up to this one, a step at a time."""
    version = _schema_version(conn)
    while version is not None and version.isdigit() and int(version) in _UPGRADES:
        step = int(version)
        try:
            conn.executescript(
                "BEGIN IMMEDIATE;"
                + _UPGRADES[step]
                + f"UPDATE meta SET value = '{step + 1}' WHERE key = 'schema_version' AND value = '{step}'; COMMIT;"
            )
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        version = _schema_version(conn)


def _check_schema(path: Path, conn: sqlite3.Connection) -> None:
    version = _schema_version(conn)
    if version != str(SCHEMA_VERSION):
        raise ResultsError(
            f"{path}: arena database version {version}, this referee reads version {SCHEMA_VERSION}; "
            "use the chicago-referee that made it"
        )
