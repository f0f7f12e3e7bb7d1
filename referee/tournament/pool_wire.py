"""The local pool's wire: length-prefixed msgpack frames between the
coordinator and its worker processes (`pool.py`, `pool_worker.py`).

Both ends are this package, but a worker can still die mid-frame or, through
a bug, write something else; so every frame is bounded in size and decoded
into one typed union, and anything that is not a whole, valid frame is a
`FrameError` saying what came instead. A frame is a 4-byte big-endian length
followed by that many bytes of msgpack.

Coordinator to worker: `Play` (a game and where its log goes), `Cancel`.
Worker to coordinator: `Ready` (once, at start), `Done` or `Failed` (per
game), `Beat` (every `BEAT_EVERY` seconds: its loop still runs), `Bye`
(once, after its stdin closed: the CPU it and its bots used).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import trio

from referee.errors import ClusterError, ConfigError
from referee.games import get_game
from referee.play.game_spec import GameRecord
from referee.tournament.game_job import GameJob

HEADER = 4
MAX_FRAME = 64 * 1024 * 1024  # a game record is a few KiB; a job about as much
BEAT_EVERY = 2.0  # seconds between a worker's heartbeats


class FrameError(ClusterError):
    """The other end wrote something that is not a whole, valid frame."""


class Ready(msgspec.Struct, frozen=True, tag="ready"):
    pid: int


class Play(msgspec.Struct, frozen=True, tag="play"):
    id: int
    job: GameJob
    part: str | None  # the `.part` path in the coordinator's log folder (the same file system)
    worker: str  # the name the log header gives this worker


class Cancel(msgspec.Struct, frozen=True, tag="cancel"):
    id: int


class Done(msgspec.Struct, frozen=True, tag="done"):
    id: int
    record: GameRecord
    worker: dict[str, Any]


class Failed(msgspec.Struct, frozen=True, tag="failed"):
    id: int
    error: str  # one line: why the worker would not or could not play the game
    refused: bool  # True: an expected refusal (cannot isolate); False: a bug, with its type


class Beat(msgspec.Struct, frozen=True, tag="beat"):
    pass


class Bye(msgspec.Struct, frozen=True, tag="bye"):
    cpu_s: float  # the worker's own CPU time
    children_cpu_s: float  # its bots' (the children it has waited for)


ToWorker = Play | Cancel
FromWorker = Ready | Done | Failed | Beat | Bye

_encoder = msgspec.msgpack.Encoder()


def frame(message: msgspec.Struct) -> bytes:
    """One message as a frame."""
    payload = _encoder.encode(message)
    return len(payload).to_bytes(HEADER, "big") + payload


def restore_rules(job: GameJob) -> GameJob:
    """A decoded job's rules are plain data: turn them back into the game's rules type."""
    try:
        rules_type = get_game(job.game_name).rules_type
        return dataclasses.replace(job, rules=msgspec.convert(job.rules, rules_type))
    except (msgspec.ValidationError, ConfigError) as exc:
        raise FrameError(f"a job for game {job.key} has rules this worker cannot read: {exc}") from None


class FrameReader:
    """Whole frames from a byte stream, decoded as `kind` (one reader per stream)."""

    def __init__(self, stream: trio.abc.ReceiveStream, kind: Any, who: str) -> None:
        self.stream = stream
        self.who = who
        self._decoder = msgspec.msgpack.Decoder(kind)
        self._buffer = bytearray()

    async def _fill(self, size: int) -> bool:
        """At least `size` bytes buffered; False at end of stream."""
        while len(self._buffer) < size:
            try:
                chunk = await self.stream.receive_some(max(65536, size - len(self._buffer)))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                chunk = b""
            if not chunk:
                return False
            self._buffer += chunk
        return True

    async def receive(self) -> Any:
        """The next message, or None at a clean end of stream (between frames)."""
        if not await self._fill(HEADER):
            if self._buffer:
                raise FrameError(f"{self.who} stopped in the middle of a frame header ({bytes(self._buffer)[:16]!r})")
            return None
        size = int.from_bytes(self._buffer[:HEADER], "big")
        if size > MAX_FRAME:
            raise FrameError(
                f"{self.who} wrote a frame of {size} bytes (at most {MAX_FRAME}); it began "
                f"{bytes(self._buffer)[:16]!r}: not the referee's pool protocol"
            )
        if not await self._fill(HEADER + size):
            raise FrameError(f"{self.who} stopped after {len(self._buffer) - HEADER} of a frame's {size} bytes")
        payload = bytes(self._buffer[HEADER : HEADER + size])
        del self._buffer[: HEADER + size]
        try:
            return self._decoder.decode(payload)
        except msgspec.DecodeError as exc:
            raise FrameError(
                f"{self.who} wrote a frame that is not a valid message ({exc}); it began {payload[:16]!r}"
            ) from None
