"""What many or stalled viewers can do to a dashboard, on the real server in
this process: at most 64 event streams are open at once (the 65th gets a 503
with one line, and a stream closed makes room again), and a client that
stops reading does not hold up the shutdown (a match ends, and its
dashboard with it, although a laptop with the page open went to sleep).
The control case shows the stall is real: without the kernel's timeout on
the listening socket, shutdown waits until the client goes away. And the
process that renders replay pages ends with the dashboard, even one killed
with SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path

import pytest
import trio
from livehelpers import cli, play_streamed_match, sample_bot, wait_for_url
from needs import needs_proc
from timing import scaled, wait_until
from webclient import enter, fetch, get

import referee.web.server as web_server
from referee.live.serve import open_dashboard, stream_source
from referee.seats.bot_command import resolve_command
from referee.web.server import MAX_STREAMS, STALLED_CLIENT_S


async def _session(url: str) -> str:
    _, headers, _ = await trio.to_thread.run_sync(fetch, url)
    return str(headers["set-cookie"].split(";")[0])


async def _open_stream(port: int, path: str, cookie: str, rcvbuf: int = 0) -> tuple[int, trio.socket.SocketType, bytes]:
    """A raw HTTP request for `path`; its status, the socket, and what came after the headers so far."""
    sock = trio.socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    await sock.connect(("127.0.0.1", port))
    await sock.send(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = await sock.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), sock, rest


async def test_at_most_64_event_streams_at_once(tmp_path: Path) -> None:
    source, public, private = stream_source(tmp_path / "match.live.ndjson", None)
    async with open_dashboard(source, public, private, open_browser=False) as served:
        port = int(served.url.split(":")[2].split("/")[0])
        cookie = await _session(served.url)
        opened = []
        try:
            for k in range(MAX_STREAMS):
                path = ("/summary/events", "/events", "/game/follow/moves")[k % 3]
                status, sock, _ = await _open_stream(port, path, cookie)
                assert status == 200, k
                opened.append(sock)
            status, sock, rest = await _open_stream(port, "/summary/events", cookie)
            with trio.fail_after(scaled(10)):
                while rest.count(b"\n") < 1:
                    rest += await sock.recv(4096)
            sock.close()
            assert status == 503 and rest.count(b"\n") == 1 and f"{MAX_STREAMS} event streams".encode() in rest
            assert (
                await trio.to_thread.run_sync(
                    fetch, served.url.rsplit("/", 2)[0] + "/summary", "GET", {"cookie": cookie}
                )
            )[0] == 200
            opened.pop().close()  # one viewer leaves: room for another
            with trio.fail_after(scaled(10)):
                while True:
                    status, sock, _ = await _open_stream(port, "/summary/events", cookie)
                    opened.append(sock)
                    if status == 200:
                        break
                    await trio.sleep(0.05)  # the server has not seen the close yet
        finally:
            for sock in opened:
                sock.close()


def _server_queue(server_port: int, client_port: int) -> int:
    """Bytes the server's socket to this client holds unsent (/proc/net/tcp's tx_queue)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == client_port:
            return int(fields[4].split(":")[0], 16)
    return 0


@pytest.mark.slow
@pytest.mark.parametrize("dropped", [True, False], ids=["dropped", "control"])
async def test_shutdown_does_not_wait_for_a_client_that_stopped_reading(
    dropped: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not dropped:
        monkeypatch.setattr(web_server, "STALLED_CLIENT_S", 0)  # the kernel's default: no user timeout
    hold_s = 3 * STALLED_CLIENT_S  # the client goes away only after this (control case)
    stream = tmp_path / "match.live.ndjson"
    pad = "x" * 16_000  # 2048 lines of 16 kB: `events` starts with them, more than any socket buffer
    stream.write_text("".join(json.dumps({"type": "note", "t": 0, "pad": pad}) + "\n" for _ in range(2048)))
    source, public, private = stream_source(stream, None)
    async with trio.open_nursery() as nursery:
        async with open_dashboard(source, public, private, open_browser=False) as served:
            port = int(served.url.split(":")[2].split("/")[0])
            cookie = await _session(served.url)
            with trio.fail_after(scaled(30)):
                while source.board.seq < 2048:
                    await trio.sleep(0.05)
            status, sock, _ = await _open_stream(port, "/events", cookie, rcvbuf=4096)  # and never reads again
            assert status == 200
            client_port = sock.getsockname()[1]
            with trio.fail_after(scaled(30)):
                while _server_queue(port, client_port) < 8 * 1024:  # its buffers are full: a write waits
                    await trio.sleep(0.05)

            async def leave_later() -> None:
                await trio.sleep(hold_s)
                sock.close()

            nursery.start_soon(leave_later)
            stopping = trio.current_time()
        took = trio.current_time() - stopping
        nursery.cancel_scope.cancel()
    sock.close()
    if dropped:
        assert took < STALLED_CLIENT_S + scaled(5), took
    else:
        assert took >= hold_s - 0.5, took  # it waited for the client: the stall was real


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@needs_proc
def test_the_page_renderer_dies_with_a_killed_dashboard(tmp_path: Path) -> None:
    play_streamed_match(tmp_path, [resolve_command("greedy"), sample_bot("random_bot")], games=2, seed=4)
    served = cli("serve", str(tmp_path / "match.live.ndjson"), "--no-open")
    try:
        root = enter(wait_for_url(served))
        status, page = get(root + "game/1/page")
        assert status == 200 and b"replay-data" in page  # rendered by the renderer's process
        renderers = [p for p in _children(served.pid) if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert len(renderers) == 1 and os.getpriority(os.PRIO_PROCESS, renderers[0]) == 19  # the lowest priority
        assert os.sched_getscheduler(renderers[0]) == os.SCHED_IDLE  # and a core only when nothing else wants it
        served.send_signal(signal.SIGKILL)  # no cleanup runs
        served.wait(scaled(10))
        assert wait_until(lambda: not Path(f"/proc/{renderers[0]}").exists(), 10), "the renderer outlived it"
    finally:
        if served.poll() is None:
            served.kill()
            served.wait(scaled(10))
