"""Game logs: one JSONL file per game, byte-stable apart from timings.

Line 1 is the header (versions, game, rules, seed, explicit deals, bots with
argv, time control, failure policy, isolation, and the start position of a
game that began from one). Then, in order: `deal` records (dealer
and the full deck order of every deal), every message `send`/`recv` per seat
with its time in ms since the game started, every engine `event` with its
audience, every applied `action` (its source: the bot, or the referee's
default after a failure), every `failure`, and last the `result`.
Everything needed to re-simulate and verify the game is in the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from protocol.common import MAX_NESTING, nests_deeper_than
from protocol.explain import json_error, schema_error
from protocol.messages import SeatFailure
from referee.errors import CorruptLog

LOG_FORMAT = 1
MAX_LOGGED_LINE = 4096

_encoder = msgspec.json.Encoder(order="deterministic")


class PlayerInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    seat: int
    name: str
    argv: list[str]
    human: bool = False
    """A person played this seat (`chicago-referee play`): left out of ratings by default."""


class LogHeader(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="header"):
    format: int = LOG_FORMAT
    referee: str
    game: str
    game_id: int
    rules: Any
    n_players: int
    seed: int
    deals: list[dict[str, Any]]
    players: list[PlayerInfo]
    time_control: Any
    failure_policy: Any
    match_seed: int | None = None
    deal_set: int | None = None
    request_id_base: int = 0
    """This game's first request id is request_id_base + 1 (ids run on through a match)."""
    isolation: dict[str, Any] | None = None
    """The sandbox the bots ran in (`{"sandbox": "none"}` without one); absent in older logs."""
    start: str | msgspec.UnsetType = msgspec.UNSET
    """The position the game began from, in the text form of docs/positions.md
    (`match --start`); absent for a game dealt from the start."""
    worker: dict[str, Any] | None = None
    """Where a tournament game was played (`name`, `cpus`, `load_1m`, `load_5m`): its clocks were judged there."""


class LogResult(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag="result"):
    winner: int | None
    scores: list[int]
    placements: list[int]
    reason: str
    failures: list[SeatFailure]
    forfeited: list[int]
    decisions: int
    referee_overhead_us: float = 0.0
    """Mean referee time per decision (engine, views, encoding): a timing field."""
    think_ms: list[float] = msgspec.field(default_factory=list)
    """Per seat: wall time of its decisions (timing; absent in older logs)."""
    cpu_ms: list[float | None] = msgspec.field(default_factory=list)
    """Per seat: CPU time of its decisions, null where not measured (timing; absent in older logs)."""


class GameLogWriter:
    """Appends records to one game's log file (or to nowhere)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fh: BinaryIO | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(path, "wb")  # noqa: SIM115 - closed in close()

    @property
    def enabled(self) -> bool:
        return self._fh is not None

    def write(self, record: dict[str, Any] | msgspec.Struct) -> None:
        if self._fh is not None:
            self._fh.write(_encoder.encode(record) + b"\n")

    def write_raw(self, prefix: bytes, payload: bytes, suffix: bytes = b"}") -> None:
        """A record embedding an already-encoded JSON payload (no re-encoding)."""
        if self._fh is not None:
            self._fh.write(prefix + payload + suffix + b"\n")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def cut(text: bytes | str, limit: int = MAX_LOGGED_LINE) -> str:
    s = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return s if len(s) <= limit else s[:limit] + f"...[{len(s) - limit} more chars]"


def evidence_text(evidence: str) -> str:
    """What a bot wrote, for a person, on one line: the start of the offending
    line and the end of its stderr (where a traceback says what went wrong).
    Evidence is the line, then `[stderr]` and the tail; a detail of several
    lines without the marker is a stderr tail (a crash)."""
    line, marker, stderr = evidence.partition("[stderr]")
    if not marker and "\n" in evidence.strip():
        line, stderr = "", evidence
    flat = " | ".join(x.strip() for x in stderr.splitlines() if x.strip())
    line = " ".join(line.split())
    parts = [line if len(line) <= 120 else line[:117] + "..."] if line else []
    if flat:
        parts.append("stderr: " + (flat if len(flat) <= 200 else "..." + flat[-197:]))
    return "; ".join(parts)


class _BadLine(Exception):
    """A log line that does not decode (the message says why)."""


def _decode_line(raw: bytes, type_: Any) -> Any:
    """One log line decoded; anything wrong with it (nesting, encoding, numbers,
    truncation) is a _BadLine, never another exception."""
    if nests_deeper_than(raw):
        raise _BadLine(f"the line nests deeper than {MAX_NESTING} levels")
    try:
        return msgspec.json.decode(raw, type=type_)
    except msgspec.ValidationError as exc:  # numbers out of range, wrong types, missing fields
        raise _BadLine(schema_error(exc, raw, "the record")) from None
    except msgspec.DecodeError as exc:
        raise _BadLine(json_error(exc, raw, "the line", from_a_bot=False)) from None
    except (RecursionError, MemoryError, ValueError, TypeError, OverflowError) as exc:
        raise _BadLine(f"the line cannot be decoded ({type(exc).__name__})") from None


def read_log(path: Path, *, cut_ok: bool = False) -> tuple[LogHeader, list[tuple[int, dict[str, Any]]]]:
    """Header and (line number, record) pairs; CorruptLog names file and line.

    With `cut_ok`, a log cut off mid-line (the referee was killed while
    writing it) loses its unfinished last line instead of being refused, so
    viewers can show what there is; such a log has no result record."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptLog(f"{path}: cannot read: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    if not lines or not lines[0].strip():
        raise CorruptLog(f"{path}:1: empty file, not a chicago-referee game log")
    try:
        header = _decode_line(lines[0], LogHeader)
    except _BadLine as exc:
        raise CorruptLog(f"{path}:1: not a chicago-referee game log header: {exc}") from None
    if header.format != LOG_FORMAT:
        raise CorruptLog(f"{path}:1: log format {header.format} is not supported (expected {LOG_FORMAT})")
    if not data.endswith(b"\n"):
        if not cut_ok:
            raise CorruptLog(f"{path}:{len(lines)}: truncated: the last line has no newline (was the game cut off?)")
        lines[-1] = b""
    records: list[tuple[int, dict[str, Any]]] = []
    for no, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        try:
            rec = _decode_line(raw, Any)
        except _BadLine as exc:
            raise CorruptLog(f"{path}:{no}: {exc}") from None
        if not isinstance(rec, dict) or "type" not in rec:
            raise CorruptLog(f"{path}:{no}: a log record must be an object with a 'type'")
        records.append((no, rec))
    return header, records
