"""What of a finished game's files a viewer may read.

A game's log is public once its whole unit has finished (its siblings play
the same deal, so an earlier log would show the cards of games still being
played). One thing in a log belongs to a bot's owner alone: what the bot
wrote beside the protocol, which a `failure` record keeps as its `detail`
(the offending line, or the tail of the bot's stderr). The public copy of a
log leaves that field out for every seat the viewer does not own; every
other line is served byte for byte, so `verify` accepts either copy. The
bot's whole stderr of a game (`<log>.seatN.stderr`) is its owner's only.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from referee.play.session import stderr_path

_FAILURE_TAG = b'"failure"'
_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def shown_log(data: bytes, own_seats: set[int] | None) -> bytes:
    """The log `data` as a viewer owning `own_seats` (None: every seat, an
    admin) may read it: the `detail` of other seats' failures left out."""
    if own_seats is None or _FAILURE_TAG not in data:
        return data
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if _FAILURE_TAG not in line:
            continue
        try:
            record = _decoder.decode(line)
        except msgspec.DecodeError:
            continue  # not a record: the log's own checker will say so; nothing of a seat is in it
        private = isinstance(record, dict) and record.get("type") == "failure" and record.get("seat") not in own_seats
        if private and record.pop("detail", None) is not None:
            lines[i] = _encoder.encode(record)
    return b"\n".join(lines)


def read_stderr(logs: Path, log_name: str, seat: int) -> bytes:
    """A seat's stderr of a game (the tail the game kept); empty when the bot wrote none."""
    try:
        return stderr_path(logs / log_name, seat).read_bytes()
    except FileNotFoundError:
        return b""
