"""The seat interface: what the runner needs from whoever sits at the table.

A bot process (`bot_process.BotProcess`) and a person (`human.HumanSeat`)
both speak the line protocol through these few methods, so every game goes
through the same runner, the same legality checks and the same log.
"""

from __future__ import annotations

from typing import Protocol


class Seat(Protocol):
    """Line-protocol endpoint of one seat. Lines in and out carry no newline
    on the way in (`receive_line`) and one newline on the way out (`send`)."""

    dead: bool  # set by the runner when the seat cannot play on
    late_id: int  # the last request that timed out unanswered
    measures_cpu: bool  # whether `cpu_seconds` tells anything (a bot process; not a person)

    @property
    def pid(self) -> int: ...

    def send_nowait(self, data: bytes | bytearray) -> bool:
        """Write at once if possible: True; else queue the rest for `flush`."""
        ...

    async def send(self, data: bytes | bytearray) -> None: ...

    async def flush(self) -> None: ...

    def ready_lines(self, max_bytes: int, max_lines: int) -> list[bytes]:
        """Lines written before now, taken without waiting."""
        ...

    async def receive_line(self) -> bytes:
        """The next line; raises a `BotError` when the seat cannot answer."""
        ...

    async def close(self, farewell: bytes | None = None) -> None: ...

    def stderr_text(self, limit: int = 2000) -> str: ...

    def exit_note(self) -> str: ...

    def cpu_seconds(self) -> float:
        """CPU time used so far (0.0 where it is not measured)."""
        ...

    def freeze(self) -> None:
        """Stop it while it is not its turn (`freeze_idle`); a no-op where it cannot be."""
        ...

    def thaw(self) -> None: ...

    def limit_breach(self) -> tuple[str, str] | None:
        """(reason code, message) if it ran into a limit of its sandbox."""
        ...


class Unmetered:
    """The part of `Seat` a seat without a process of its own offers (a
    person, a test's scripted bot): its time is not measured, it is never
    frozen, it has no sandbox limits to run into, no stderr and no exit code."""

    measures_cpu = False

    def cpu_seconds(self) -> float:
        return 0.0

    def freeze(self) -> None:
        pass

    def thaw(self) -> None:
        pass

    def limit_breach(self) -> tuple[str, str] | None:
        return None

    def stderr_text(self, limit: int = 2000) -> str:
        return ""

    def exit_note(self) -> str:
        return ""
