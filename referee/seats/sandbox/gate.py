"""The gate every sandbox starts behind: nothing of the bot runs until the
referee lets it, and nothing waits for a referee that is gone.

bubblewrap is started with `--seccomp FD`: after it has set up the
namespaces and mounts, and before it forks the sandbox's init and execs the
bot, its namespace child reads a seccomp program from that pipe, to its
end. The referee writes the program (one instruction: allow every call; the
sandbox filters nothing, the program is only the key) and closes the pipe
when the sandbox may go on, which is when

- the guardian knows the sandbox (`bot_process.start_bot`): a referee that
  dies after this point leaves nothing the guardian cannot find;
- its cgroup v2 groups hold its processes, where it has any.

A new process enters its cgroup v1 groups itself, before it execs
bubblewrap, by moving its only thread (`BotCgroup.join_self`), which the
kernel does at once. cgroup v2 offers no such move into a domain group: a
whole process is moved, and that waits, in the kernel, for an RCU grace
period (milliseconds, more on a busy machine; moves made back to back share
one). Made by the child before bubblewrap ran, that wait sat on the path of
every start. So where a bot has v2 groups, bubblewrap also gets `--info-fd`:
the outer bwrap writes the pid of the child it cloned into the new
namespaces (JSON, `child-pid`) as soon as it has cloned it, and meanwhile
the referee moves both processes into the v2 groups: the outer bwrap first
(the kernel's wait starts while bwrap still execs; a child it clones
afterwards is inside already) and then the namespace child. No other
process exists before the gate (a setuid bwrap's helper has exited by then),
and everything the bot starts descends from that child, so it starts inside
its groups.

Fail closed, and never forever: only the referee holds the pipe's write
end. If it closes it without writing (a failed move into a group), or dies,
however it dies, bubblewrap reads an empty program, which the kernel
refuses, and it exits before it ran anything of the bot's. A sandbox is
never left waiting for a referee that is gone, and never runs outside its
limits.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time

INFO_LIMIT = 64 * 1024  # bwrap's report is a few hundred bytes
# One classic BPF instruction (struct sock_filter: code, jt, jf, k): BPF_RET | BPF_K, SECCOMP_RET_ALLOW.
ALLOW_EVERYTHING = struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000)


class GateError(Exception):
    """bwrap's report could not be read (the caller says whose sandbox)."""


class SandboxGate:
    """The pipes between the referee and one bwrap, for one start: the gate's,
    and, with `reports`, the one bwrap names its namespace child on."""

    def __init__(self, reports: bool = False) -> None:
        self.info_read = self.info_write = -1
        self.gate_read, self.gate_write = os.pipe()
        if reports:
            try:
                self.info_read, self.info_write = os.pipe()
            except OSError:
                self.close()
                raise

    def bwrap_args(self) -> list[str]:
        reported = ["--info-fd", str(self.info_write)] if self.info_write >= 0 else []
        return [*reported, "--seccomp", str(self.gate_read)]

    def child_fds(self) -> tuple[int, ...]:
        """The descriptors bwrap inherits (Popen's `pass_fds`)."""
        return tuple(fd for fd in (self.info_write, self.gate_read) if fd >= 0)

    def spawned(self) -> None:
        """After the spawn: drop the parent's copies of bwrap's ends, so that the
        report ends in end-of-file once bwrap has written it (or died)."""
        for name in ("info_write", "gate_read"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def namespace_child(self, outer_pid: int, timeout_s: float) -> int | None:
        """The pid of bwrap's namespace child, or None if bwrap ended without
        reporting one (its own error is on its stderr)."""
        assert self.info_read >= 0, "a gate made without reports"
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
        """Let bwrap go on: fork the sandbox's init and exec the bot. (Closes
        the referee's ends; bwrap's, if not yet spawned, stay for the spawn.)"""
        if self.gate_write >= 0:
            try:
                os.write(self.gate_write, ALLOW_EVERYTHING)  # 8 bytes: one write to a pipe, never split
            except BrokenPipeError:
                pass  # bwrap is gone: there is nothing to let go
        for name in ("info_read", "gate_write"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def close(self) -> None:
        """Close every descriptor still open (idempotent). A gate closed without
        `open` makes bwrap exit before the bot runs."""
        for name in ("info_read", "info_write", "gate_read", "gate_write"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)


def _parent_of(pid: int) -> int:
    """The parent pid of a process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read()
        return int(text[text.rindex(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return 0
