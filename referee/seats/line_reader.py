"""A bot's stdout, read line by line: bounded lines, fair to other games.

Every byte a bot writes is untrusted: a line longer than `MAX_LINE` is a
protocol violation, not a buffer that grows; a closed stdout is a crash.
"""

from __future__ import annotations

import errno
import os
import select

import trio

from referee.errors import BotCrashed, ProtocolViolation

MAX_LINE = 256 * 1024
READ_SIZE = 65536
MAX_READS_WITHOUT_YIELD = 16
LINES_WITHOUT_YIELD = 4


def io_error(exc: OSError) -> trio.ClosedResourceError | trio.BrokenResourceError:
    """The error trio's own pipe stream would raise for a failed read or write."""
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("file was already closed")
    return trio.BrokenResourceError(str(exc))


class LineReader:
    """Splits a byte stream into lines, refusing lines over `max_len` bytes.

    On a pipe (a stream with `fileno`) it reads the fd directly and yields to
    trio only to wait for data: trio's `receive_some` adds a scheduler round
    trip to every read, and each one delays the referee's next request. Lines
    served from the buffer (a bot that writes many lines at once) yield every
    `LINES_WITHOUT_YIELD` lines, so a flooding bot cannot starve other games.
    """

    def __init__(self, stream: trio.abc.ReceiveStream, max_len: int = MAX_LINE) -> None:
        self._stream = stream
        self._fileno = getattr(stream, "fileno", None)
        self._buf = bytearray()
        self._max_len = max_len
        self._scan = 0
        self._unyielded = 0  # reads served without yielding to other tasks
        self._buffered_lines = 0  # lines served from the buffer without yielding
        self._poll: select.poll | None = None  # made on first use by `ready_lines`

    async def _receive_some(self) -> bytes | bytearray:
        if self._fileno is None:
            return await self._stream.receive_some(READ_SIZE)
        if self._unyielded >= MAX_READS_WITHOUT_YIELD:  # stay fair to other tasks
            self._unyielded = 0
            await trio.lowlevel.checkpoint()
        while True:
            fd = self._fileno()
            try:
                chunk = os.read(fd, READ_SIZE)
            except BlockingIOError:
                self._unyielded = 0
                await trio.lowlevel.wait_readable(fd)
                continue
            except OSError as exc:
                raise io_error(exc) from exc
            self._unyielded += 1
            return chunk

    def _take_line(self) -> bytes | None:
        """The next complete line in the buffer, if there is one within the limit."""
        i = self._buf.find(b"\n", self._scan)
        if 0 <= i <= self._max_len:  # a longer line, newline or not, is refused by `receive_line`
            line = bytes(self._buf[:i])
            del self._buf[: i + 1]
            self._scan = 0
            return line[:-1] if line.endswith(b"\r") else line
        self._scan = len(self._buf)
        return None

    def ready_lines(self, max_bytes: int, max_lines: int) -> list[bytes]:
        """The complete lines the bot has written so far, taken without waiting
        (at most about `max_bytes` read, at most `max_lines` taken; the rest
        stays buffered). Called before a request is sent: no line written
        before it can be the answer to it."""
        fd = self._fileno() if self._fileno is not None else -1
        if fd >= 0:  # a pipe still open (else only what is buffered)
            if self._poll is None:
                self._poll = select.poll()
                self._poll.register(fd, select.POLLIN)
            while len(self._buf) < max_bytes and self._poll.poll(0):  # poll: no exception when empty
                try:
                    chunk = os.read(fd, READ_SIZE)
                except OSError:  # nothing after all (or broken: `receive_line` will say so)
                    break
                if not chunk:
                    break
                self._buf += chunk
        if not self._buf:
            return []  # the usual case: nothing was written
        lines: list[bytes] = []
        while len(lines) < max_lines and (line := self._take_line()) is not None:
            lines.append(line)
        return lines

    async def receive_line(self) -> bytes:
        while True:
            if self._buf:
                if self._buffered_lines >= LINES_WITHOUT_YIELD:  # many lines at once: stay fair
                    self._buffered_lines = 0
                    await trio.lowlevel.checkpoint()
                line = self._take_line()
                if line is not None:
                    self._buffered_lines += 1
                    return line
            if len(self._buf) > self._max_len:
                head = bytes(self._buf[:200])
                raise ProtocolViolation(
                    f"line longer than {self._max_len} bytes without a newline",
                    detail=head.decode("utf-8", "replace"),
                    reason="line_too_long",
                )
            try:
                chunk = await self._receive_some()
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise BotCrashed("bot's stdout broke") from exc
            if not chunk:
                partial_line = bytes(self._buf[:200]).decode("utf-8", "replace")
                raise BotCrashed("bot closed stdout (exited?)", detail=partial_line)
            if not self._buf and chunk.find(b"\n") == len(chunk) - 1 and len(chunk) <= self._max_len + 1:
                # The usual case, one whole line: no copy through the buffer.
                self._buffered_lines = 0
                return bytes(chunk[:-2] if chunk.endswith(b"\r\n") else chunk[:-1])
            self._buf += chunk
