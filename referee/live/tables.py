"""What a live table is sent: its game's rows, made once, shared by its viewers.

A live table does not fetch a whole replay page whenever its game moves. It
gets the replay page's frame once (`shell`: the page with a marker where its
data goes), then one server-sent `start` (the game's header), and then only
the new rows as `moves`; the browser puts the data into the frame. A row is
`[a, b, c, type, audience, fields]`: a record of the replay page (docs/replay.md)
with its place in the game, `(i, 1, 0)` for the public record `i` and `(at, 0, j)`
for a hidden one, so rows released late (the reveal delay) sort into place.

Each game's rows are encoded when the first of its viewers asks after they
arrived, and kept with the game: every other viewer sends the same bytes
from where it is, so a change costs one encoding however many watch. A
hidden record becomes a row only with a reveal delay, once it (and every
hidden record before it) is that old, or its game is over; without a delay
the board does not even keep them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from referee.live.board import Key, LiveBoard, LiveGame, live_header, private_keyed, public_keyed
from referee.replay.html import page_html, pack_cards, replay_data, replay_row

DATA_MARK = "@@LIVE-DATA@@"
"""Where the browser puts a live table's data in the shell (JSON made safe
inside <script> as the replay page's is: no `</`, no `<!--`)."""
RESULT_KEY: Key = (1 << 30, 2, 0)

_encoder = msgspec.json.Encoder()


def shell() -> str:
    """The replay page with `DATA_MARK` for its data (the same for every game)."""
    return page_html("live table", DATA_MARK)


def table_start(board: LiveBoard, g: LiveGame) -> bytes:
    """The header part of a live table's data, encoded once per game."""
    if not g.start_bytes:
        data = replay_data(live_header(g), [])
        for key in ("types", "items", "result", "cut_off"):
            data.pop(key, None)
        data["seed"] = "not shown during play"
        data["reveal_delay"] = board.reveal_delay
        g.start_bytes = _encoder.encode(data)
    return g.start_bytes


def _row(key: Key, record: dict[str, Any]) -> bytes | None:
    row = replay_row(record)
    if row is None:
        return None
    name, to, fields = row
    return _encoder.encode([*key, name, to, {k: pack_cards(v) for k, v in fields.items()}])


def table_rows(board: LiveBoard, g: LiveGame, now: float | None = None) -> list[bytes]:
    """Every row of `g` a spectator may see now, in the order they became
    visible; what arrived since the last call is encoded now, once."""
    if g.rows_over:
        return g.rows
    while g.rows_public < len(g.public):
        encoded = _row(*public_keyed(g.public[g.rows_public]))
        g.rows_public += 1
        if encoded is not None:
            g.rows.append(encoded)
    over = g.result is not None
    due = len(g.private) if over and board.reveal_delay is not None else board.due(g, g.rows_private, now)
    while g.rows_private < due:
        keyed = private_keyed(g.private[g.rows_private])
        g.rows_private += 1
        encoded = None if keyed is None else _row(*keyed)
        if encoded is not None:
            g.rows.append(encoded)
    if over:
        encoded = _row(RESULT_KEY, {"type": "result", **(g.result or {})})
        if encoded is not None:
            g.rows.append(encoded)
        g.rows_over = True
    return g.rows


def next_due_s(board: LiveBoard, g: LiveGame, now: float | None = None) -> float | None:
    """Seconds until `g`'s next hidden record may be shown; None if none waits."""
    if board.reveal_delay is None or g.result is not None or g.rows_private >= len(g.private):
        return None
    t = g.private[g.rows_private].get("t")
    if not isinstance(t, (int, float)):
        return None  # never due before the game is over
    return max(0.0, t + board.reveal_delay - (board.clock() if now is None else now))
