"""The gate a sandbox starts behind: in its cgroup v2 groups before the bot runs.

A new process enters its cgroup v1 groups itself, before it execs bubblewrap,
by moving its only thread (`BotCgroup.join_self`), which the kernel does at
once. cgroup v2 offers no such move into a domain group: a whole process is
moved, and that waits, in the kernel, for an RCU grace period (milliseconds,
more on a busy machine; moves made back to back share one). Made by the
child before bubblewrap ran, that wait sat on the path of every start. So,
where a bot has v2 groups, bubblewrap is started with two descriptors:

- `--info-fd`: the outer bwrap writes the pid of the child it cloned into
  the new namespaces (JSON, `child-pid`) as soon as it has cloned it;
- `--block-fd`: that child sets up the namespaces and mounts, and then reads
  one byte before it forks the sandbox's init and execs the bot.

Meanwhile the referee moves both processes into the v2 groups: the outer
bwrap first (the kernel's wait starts while bwrap still execs; a child it
clones afterwards is inside already) and then the namespace child. No other
process exists before the block (a setuid bwrap's helper has exited by then),
and everything the bot starts descends from that child, so it starts inside
its groups. Only then does the referee write the byte.

Fail closed: the block descriptor is the pipe reopened read-write, so the
blocked bwrap holds a writer itself and never reads end-of-file. A referee
that dies before it opens the gate leaves the sandbox blocked (the guardian
kills it), never running outside its limits; a move that fails ends the
sandbox before it ran anything of the bot's.
"""

from __future__ import annotations

import json
import os
import select
import time

INFO_LIMIT = 64 * 1024  # bwrap's report is a few hundred bytes


class GateError(Exception):
    """bwrap's report could not be read (the caller says whose sandbox)."""


class SandboxGate:
    """The two pipes between the referee and one bwrap, for one start."""

    def __init__(self) -> None:
        self.info_read, self.info_write = os.pipe()
        block_read, self.block_write = os.pipe()
        try:  # the same pipe, read-write: bwrap's own writer keeps it from end-of-file
            self.block_read = os.open(f"/proc/self/fd/{block_read}", os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            for fd in (self.info_read, self.info_write, self.block_write):
                os.close(fd)
            raise
        finally:
            os.close(block_read)

    def bwrap_args(self) -> list[str]:
        return ["--info-fd", str(self.info_write), "--block-fd", str(self.block_read)]

    def child_fds(self) -> tuple[int, ...]:
        """The descriptors bwrap inherits (Popen's `pass_fds`)."""
        return self.info_write, self.block_read

    def spawned(self) -> None:
        """After the spawn: drop the parent's copies of bwrap's ends, so that the
        report ends in end-of-file once bwrap has written it (or died)."""
        for name in ("info_write", "block_read"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def namespace_child(self, outer_pid: int, timeout_s: float) -> int | None:
        """The pid of bwrap's namespace child, or None if bwrap ended without
        reporting one (its own error is on its stderr)."""
        data = bytearray()
        deadline = time.monotonic() + timeout_s
        poller = select.poll()
        poller.register(self.info_read, select.POLLIN)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GateError(f"bubblewrap did not report its sandbox within {timeout_s:.0f} s")
            if not poller.poll(left * 1000):
                continue
            chunk = os.read(self.info_read, 4096)
            if not chunk:
                break
            data += chunk
            if len(data) > INFO_LIMIT:
                raise GateError("bubblewrap's report is too long")
        if not data:
            return None
        try:
            pid = json.loads(data)["child-pid"]
        except (ValueError, KeyError, TypeError) as exc:
            raise GateError(f"bubblewrap's report is unreadable: {bytes(data[:200])!r}") from exc
        if not isinstance(pid, int) or pid <= 1:
            raise GateError(f"bubblewrap reported no usable child pid: {pid!r}")
        if _parent_of(pid) != outer_pid:
            return None  # already gone (and reaped): bwrap ended
        return pid

    def open(self) -> None:
        """Let bwrap go on: fork the sandbox's init and exec the bot."""
        try:
            os.write(self.block_write, b"1")
        except BrokenPipeError:
            pass  # bwrap is gone: there is nothing to let go
        self.close()

    def close(self) -> None:
        """Close every descriptor still open (idempotent). A gate closed without
        `open` stays shut: the blocked bwrap still holds a writer."""
        for name in ("info_read", "info_write", "block_read", "block_write"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)


def _parent_of(pid: int) -> int:
    """The parent pid of a process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read()
        return int(text[text.rindex(b")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return 0
