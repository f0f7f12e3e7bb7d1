"""The log writer: each record encoded as logs have always been (sorted keys,
UNSET fields left out), and lines written in whole lines once a buffer's
worth waits, so a log read while its game runs (or after a crash) ends at a
whole line and lacks at most that much."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from protocol.messages import Clock
from referee.logs.gamelog import WRITE_AT, GameLogWriter, encode_record, line_type, read_log
from referee.logs.records import (
    ActionRecord,
    DealRecord,
    EventRecord,
    FailureRecord,
    LogHeader,
    LogRecord,
    RecvRecord,
    SendRecord,
    UnloggedRecord,
)

_sorted = msgspec.json.Encoder(order="deterministic")

RECORDS: list[LogRecord] = [
    ActionRecord(seat=1, id=12, source="bot", action={"type": "play", "card": "As"}, ms=0.123, cpu_ms=None),
    ActionRecord(seat=0, id=None, source="default", action={"type": "pass"}),
    DealRecord(deal=2, dealer=1, deck=["As", "Kd"]),
    EventRecord(to=-1, event={"type": "trick", "z": 1, "a": [1, 2]}),
    SendRecord(seat=1, t=2.5, elided=["view"], msg={"type": "request", "id": 5, "clock": Clock(decision_ms=9)}),
    RecvRecord(seat=0, t=1e-05, line='{"type":"action"}', unsolicited=True),
    RecvRecord(seat=0, line="x", reencoded_from=2000),
    FailureRecord(seat=0, reason="timeout", message="no reply"),
    UnloggedRecord(seat=1, lines=3, bytes=99),
]


def _as_always(record: LogRecord) -> bytes:
    """The encoding logs were first written with: a dict of the set fields and the tag, keys sorted."""
    fields: dict[str, Any] = {"type": record.__struct_config__.tag}
    fields.update({n: getattr(record, n) for n in record.__struct_fields__ if getattr(record, n) is not UNSET})
    return _sorted.encode(fields)


def test_records_encode_as_they_always_have() -> None:
    for record in RECORDS:
        assert encode_record(record) == _as_always(record), record
        fields = {n: getattr(record, n) for n in record.__struct_fields__}
        assert _sorted.encode(line_type(type(record))(**fields)) == _as_always(record)


def _header() -> LogHeader:
    return LogHeader(
        referee="x",
        game="chicago",
        game_id=1,
        rules={},
        n_players=2,
        seed=1,
        deals=[],
        players=[],
        time_control={},
        failure_policy={},
    )


def test_lines_are_written_whole_once_a_buffer_waits(tmp_path: Path) -> None:
    path = tmp_path / "game-00001.jsonl"
    writer = GameLogWriter(path)
    writer.write(_header())
    record = UnloggedRecord(seat=1, lines=3, bytes=99)
    line = encode_record(record) + b"\n"
    written = 0
    while path.stat().st_size == 0:
        writer.write(record)
        written += 1
    on_disk = path.read_bytes()
    assert on_disk.endswith(b"\n") and len(on_disk) >= WRITE_AT  # whole lines, a buffer's worth
    header, records = read_log(path)  # a log read mid-game: every line whole
    assert header.game == "chicago" and len(records) == written
    writer.write(record)
    assert path.read_bytes() == on_disk  # the next line waits
    writer.close()
    assert path.read_bytes() == on_disk + line  # and is there once the game is over
