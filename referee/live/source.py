"""What a live dashboard shows, made once for every viewer: the summary
(standings and progress), the live table's frame, a game's replay page and a
finished game's replay data, each cached until what it shows changes.

A page is rendered in a process of its own at a low priority, one at a
time, never on the loop that plays the games: a 500-deal game's log takes a
second of CPU, and a spectator who asked for many would otherwise make the
bots time out (on the loop), or take half the games' pace (on a thread,
which holds the interpreter's lock the loop needs). At most `MAX_WAITING`
requests wait for a render; the next is told to come back. The caches are
bounded LRUs, in entries and in bytes. A game's own log (every card) is
shown only once the game is over and so is every game of its deal set
(`LiveBoard.settled`): its siblings play the same cards.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import trio

from referee.errors import RefereeError
from referee.live.board import LiveBoard, LiveGame
from referee.live.follow import DbStandings
from referee.live.tables import PAGE_ASSETS, game_data, shell
from referee.replay.html import build_replay_data, linked_page_html
from referee.web.renderer import Busy, Lru, Renderer

PAGE_REUSE_S = 1.0
MAX_LOG_BYTES = 64 << 20  # a longer log is not rendered here: `replay LOG --html` makes its page


class TooLarge(RefereeError):
    """A log too long to render for a spectator; the message says what to do instead."""


def _log_version(log: Path | None) -> tuple[int, int] | None:
    """(size, mtime) of a log file, or None if there is none (or its name cannot be one)."""
    try:
        st = log.stat() if log is not None else None
    except OSError:  # no such file, a name too long, ...
        return None
    return (st.st_size, st.st_mtime_ns) if st is not None and st.st_size >= 0 else None


def _log_page(log: Path) -> bytes:
    return gzip.compress(linked_page_html(build_replay_data(log), PAGE_ASSETS).encode(), 5)


def _live_page(g: LiveGame, released: list[dict[str, Any]], reveal_delay: float | None) -> bytes:
    return gzip.compress(linked_page_html(game_data(g, released, reveal_delay), PAGE_ASSETS).encode(), 5)


def _log_data(log: Path) -> bytes:
    return msgspec.json.encode(build_replay_data(log))


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
    _pages: Lru = field(default_factory=Lru)
    _finals: Lru = field(default_factory=Lru)
    _renderer: Renderer = field(default_factory=Renderer)

    def __post_init__(self) -> None:
        if isinstance(self.db, DbStandings):  # a tournament: its database says what finished, not the stream
            self.board.settled_rule = self.db.settled

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

    def _shown_log(self, game_id: int) -> tuple[Path, tuple[int, int]] | None:
        """The game's log and its version, if a spectator may see it: every card."""
        if not self.board.settled_id(game_id):
            return None
        log = self.log_of(game_id)
        version = _log_version(log)
        if log is None or version is None:
            return None
        if version[0] > MAX_LOG_BYTES:
            raise TooLarge(
                f"game {game_id}'s log is {version[0] >> 20} MiB, too long to show here: "
                "`chicago-referee replay LOG --html` makes its page"
            )
        return log, version

    async def _render(self, cache: Lru, key: Any, version: Any, make: Callable[[], bytes], made: float = 0.0) -> bytes:
        """`make()` by the renderer, unless another viewer had it made meanwhile."""
        body, new = await self._renderer.make(lambda: cache.get(key, version), make)
        return cache.put(key, version, body, made) if new else body

    async def page(self, game_id: int) -> bytes | None:
        """A game's replay page, gzipped: its log once it may show every card,
        else the board's view; None if neither exists.

        Rendered once for every viewer of a game: a finished game's page while
        its log is unchanged, a running game's at most every `PAGE_REUSE_S`
        (for a page opened as it is; a live table takes the moves from its stream)."""
        shown = self._shown_log(game_id)
        if shown is not None:
            log, version = shown
            page = self._pages.get(game_id, ("log", version))
            if page is not None:
                return page
            try:
                return await self._render(self._pages, game_id, ("log", version), partial(_log_page, log))
            except Busy:
                raise
            except RefereeError:
                pass  # a log that does not read: the board's view, if any
        g = self.board.game(game_id)
        if g is None:
            return None
        released = self.board.released(g)
        seen = ("live", g.version, len(released), g.result is not None, self.board.settled(g))
        now = trio.current_time()
        cached = self._pages.peek(game_id)
        if cached is not None and (
            cached[0] == seen or (cached[0][0] == "live" and g.result is None and now - cached[1] < PAGE_REUSE_S)
        ):
            return cached[2]
        frozen = replace(g, public=list(g.public), private=list(g.private), rows=[], start_bytes=b"")  # sent to it
        make = partial(_live_page, frozen, released, self.board.reveal_delay)
        return await self._render(self._pages, game_id, seen, make, now)

    async def final_data(self, game_id: int) -> bytes | None:
        """A finished game's replay data from its log (every card), encoded
        once for every viewer; None while it may not be shown (its deal set
        is not over), or its log is unknown or unreadable."""
        try:
            shown = self._shown_log(game_id)
        except TooLarge:
            return None  # the table asks for its data, and is told why
        if shown is None:
            return None
        log, version = shown
        data = self._finals.get(game_id, version)
        if data is not None:
            return data
        try:
            return await self._render(self._finals, game_id, version, partial(_log_data, log))
        except Busy:
            raise
        except RefereeError:
            return None  # a log that does not read: the table shows the board's view

    def close(self) -> None:
        """Stop the renderer's process (a page being made is abandoned)."""
        self._renderer.close()

    def log_known(self, game_id: int) -> bool:
        """Whether a finished game's page can be its log: a tournament's logs are
        known once the database has the game (a moment after the stream tells of it)."""
        return self.db is None or _log_version(self.log_of(game_id)) is not None
