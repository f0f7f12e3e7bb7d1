"""Opening a tournament's results database file, and taking its run lock.

Split from the store, whose `Store` is what is read and written inside the
file, because getting hold of the file is a job of its own with its own ways
to fail: `open_database` connects (WAL mode, foreign keys), creates the
schema in a new file, refuses a file that is missing, not SQLite, of another
schema version or damaged (one `ResultsError` line naming it), and takes the
run lock: an exclusive `flock` on the database file, held while a tournament
runs, so two referees never run the same tournament at once (`Store.remove`
refuses too while it is held).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path

from referee.errors import RefereeError, ResultsError
from referee.tournament.schema import SCHEMA, SCHEMA_VERSION, check_sound, damaged


def open_database(
    path: Path, *, create: bool = False, lock: bool = False
) -> tuple[sqlite3.Connection, int | None, tuple[int, int]]:
    """A connection to the results database at `path` (with `create`, created),
    the run lock's file descriptor if `lock` took it, and the file's identity
    (device, inode) for `Store.check_same_file`."""
    if not path.exists():
        if not create:
            raise RefereeError(f"{path}: no such results database (has the tournament been run?)")
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.is_file():
        raise ResultsError(f"{path}: not a results database file (it is a directory or a device)")
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable against a killed process
        conn.execute("PRAGMA foreign_keys=ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            if not create and not conn.execute("SELECT 1 FROM sqlite_master WHERE name='tournament'").fetchone():
                raise ResultsError(f"{path}: not a chicago-referee results database")
            conn.executescript(SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise ResultsError(
                f"{path}: results database schema {version} is not supported (this referee "
                f"reads schema {SCHEMA_VERSION}); finish that tournament with the referee that "
                "started it, or start it again with --fresh"
            )
        check_sound(path, conn)
        st = os.stat(path)
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise damaged(path, exc) from None
    except (ResultsError, OSError) as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, OSError):
            raise ResultsError(f"{path}: cannot open the results database: {exc.strerror or exc}") from None
        raise
    lock_fd = None
    if lock:
        lock_fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            conn.close()
            raise RefereeError(f"{path}: another referee is running this tournament right now") from None
    return conn, lock_fd, (st.st_dev, st.st_ino)
