"""One bot of a match or a game: its process started on demand, handshaken,
restarted after a crash, and closed with a goodbye.

A match keeps a handle's process for all its games (fast, and right for a
bot writer's own bots); a tournament job makes fresh handles for each game.
Either way a bot that cannot start or does not answer `hello` as it must is
a `StartFailure`, a value: its seat forfeits that game, and the next game
tries a fresh start.
"""

from __future__ import annotations

import msgspec
import trio

from protocol.messages import PROTOCOL_VERSION, BotHello, Bye, Hello, TimeControl
from referee import __version__
from referee.errors import BotError, ProtocolViolation
from referee.play.game_spec import StartFailure
from referee.play.replies import decode_hello
from referee.seats.bot_command import BotSpec
from referee.seats.bot_process import BotProcess, start_bot

BYE = msgspec.json.encode(Bye()) + b"\n"


class BotHandle:
    """One bot of a match: started on demand, handshaken, restarted after a crash."""

    def __init__(self, spec: BotSpec, nursery: trio.Nursery) -> None:
        self.spec = spec
        self.nursery = nursery
        self.proc: BotProcess | None = None
        self.hello: BotHello | None = None
        self.starts = 0
        self.last_id = 0  # the last request id its process was sent

    async def fresh_for(self, base: int) -> None:
        """A game whose ids start after `base` needs a process that never saw a
        larger id (after an over-long game): else the new ids would look stale."""
        if self.last_id > base:
            await self.close()

    async def ensure(self, tc: TimeControl, games: list[str]) -> StartFailure | None:
        """Running and handshaken, or why not."""
        if self.proc is not None and not self.proc.dead and self.proc.proc.poll() is None:
            return None
        await self.close()
        self.starts += 1
        try:
            self.proc = await start_bot(self.nursery, self.spec)
        except BotError as exc:
            await self.close()
            return StartFailure(str(exc))
        proc = self.proc
        hello = Hello(referee=f"chicago-referee {__version__}", games=games)
        spawned = trio.current_time()  # the startup clock runs from the process, not from a queue

        def took() -> str:
            return f"{trio.current_time() - spawned:.2f} s after the process started"

        try:
            with trio.fail_after(tc.startup_ms / 1000):
                await proc.send(msgspec.json.encode(hello) + b"\n")
                line = await proc.receive_line()
            reply = decode_hello(line)
        except trio.TooSlowError:
            detail = proc.stderr_text()
            await self.close()
            return StartFailure(f"no hello reply within the {tc.startup_ms} ms startup limit ({took()})", detail)
        except ProtocolViolation as exc:  # an over-long line, or a line that is no hello
            detail = exc.detail
            note = proc.exit_note()
            await self.close()
            if exc.reason == "line_too_long":
                return StartFailure(f"{exc}{note} during the handshake ({took()})", detail or proc.stderr_text())
            return StartFailure(f"{exc} ({exc.reason}, {took()})", detail)
        except BotError as exc:
            detail = exc.detail or proc.stderr_text()
            note = proc.exit_note()
            await self.close()
            return StartFailure(f"{exc}{note} during the handshake ({took()})", detail)
        if reply.protocol != PROTOCOL_VERSION:
            await self.close()
            return StartFailure(f"bot speaks protocol {reply.protocol}, referee speaks {PROTOCOL_VERSION}")
        self.hello = reply
        return None

    async def close(self) -> None:
        self.last_id = 0
        if self.proc is not None:
            proc, self.proc = self.proc, None
            await proc.close(BYE)
