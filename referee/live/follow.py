"""Following the stream files and the results database, for the board.

`StreamTail` reads what was appended to a file since the last look, in whole
lines (a last line without its newline is still being written, so it waits).
`DbStandings` reads a tournament's results database read-only (SQLite's
`mode=ro`: the dashboard can never change a result) and keeps the standings
as the HTML report computes them, recomputed when a game was added, and
which deal sets are over (their games' logs may then show every card).
`follow` polls both and feeds the board until cancelled: the files from
where it last stopped, the database at most once a second and less often
when reading it takes long.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from referee.errors import RefereeError, ResultsError
from referee.live.board import MAX_LINE, LiveBoard
from referee.tournament.standings import Standings, from_store
from referee.tournament.standings_export import to_dict
from referee.tournament.store import Store

POLL_S = 0.2
DB_EVERY_S = 1.0
DB_SHARE = 0.05  # of one core at most for re-reading the database: a bigger one is read less often
READ_CHUNK = 1 << 20


class StreamTail:
    """The new whole lines of an append-only file (one that may not exist yet)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""
        self._ino: int | None = None

    def read_lines(self, limit: int = READ_CHUNK * 8) -> list[bytes]:
        """Lines appended since the last call (up to about `limit` bytes of them)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return []
        try:
            st = os.fstat(fd)
            if self._ino is not None and (st.st_ino != self._ino or st.st_size < self.offset):
                self.offset, self.partial = 0, b""  # a new file in its place (a --fresh tournament)
            self._ino = st.st_ino
            chunks: list[bytes] = []
            got = 0
            while got < limit:
                data = os.pread(fd, READ_CHUNK, self.offset)
                if not data:
                    break
                self.offset += len(data)
                got += len(data)
                chunks.append(data)
        finally:
            os.close(fd)
        if not chunks:
            return []
        data = self.partial + b"".join(chunks)
        lines = data.split(b"\n")
        self.partial = lines.pop()
        if len(self.partial) > MAX_LINE:  # not a line the referee wrote: drop it
            self.partial = b""
        return [line for line in lines if line]


def open_read_only(path: Path) -> Store:
    """A results database opened so that nothing can be written to it."""
    if not path.is_file():
        raise RefereeError(f"{path}: no such results database (has the tournament been started?)")
    try:
        conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, isolation_level=None, timeout=30.0)
        conn.execute("PRAGMA query_only=ON")
        conn.execute("SELECT 1 FROM tournament LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ResultsError(f"{path}: cannot read the results database: {exc}") from exc
    return Store(path, conn, None)


@dataclass
class DbStandings:
    """A tournament's standings from its database, kept current."""

    path: Path
    standings: Standings | None = None
    as_dict: dict[str, Any] | None = None
    logs: dict[int, str] = field(default_factory=dict)  # game id -> its log file, as the database has it
    deal_sets: dict[int, int] = field(default_factory=dict)  # game id -> its deal set, for every game recorded
    set_done: Counter[int] = field(default_factory=Counter)  # deal set -> games of it recorded
    set_size: int = 0  # games in a deal set (every table plays it under every rotation); 0: unknown
    count: int = -1
    error: str | None = None
    cost_s: float = 0.0  # CPU time the last full read took

    def refresh(self) -> bool:
        """Re-read the database if its game count changed; True if the standings did."""
        if not self.path.is_file():
            self.error = f"waiting for the tournament to create {self.path}"
            return False
        try:
            store = open_read_only(self.path)
        except RefereeError as exc:
            self.error = str(exc)
            return False
        try:
            count = store.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            if count == self.count and self.standings is not None:
                return False
            began = time.thread_time()
            st = from_store(store)
            self.logs = {g.game_id: g.log_path for g in st.games if g.log_path}  # made whole when asked
            self.deal_sets = {g.game_id: g.deal_set for g in st.games}
            self.set_done = Counter(self.deal_sets.values())
            info = store.tournament()
            sets = info.definition.get("deal_sets") if info is not None else None
            self.set_size = st.scheduled // sets if isinstance(sets, int) and sets > 0 else 0
            self.standings, self.as_dict, self.count, self.error = st, to_dict(st), count, None
            self.cost_s = time.thread_time() - began
            return True
        except (RefereeError, sqlite3.DatabaseError) as exc:
            self.error = str(exc)
            return False
        finally:
            store.close()

    def settled(self, game_id: int) -> bool:
        """Whether the database has game `game_id` and every game of its deal set."""
        deal_set = self.deal_sets.get(game_id)
        if deal_set is None:
            return False
        st = self.standings
        if st is not None and st.finished >= st.scheduled:
            return True
        return self.set_size > 0 and self.set_done[deal_set] >= self.set_size

    def log_of(self, game_id: int) -> Path | None:
        where = self.logs.get(game_id)
        if where is None:
            return None
        log = Path(where)
        return log if log.is_absolute() else self.path.resolve().parent / log  # as the store's abs_path


async def follow(
    board: LiveBoard, public: Path, private: Path | None, db: DbStandings | None, poll_s: float = POLL_S
) -> None:
    """Feed `board` from the stream files (the private one only when the board
    reveals cards) and refresh `db` when games finish, until cancelled."""
    pub = StreamTail(public)
    priv = StreamTail(private) if private is not None and board.reveal_delay is not None else None
    last_finished = -1
    waited = DB_EVERY_S
    while True:
        # Private lines first: the game each one belongs to was announced on the
        # public stream before it was written, so it is known once that is read.
        held = priv.read_lines() if priv is not None else []
        lines = pub.read_lines()
        for line in lines:
            board.feed(line)
        for line in held:
            board.feed_private(line)
        if lines or held:
            board.bump()
        if db is not None:
            waited += poll_s
            # A game is in the stream a moment before its row is committed: look
            # again when one finished, and every few seconds anyway; not more
            # often than every `DB_EVERY_S`, nor than keeps it under `DB_SHARE`
            # of a core (standings with ratings are the dashboard's dearest
            # work, they grow with the games, and the tournament shares the machine).
            streamed = (board.info.get("finished") or 0) + board.finished_this_run
            behind = board.finished_this_run != last_finished or db.count < streamed
            gap = max(DB_EVERY_S, db.cost_s / DB_SHARE)
            if waited >= gap and (behind or waited >= 3 * gap):
                waited = 0.0
                last_finished = board.finished_this_run
                if await trio.to_thread.run_sync(db.refresh):
                    board.bump()
        await trio.sleep(poll_s)
