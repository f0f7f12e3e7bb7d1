"""What a live table is sent: its game's page data, or its rows, made once
and shared by its viewers.

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

from referee import __version__
from referee.games.base import PUBLIC
from referee.live.board import LiveBoard, LiveGame
from referee.logs.records import ActionRecord, EventRecord, FailureRecord, LogHeader, LogResult, PlayerInfo, Record
from referee.replay.html import pack_cards, page_html, replay_data, replay_row

DATA_MARK = "@@LIVE-DATA@@"
"""Where the browser puts a live table's data in the shell (JSON made safe
inside <script> as the replay page's is: no `</`, no `<!--`)."""
ASSETS_MARK = "@@ASSETS@@"
"""Where the browser puts the URL of the server's assets folder in the shell:
the frame is a `blob:` document, in which a relative URL means nothing."""
PAGE_ASSETS = "../../assets"
"""The assets folder as seen from a page at `game/ID/page`."""
Key = tuple[int, int, int]
RESULT_KEY: Key = (1 << 30, 2, 0)

_encoder = msgspec.json.Encoder()


def public_keyed(rec: dict[str, Any]) -> tuple[Key, Record]:
    """A public record of a game as a log record, with its place in the game:
    public records sort by `(i, 1, 0)`, private ones by `(at, 0, j)`."""
    key = (rec["i"] if isinstance(rec.get("i"), int) else 0, 1, 0)
    if rec["type"] == "event":
        return key, EventRecord(to=PUBLIC, event=rec["event"])
    seat = rec["seat"] if isinstance(rec.get("seat"), int) else -1
    reason = str(rec.get("reason"))
    return key, FailureRecord(seat=seat, reason=reason, message=reason)  # its reason code only


def private_keyed(rec: dict[str, Any]) -> tuple[Key, Record] | None:
    """A released private record as a log record with its place, or None if it is not one."""
    key = (int(rec["at"]), 0, int(rec.get("j", 0)) if isinstance(rec.get("j"), int) else 0)
    if rec["type"] == "event" and isinstance(rec.get("event"), dict) and isinstance(rec.get("to"), int):
        return key, EventRecord(to=rec["to"], event=rec["event"])
    if rec["type"] == "action" and isinstance(rec.get("action"), dict) and isinstance(rec.get("seat"), int):
        return key, ActionRecord(seat=rec["seat"], id=None, source=str(rec.get("source", "bot")), action=rec["action"])
    return None


def live_result(result: dict[str, Any]) -> LogResult:
    """A finished game's result from the live stream, as a log's result record."""
    return LogResult(
        winner=result.get("winner"),
        scores=result.get("scores") or [],
        placements=result.get("placements") or [],
        reason=str(result.get("reason")),
        failures=[],
        forfeited=result.get("forfeited") or [],
        decisions=0,
    )


def live_header(g: LiveGame) -> LogHeader:
    """A log header for a game being played: no seed, no deals, no commands."""
    return LogHeader(
        referee=__version__,
        game=g.game,
        game_id=g.game_id,
        rules=g.rules,
        n_players=g.n_players,
        seed=0,
        deals=[],
        players=[PlayerInfo(seat=i, name=n, argv=[]) for i, n in enumerate(g.seats)],
        time_control=None,
        failure_policy=None,
        deal_set=g.deal_set,
    )


def table_data(board: LiveBoard, game_id: int, now: float | None = None) -> dict[str, Any] | None:
    """The replay viewer's data for one game as far as a spectator may see it."""
    g = board.game(game_id)
    return None if g is None else game_data(g, board.released(g, now), board.reveal_delay)


def game_data(g: LiveGame, released: list[dict[str, Any]], reveal_delay: float | None) -> dict[str, Any]:
    """`table_data` of a game and its private records a spectator may see: it
    reads them only, so a worker thread may make it from copies."""
    keyed = [public_keyed(rec) for rec in g.public]
    keyed += [k for k in map(private_keyed, released) if k is not None]
    keyed.sort(key=lambda kv: kv[0])
    records = [(0, r) for _, r in keyed]
    if g.result is not None:
        records.append((0, live_result(g.result)))
    data = replay_data(live_header(g), records)
    data["seed"] = "not shown during play"
    data["cut_off"] = False
    data["live"] = {
        "over": g.result is not None,
        "hidden_shown": len(released),
        "hidden_held": len(g.private) - len(released),
        "reveal_delay": reveal_delay,
        "version": g.version,
    }
    return data


def shell() -> str:
    """The replay page with `DATA_MARK` for its data and `ASSETS_MARK` for
    where its style and script are (the same for every game)."""
    return page_html("live table", DATA_MARK, ASSETS_MARK)


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


def _row(key: Key, record: Record) -> bytes | None:
    row = replay_row(record)
    if row is None:
        return None
    name, to, fields = row
    return _encoder.encode([*key, name, to, {k: pack_cards(v) for k, v in fields.items()}])


def table_rows(board: LiveBoard, g: LiveGame, now: float | None = None) -> list[bytes]:
    """Every row of `g` a spectator may see now, in the order they became
    visible; what arrived since the last call is encoded now, once. A game
    over has all its rows but the hidden ones its deal set's end releases."""
    if g.rows_over and (g.rows_private >= len(g.private) or not board.settled(g)):
        return g.rows
    while g.rows_public < len(g.public):
        encoded = _row(*public_keyed(g.public[g.rows_public]))
        g.rows_public += 1
        if encoded is not None:
            g.rows.append(encoded)
    over = g.result is not None
    due = board.shown_private(g, now, g.rows_private)
    while g.rows_private < due:
        keyed = private_keyed(g.private[g.rows_private])
        g.rows_private += 1
        encoded = None if keyed is None else _row(*keyed)
        if encoded is not None:
            g.rows.append(encoded)
    if over and not g.rows_over:
        encoded = _row(RESULT_KEY, live_result(g.result or {}))
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
