"""What a live dashboard shows, made once for every viewer: the summary
(standings and progress), the live table's frame, a game's replay page and a
finished game's replay data, each cached until what it shows changes."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.errors import RefereeError
from referee.live.board import LiveBoard
from referee.live.follow import DbStandings
from referee.live.tables import shell, table_data
from referee.replay.html import build_replay_data, render_html

PAGE_REUSE_S = 1.0


@dataclass
class LiveSource:
    """What the dashboard shows: the board, a tournament's standings (or a
    match's tally), and where finished games' logs are."""

    board: LiveBoard
    title: str
    db: DbStandings | None = None
    log_of: Callable[[int], Path | None] = lambda _gid: None
    _summary: tuple[int, bytes] = (-1, b"")
    _shell: bytes = b""
    _pages: dict[int, tuple[float, Any, bytes]] = field(default_factory=dict)  # game id -> (made, key, page)
    _finals: dict[int, tuple[Any, bytes]] = field(default_factory=dict)  # game id -> (key, data)

    def summary_bytes(self) -> bytes:
        """The summary JSON, encoded once per change (every viewer shares it)."""
        version, body = self._summary
        if version == self.board.version:
            return body
        data = self.board.summary()
        data["title"] = self.title
        if self.db is not None:
            data["standings"] = self.db.as_dict
            data["db_error"] = self.db.error
            st = self.db.standings
            if st is not None:  # the database is the truth for what finished
                data["progress"]["finished"] = st.finished
                data["progress"]["scheduled"] = st.scheduled
                data["progress"]["bots"] = [b.name for b in st.bots]
        body = msgspec.json.encode(data)
        self._summary = (self.board.version, body)
        return body

    def shell(self) -> bytes:
        """The live table's replay frame, gzipped, made once."""
        if not self._shell:
            self._shell = gzip.compress(shell().encode(), 6)
        return self._shell

    def page(self, game_id: int) -> bytes | None:
        """A game's replay page, gzipped: its log once it is finished, else the board's view.

        Rendered once for every viewer of a game: a finished game's page while
        its log is unchanged, a running game's at most every `PAGE_REUSE_S`
        (for a page opened as it is; a live table takes the moves from its stream)."""
        now = trio.current_time()
        g = self.board.game(game_id)
        log = self.log_of(game_id)
        cached = self._pages.get(game_id)
        if (g is None or g.result is not None) and log is not None and log.is_file():
            st = log.stat()
            key: Any = ("log", st.st_size, st.st_mtime_ns)
            if cached is not None and cached[1] == key:
                return cached[2]
            try:
                return self._keep(game_id, now, key, gzip.compress(render_html(build_replay_data(log)).encode(), 5))
            except RefereeError:
                pass  # a log that does not read: the board's view, if any
        if g is None:
            return None
        key = ("live", g.version, len(self.board.released(g)), g.result is not None)
        if cached is not None and (
            cached[1] == key or (cached[1][0] == "live" and not key[3] and now - cached[0] < PAGE_REUSE_S)
        ):
            return cached[2]
        data = table_data(self.board, game_id)
        return None if data is None else self._keep(game_id, now, key, gzip.compress(render_html(data).encode(), 5))

    def final_data(self, game_id: int) -> bytes | None:
        """A finished game's replay data from its log (every card), encoded
        once for every viewer; None while its log is unknown or unreadable."""
        log = self.log_of(game_id)
        if log is None or not log.is_file():
            return None
        st = log.stat()
        key = ("data", st.st_size, st.st_mtime_ns)
        cached = self._finals.get(game_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            body = msgspec.json.encode(build_replay_data(log))
        except RefereeError:
            return None  # a log that does not read: the table asks for its page
        if len(self._finals) > 64:  # bounded: the games being watched now
            self._finals.clear()
        self._finals[game_id] = (key, body)
        return body

    def log_known(self, game_id: int) -> bool:
        """Whether a finished game's page can be its log: a tournament's logs are
        known once the database has the game (a moment after the stream tells of it)."""
        log = self.log_of(game_id)
        return self.db is None or (log is not None and log.is_file())

    def _keep(self, game_id: int, now: float, key: Any, page: bytes) -> bytes:
        if len(self._pages) > 64:  # bounded: the games being watched now
            self._pages.clear()
        self._pages[game_id] = (now, key, page)
        return page
