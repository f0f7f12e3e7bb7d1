"""The live event stream: what a tournament or match writes while it plays.

Two append-only JSONL files beside the results database (or in the match's
folder): the public stream, which carries only what every spectator may see
(events addressed to everyone, who decided and how long it took, failures by
reason code, results), and the private stream, readable by the host only
(mode 0600, in the folder no sandboxed bot can see), which carries the rest
(cards dealt to a seat, a seat's exchange discards) so a dashboard can show
all cards after a delay without ever putting them in the public stream.

Files, not a socket: the writer needs no listener and never waits for a
reader, any number of readers (`serve`, another dashboard, `tail -f`) follow
at their own pace, a reader started late or restarted catches up from the
start, and the writer holds nothing in memory but a few counters per running
game. Each record is written with one `write` on an O_APPEND descriptor, so
a reader sees whole lines (a last line without its newline is still being
written). The format is documented in docs/live.md; `STREAM_VERSION` is its
version, carried by every `run_started` record.

An arena runs for weeks and its dashboard is in its own process: there
`BoardWriter` hands the same lines to the board directly, so no file grows
with the games and none holds their cards.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from referee.games.base import PUBLIC
from referee.live.board import LiveBoard
from referee.play.game_spec import GameRecord, GameSpec
from referee.play.watch import WatchedGame

STREAM_VERSION = 1
PUBLIC_SUFFIX = ".live.ndjson"
PRIVATE_SUFFIX = ".live-private.ndjson"

_encoder = msgspec.json.Encoder()


def stream_paths(beside: Path) -> tuple[Path, Path]:
    """(public, private) stream files of the results database `beside`
    (`tournament.db` -> `tournament.live.ndjson`, `tournament.live-private.ndjson`)."""
    base = beside.with_suffix("") if beside.suffix else beside
    return base.with_name(base.name + PUBLIC_SUFFIX), base.with_name(base.name + PRIVATE_SUFFIX)


class LiveWriter:
    """Appends one run's records to the public and private stream files.

    `watch_games` is the hook a match or a tournament hands its games
    (`referee.play.watch.WatchGames`). A write that fails (a full disk) stops
    the stream, never the games: `broken` then says why.
    """

    def __init__(
        self,
        public: Path,
        private: Path | None,
        *,
        source: str,
        name: str,
        game: str,
        bots: list[str],
        scheduled: int,
        finished: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.public_path = public
        self._public = self._open(public, 0o644)
        self._private = self._open(private, 0o600) if private is not None else None
        self._begin(source=source, name=name, game=game, bots=bots, scheduled=scheduled, finished=finished, clock=clock)

    def _begin(
        self,
        *,
        source: str,
        name: str,
        game: str,
        bots: list[str],
        scheduled: int,
        finished: int,
        clock: Callable[[], float],
    ) -> None:
        self.clock = clock
        self.run = secrets.token_hex(4)
        self.broken: str | None = None
        self.running: dict[int, GameFeed] = {}
        head = {
            "type": "run_started",
            "v": STREAM_VERSION,
            "t": self.now(),
            "run": self.run,
            "source": source,
            "name": name,
            "game": game,
            "bots": bots,
            "scheduled": scheduled,
            "finished": finished,
        }
        self.write(
            [_encoder.encode(head) + b"\n"],
            [_encoder.encode({"type": "run_started", "v": STREAM_VERSION, "t": head["t"], "run": self.run}) + b"\n"],
        )

    @staticmethod
    def _open(path: Path, mode: int) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, mode)
        os.fchmod(fd, mode)  # an older file keeps no wider permissions than these
        return fd

    @property
    def keeps_private(self) -> bool:
        """Whether a private stream (every card, for the host) is written beside the public one."""
        return self._private is not None

    def now(self) -> float:
        return round(self.clock(), 3)

    def write(self, public: list[bytes], private: Sequence[bytes] = ()) -> None:
        """Append whole lines, one `write` per file; an error stops the stream."""
        if self.broken is not None:
            return
        try:
            if public:
                os.write(self._public, b"".join(public))
            if private and self._private is not None:
                os.write(self._private, b"".join(private))
        except OSError as exc:
            self.broken = f"cannot write the live stream {self.public_path}: {exc.strerror or exc}"

    def watch_games(self, spec: GameSpec, names: list[str]) -> GameFeed:
        feed = GameFeed(self, spec, names)
        self.running[spec.game_id] = feed
        return feed

    def close(self, status: str) -> None:
        """The run is over: games still running are abandoned (they are played again on resume)."""
        t = self.now()
        lines = [
            _encoder.encode({"type": "game_abandoned", "t": t, "game_id": g, "i": f.i}) + b"\n"
            for g, f in self.running.items()
        ]
        lines.append(_encoder.encode({"type": "run_ended", "t": t, "status": status}) + b"\n")
        self.write(lines)
        self.running.clear()
        self._release()
        self.broken = self.broken or "closed"

    def _release(self) -> None:
        for fd in (self._public, self._private):
            if fd is not None:
                os.close(fd)
        self._private = None


class BoardWriter(LiveWriter):
    """The same records handed straight to a board in this process: the
    arena's dashboard, which runs for weeks, so no file may grow with its
    games and no file holds its cards (the board keeps a bounded window).
    The lines are exactly those a `LiveWriter` writes, so the board cannot
    tell the two apart."""

    def __init__(
        self, board: LiveBoard, *, source: str, name: str, game: str, clock: Callable[[], float] = time.time
    ) -> None:
        self.board = board
        self.public_path = Path("-")
        self._begin(source=source, name=name, game=game, bots=[], scheduled=0, finished=0, clock=clock)

    @property
    def keeps_private(self) -> bool:
        return self.board.reveal_delay is not None  # hidden cards are not even made into lines otherwise

    def write(self, public: list[bytes], private: Sequence[bytes] = ()) -> None:
        for line in public:
            self.board.feed(line[:-1])
        for line in private:
            self.board.feed_private(line[:-1])
        self.board.bump()

    def _release(self) -> None:
        pass


class GameFeed:
    """One game's part of the stream (a `GameWatch`).

    Public records of a game are numbered `i` = 0, 1, 2, ... (0 is
    `game_started`); a private record carries `at`, the number of public
    records of its game written before it, and `j`, its own number, which
    places it exactly between them without the public stream saying anything
    about it. Only events whose audience is PUBLIC go to the public file.
    """

    __slots__ = ("cursor", "game_id", "i", "j", "names", "writer")

    def __init__(self, writer: LiveWriter, spec: GameSpec, names: list[str]) -> None:
        self.writer = writer
        self.game_id = spec.game_id
        self.names = names
        self.i = 0
        self.j = 0
        self.cursor = 0

    def _public(self, out: list[bytes], record: dict[str, Any]) -> None:
        record["i"] = self.i
        self.i += 1
        out.append(_encoder.encode(record) + b"\n")

    def _private(self, out: list[bytes], record: dict[str, Any]) -> None:
        record["at"] = self.i
        record["j"] = self.j
        self.j += 1
        out.append(_encoder.encode(record) + b"\n")

    def _events(self, game: WatchedGame, t: float, pub: list[bytes], priv: list[bytes]) -> None:
        events = game.state.events
        keep_private = self.writer.keeps_private
        while self.cursor < len(events):
            audience, event = events[self.cursor]
            self.cursor += 1
            if audience == PUBLIC:
                self._public(pub, {"type": "event", "t": t, "game_id": self.game_id, "event": event})
            elif keep_private:  # anything not addressed to everyone is hidden
                self._private(priv, {"type": "event", "t": t, "game_id": self.game_id, "to": audience, "event": event})

    def started(self, game: WatchedGame) -> None:
        sp = game.spec
        t = self.writer.now()
        pub: list[bytes] = []
        priv: list[bytes] = []
        self._public(
            pub,
            {
                "type": "game_started",
                "t": t,
                "game_id": self.game_id,
                "game": sp.game.name,
                "n_players": sp.n_players,
                "seats": self.names,
                "rules": sp.rules,
                "deal_set": sp.deal_set,
            },
        )
        self._events(game, t, pub, priv)
        self.writer.write(pub, priv)

    def acted(self, game: WatchedGame, seat: int, source: str, action: Any, elapsed: float | None) -> None:
        t = self.writer.now()
        pub: list[bytes] = []
        priv: list[bytes] = []
        ms = None if elapsed is None else round(elapsed * 1000, 1)
        self._public(
            pub, {"type": "decision", "t": t, "game_id": self.game_id, "seat": seat, "source": source, "ms": ms}
        )
        if self.writer.keeps_private:  # an action may name hidden cards (an exchange's discards)
            self._private(
                priv,
                {"type": "action", "t": t, "game_id": self.game_id, "seat": seat, "source": source, "action": action},
            )
        self._events(game, t, pub, priv)
        self.writer.write(pub, priv)

    def failed(self, game: WatchedGame, seat: int, reason: str, message: str) -> None:
        # The message may quote the seat's hand: the public stream gets the reason code only.
        pub: list[bytes] = []
        self._public(
            pub, {"type": "failure", "t": self.writer.now(), "game_id": self.game_id, "seat": seat, "reason": reason}
        )
        self.writer.write(pub)

    def finished(self, game: WatchedGame, record: GameRecord) -> None:
        t = self.writer.now()
        pub: list[bytes] = []
        priv: list[bytes] = []
        self._events(game, t, pub, priv)
        self._public(
            pub,
            {
                "type": "game_finished",
                "t": t,
                "game_id": self.game_id,
                "winner": record.winner,
                "scores": record.scores,
                "placements": record.placements,
                "reason": record.reason,
                "forfeited": sorted(record.forfeited),
                "decisions": record.decisions,
            },
        )
        self.writer.write(pub, priv)
        self.writer.running.pop(self.game_id, None)
