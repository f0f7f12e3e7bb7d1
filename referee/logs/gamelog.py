"""Writing and reading game logs: one JSONL file per game, byte-stable
apart from timings. What each line holds is `referee.logs.records`; this
module puts records into a file and reads them back, typed, with one-line
errors that name the file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

import msgspec
from msgspec import UNSET

from protocol.common import MAX_NESTING, nests_deeper_than
from protocol.explain import json_error, schema_error
from referee.errors import CorruptLog
from referee.logs.records import LOG_FORMAT, LogHeader, LogRecord, LogResult, Record

MAX_LOGGED_LINE = 4096

_encoder = msgspec.json.Encoder(order="deterministic")


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

    def write(self, record: LogHeader | LogRecord | LogResult) -> None:
        if self._fh is not None:
            self._fh.write(encode_record(record) + b"\n")

    def write_raw(self, prefix: bytes, payload: bytes, suffix: bytes = b"}") -> None:
        """A record embedding an already-encoded JSON payload (no re-encoding)."""
        if self._fh is not None:
            self._fh.write(prefix + payload + suffix + b"\n")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def encode_record(record: LogHeader | LogRecord | LogResult) -> bytes:
    """A record's line as logs have always been written: the header and the
    result in their field order; every other record with its keys sorted
    (the tag among them) and the payloads inside (events, actions, messages)
    in their own field order."""
    if isinstance(record, LogHeader | LogResult):
        return _encoder.encode(record)
    fields: dict[str, Any] = {"type": record.__struct_config__.tag}
    for name in record.__struct_fields__:
        value = getattr(record, name)
        if value is not UNSET:
            fields[name] = value
    return _encoder.encode(fields)


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
