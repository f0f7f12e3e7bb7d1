"""A watchdog that kills bot process groups if the referee itself dies.

Bots live in their own process groups, which the referee kills when a match
ends. If the referee is killed with SIGKILL it cannot do that, so it spawns
this tiny guardian and tells it each group it opens (`+PGID TAG`) and closes
(`-PGID`). When the channel hits end-of-file (the referee is gone, however it
died) the guardian kills every group still registered, and every process
carrying a registered bot's environment tag (children that left their group;
see `bot_process`). A parent-death signal cannot do this job: trio spawns
children from worker threads, and the signal fires when that thread exits.

Nobody else can steer it:

- The channel is a Unix socket pair, not a pipe. A pipe can be reopened by
  any process of the same user through `/proc/<pid>/fd/N`; a socket cannot
  (the kernel refuses to open it), so only the referee, which holds the
  other end, can write to the guardian.
- The guardian makes itself non-dumpable before it reads anything, so other
  processes of the user (unless privileged) cannot open its `/proc` files or
  take its descriptors with `pidfd_getfd`.
- It accepts `+PGID` only if process PGID is a child of the referee that
  started the guardian, and it remembers that process's start time; at the
  end it kills the group only if that process is gone or is still the same
  one (a reused pid is left alone). It does not require PGID to lead its
  group still: a bot that joined another group at once would otherwise
  escape the sweep of its environment tag.

If the guardian dies (a bot of the same user may kill it), the referee
starts a new one at its next registration and tells it every live group.

What the kernel cannot stop: a process that may ptrace the referee (a
privileged one, or any same-user process where the Yama ptrace scope is 0)
can act as the referee. A sandbox that hides the referee and
the guardian from bots closes that; docs/tournaments.md lists these limits.
"""

from __future__ import annotations

import atexit
import socket
import subprocess
import sys
import threading

TAG_VARIABLE = "CHICAGO_REFEREE_BOT"  # names the tag in each bot's environment

_GUARD_SOURCE = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
except Exception:
    pass
referee = os.getppid()

def stat(pid):
    # (parent pid, start time) of a process (zombies too), or None
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            text = fh.read()
    except OSError:
        return None
    f = text[text.rindex(b")") + 2:].split()
    return int(f[1]), f[19]

groups = {}
for line in sys.stdin.buffer:
    words = line.split()
    if not words or len(words) > 2:
        continue
    try:
        pgid = int(words[0][1:])
    except ValueError:
        continue
    if words[0][:1] == b"+" and pgid > 1 and pgid != os.getpid():
        st = stat(pgid)
        if st is not None and st[0] == referee:  # leader or not: a bot may leave its group
            tag = words[1].decode("ascii", "replace") if len(words) > 1 else ""
            groups[pgid] = (tag, st[1])
    elif words[0][:1] == b"-":
        groups.pop(pgid, None)
for g, (tag, started) in groups.items():
    st = stat(g)
    if st is not None and st[1] != started:
        continue  # the leader's pid now names another process
    try:
        os.killpg(g, signal.SIGKILL)
    except OSError:
        pass
needles = [("%s=%s\0" % (sys.argv[1], t)).encode() for t, _ in groups.values() if t.isalnum()]
for _ in range(5 if needles else 0):
    left = 0
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as fh:
                env = fh.read()
        except OSError:
            continue
        if any(n in env for n in needles):
            left += 1
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    if not left:
        break
"""


class Guardian:
    """Registers bot process groups with the watchdog process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._groups: dict[int, str] = {}  # what the guardian should hold: told again to a new one

    def _start(self) -> socket.socket | None:
        """The channel to a running guardian, starting one if needed (lock held)."""
        if self._proc is not None and self._proc.poll() is None and self._channel is not None:
            return self._channel
        self._drop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _GUARD_SOURCE, TAG_VARIABLE],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError:
            ours.close()
            self._proc = None
            return None
        finally:
            theirs.close()
        ours.shutdown(socket.SHUT_RD)  # the guardian never answers
        self._channel = ours
        if self._groups:  # a guardian died (or was killed): the new one learns every live group
            try:
                ours.sendall("".join(f"+{g} {t}\n" for g, t in self._groups.items()).encode())
            except OSError:
                self._drop()
                return None
        return ours

    def _drop(self) -> None:
        if self._channel is not None:
            self._channel.close()
        self._channel = None

    def _send(self, line: str, pgid: int, tag: str | None) -> None:
        with self._lock:
            channel = self._start()
            if channel is not None:
                try:
                    channel.sendall(line.encode() + b"\n")
                except OSError:
                    self._drop()
            if tag is None:
                self._groups.pop(pgid, None)
            else:
                self._groups[pgid] = tag

    @property
    def pid(self) -> int | None:
        """The running guardian's pid (None before the first bot)."""
        return None if self._proc is None else self._proc.pid

    def start(self) -> None:
        """Start the guardian now (before any bot exists), not at the first bot."""
        with self._lock:
            self._start()

    def watch(self, pgid: int, tag: str = "") -> None:
        self._send(f"+{pgid} {tag}", pgid, tag)

    def release(self, pgid: int) -> None:
        self._send(f"-{pgid}", pgid, None)

    def close(self) -> None:
        """Normal exit: nothing is registered any more; let the guardian go."""
        with self._lock:
            proc = self._proc
            self._groups.clear()
            self._drop()
            if proc is not None:
                try:
                    proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
            self._proc = None


GUARDIAN = Guardian()
atexit.register(GUARDIAN.close)
