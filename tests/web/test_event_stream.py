"""The seat's event stream pushes every change at once, even one made while
the previous snapshot was still being sent.

The stream once waited on the `changed` event that a change had already
replaced, so a state published during a send sat in the server until the
next keep-alive (15 s): a whole served game took four minutes, and a real
browser saw each of its turns late. The app is driven here as plain ASGI on
a virtual clock: a keep-alive between the two snapshots is the bug."""

from __future__ import annotations

from typing import Any

import msgspec
import trio
import trio.lowlevel
from webclient import http_scope, signed_in

from referee.web.app import KEEPALIVE_S, SeatApp
from referee.web.session import WebPlayer


async def _stream(player: WebPlayer, during_send: Any, bodies_wanted: int) -> list[bytes]:
    """The body chunks of one `GET /T/events`, until `bodies_wanted` have come."""
    bodies: list[bytes] = []
    gone = trio.Event()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] != "http.response.body":
            return
        bodies.append(message["body"])
        await trio.lowlevel.checkpoint()  # sending yields to other tasks, as a real connection does
        during_send(len(bodies))
        if len(bodies) >= bodies_wanted:
            gone.set()

    app, headers = signed_in(SeatApp(player).routes)
    with trio.fail_after(10 * KEEPALIVE_S):  # virtual time: the autojump clock skips idle waits
        await app(http_scope("/events", headers), receive, send)
    return bodies


def _version(body: bytes) -> int | None:
    if not body.startswith(b"event: state\ndata: "):
        return None
    return msgspec.json.decode(body.split(b"data: ", 1)[1])["version"]


async def test_a_change_while_a_snapshot_is_sent_follows_at_once(autojump_clock: Any) -> None:
    player = WebPlayer("table")

    def change_during_first_send(n: int) -> None:
        if n == 1:
            player._publish()  # the runner moved on while the first snapshot was on its way

    bodies = await _stream(player, change_during_first_send, 2)
    assert [_version(b) for b in bodies] == [0, 1]  # the change came next, not a keep-alive


async def test_an_idle_stream_sends_keep_alives_then_the_next_change(autojump_clock: Any) -> None:
    player = WebPlayer("table")
    started = trio.current_time()
    times: list[float] = []

    def note(n: int) -> None:
        times.append(trio.current_time() - started)
        if n == 3:
            player._publish()

    bodies = await _stream(player, note, 4)
    assert [_version(b) for b in bodies] == [0, None, None, 1]
    assert bodies[1] == b": keep-alive\n\n"
    assert times[1] >= KEEPALIVE_S and times[2] >= 2 * KEEPALIVE_S  # idle: only keep-alives, one per period
