"""Writing and reading game logs: one JSONL file per game, byte-stable
apart from timings. What each line holds is `referee.logs.records`; this
module puts records into a file and reads them back, typed, with one-line
errors that name the file and line."""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from protocol.common import MAX_NESTING, nests_deeper_than
from protocol.explain import json_error, schema_error
from referee.errors import CorruptLog
from referee.logs.records import LOG_FORMAT, LogHeader, LogRecord, LogResult, Record

MAX_LOGGED_LINE = 4096
WRITE_AT = io.DEFAULT_BUFFER_SIZE
"""Lines are gathered and written once this many bytes wait: what a crash can
lose, as with the buffered file the logs were written through before (which
may now end only at a whole line)."""

_encoder = msgspec.json.Encoder(order="deterministic")


class GameLogWriter:
    """Appends records to one game's log file (or to nowhere)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fh: io.FileIO | None = None
        self._pending = bytearray()  # whole lines not yet written
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = io.FileIO(path, "wb")  # closed in close()

    @property
    def enabled(self) -> bool:
        return self._fh is not None

    def write(self, record: LogHeader | LogRecord | LogResult) -> None:
        if self._fh is not None:
            self._add(encode_record(record))

    def write_line(self, line: msgspec.Struct) -> None:
        """A record built directly as its `line_type`: one encoding, no copy of the record."""
        if self._fh is not None:
            self._add(_encoder.encode(line))

    def write_raw(self, prefix: bytes, payload: bytes, suffix: bytes = b"}") -> None:
        """A record embedding an already-encoded JSON payload (no re-encoding)."""
        if self._fh is not None:
            self._add(prefix + payload + suffix)

    def _add(self, line: bytes) -> None:
        pending = self._pending
        pending += line
        pending += b"\n"
        if len(pending) >= WRITE_AT:
            self._write_pending()

    def _write_pending(self) -> None:
        assert self._fh is not None
        view = memoryview(self._pending)
        while view:
            written = self._fh.write(view)
            view = view[written or 0 :]
        view.release()
        self._pending.clear()

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._write_pending()
            finally:
                self._fh.close()
                self._fh = None


@functools.cache
def line_type(record_type: type[LogRecord]) -> type[msgspec.Struct]:
    """A Struct that encodes as `encode_record` writes a record of `record_type`:
    its fields (the tag among them, as `type`) in sorted order, each left out
    while UNSET. Built once per record type, it makes a line one encoding."""
    tag = record_type.__struct_config__.tag
    names = sorted([*record_type.__struct_fields__, "type"])
    fields = [(name, Any, tag if name == "type" else UNSET) for name in names]
    return msgspec.defstruct(f"{record_type.__name__}Line", fields, kw_only=True)


def encode_record(record: LogHeader | LogRecord | LogResult) -> bytes:
    """A record's line as logs have always been written: the header and the
    result in their field order; every other record with its keys sorted
    (the tag among them) and the payloads inside (events, actions, messages)
    in their own field order."""
    if isinstance(record, LogHeader | LogResult):
        return _encoder.encode(record)
    fields = {name: getattr(record, name) for name in record.__struct_fields__}
    return _encoder.encode(line_type(type(record))(**fields))


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


def read_log(
    path: Path, *, cut_ok: bool = False, data: bytes | None = None
) -> tuple[LogHeader, list[tuple[int, Record]]]:
    """Header and (line number, record) pairs; CorruptLog names file and line.

    `data`: the log's bytes, when they are at hand (`path` then only names it).
    With `cut_ok`, a log cut off mid-line (the referee was killed while
    writing it) loses its unfinished last line instead of being refused, so
    viewers can show what there is; such a log has no result record."""
    if data is None:
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
    records: list[tuple[int, Record]] = []
    for no, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        try:
            records.append((no, _decode_line(raw, Record)))
        except _BadLine as exc:
            raise CorruptLog(f"{path}:{no}: {exc}") from None
    return header, records
