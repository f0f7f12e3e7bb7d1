"""A watchdog that ends bots, and what their sandboxes leave, if the referee dies.

Bots live in their own process groups, which the referee kills when a match
ends. If the referee is killed with SIGKILL it cannot do that, so it spawns
this tiny guardian and tells it each group it opens (`+PGID START TAG`) and
closes (`-PGID`), and, for sandboxes, the folders it makes cgroups in
(`C PATH`) and its temporary folder (`D PATH`). When the channel hits
end-of-file (the referee is gone, however it died) the guardian kills every
group still registered, and every process carrying a registered bot's
environment tag (children that left their group; see `bot_process`). If
the referee is dead, not merely done (a referee that closes the channel
says `.` first), it also kills whatever is left in the referee's cgroups
(`chicago-referee-PID-*`, thawed first), removes them, and removes the
referee's temporary folder (its staging folder: the files and the bots'
folders its sandboxes showed). A parent-death signal cannot do this job:
trio spawns children from worker threads, and the signal fires when that
thread exits.

The guardian runs in a session of its own, so a kill of the referee's
process group (a pool or Dask worker killed with its whole group) does not
take it along. No bot it has not heard of yet can run: a plain bot starts as
a shell that waits for a line on its stdin, which the referee writes once it
has told the guardian (`bot_process`), and every sandbox waits behind its
gate (`sandbox.gate`); a referee that dies first leaves the shell end of
input, and bubblewrap a gate it refuses, so they exit and nothing runs.

Nobody else can steer it:

- The channel is a Unix socket pair, not a pipe. A pipe can be reopened by
  any process of the same user through `/proc/<pid>/fd/N`; a socket cannot
  (the kernel refuses to open it), so only the referee, which holds the
  other end, can write to the guardian.
- The guardian makes itself non-dumpable before it reads anything, so other
  processes of the user (unless privileged) cannot open its `/proc` files or
  take its descriptors with `pidfd_getfd`.
- It accepts `+PGID` only if process PGID is a child of the referee that
  started the guardian, or, for a line it reads after the referee died or
  while it dies (the guardian may lag behind; the process is an orphan by
  then), the process with the start time the referee sent. A child belongs
  to the thread that started it, and a thread that exits when every other
  thread is exiting too hands its children to init: so while a killed
  referee dies, a bot (started on a worker thread) may be an orphan already
  while the guardian (started on another) still has the referee as its
  parent. A referee whose threads are all exiting (PF_EXITING in its `/proc`
  flags) therefore counts as dead. The guardian remembers the start time,
  and at the end it kills the group only if that process is gone or is still
  the same one (a reused pid is left alone). It does not require PGID to
  lead its group still: a bot that joined another group at once would
  otherwise escape the sweep of its environment tag. It touches only
  cgroups and folders named after its own referee's pid.

If the guardian dies (a bot of the same user may kill it), the referee
starts a new one at its next registration and tells it every live group.
If both die, the next referee on the machine empties and removes the dead
one's cgroups and folders (`cgroups.remove_stale`, `remove_stale_stages`).

What the kernel cannot stop: a process that may ptrace the referee (a
privileged one, or any same-user process where the Yama ptrace scope is 0)
can act as the referee. A sandbox that hides the referee and
the guardian from bots closes that; docs/tournaments.md lists these limits.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterable

from referee.seats.cgroups import GROUP_PREFIX
from referee.seats.sandbox.files import STAGE_PREFIX

TAG_VARIABLE = "CHICAGO_REFEREE_BOT"  # names the tag in each bot's environment

_GUARD_SOURCE = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
except Exception:
    pass
referee = int(sys.argv[4])  # the process that started it (its parent, unless already gone)

def fields(pid):
    # The fields of /proc/PID/stat after the command's name (from the state on), or None when gone
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            text = fh.read()
    except OSError:
        return None
    return text[text.rindex(b")") + 2:].split()

def stat(pid):
    # (parent pid, start time) of a process (zombies too), or None
    f = fields(pid)
    return None if f is None else (int(f[1]), f[19])

def leaving(pid):
    # The referee is gone, a zombie, or exiting (PF_EXITING, 4, in its flags). Asked after a
    # child's stat: a child is handed to init only once every thread of the referee is exiting.
    f = fields(pid)
    return f is None or f[0] in (b"Z", b"X") or int(f[6]) & 4 != 0

def write(path, text):
    try:
        with open(path, "w") as fh:
            fh.write(text)
    except OSError:
        pass

def pids(group):
    try:
        with open(os.path.join(group, "cgroup.procs")) as fh:
            return [int(p) for p in fh.read().split() if p != "0"]  # 0: a process of another PID namespace
    except (OSError, ValueError):
        return []

def kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass

groups, cgroup_parents, folders, done = {}, [], [], False
for line in sys.stdin.buffer:
    op, _, rest = line.rstrip(b"\n").partition(b" ")
    if op == b".":
        done = True  # the referee is done, and alive: it cleans up after itself
        continue
    try:
        if op[:1] in (b"+", b"-"):
            pgid = int(op[1:])
        elif op in (b"C", b"D") and rest.startswith(b"/"):
            (cgroup_parents if op == b"C" else folders).append(os.fsdecode(rest))
            continue
        else:
            continue
    except ValueError:
        continue
    if op[:1] == b"+" and pgid > 1 and pgid != os.getpid():
        words = rest.split()
        st = stat(pgid)
        # Its child; or, read late, once the referee is gone, the very process it started (an orphan by now).
        late = st is not None and words[:1] == [st[1]] and (os.getppid() != referee or leaving(referee))
        if st is not None and (st[0] == referee or late):  # leader or not: a bot may leave its group
            tag = words[1].decode("ascii", "replace") if len(words) > 1 else ""
            groups[pgid] = (tag, st[1])
    elif op[:1] == b"-":
        groups.pop(pgid, None)
dead = not done  # gone, not merely done: then what it made goes too
for g, (tag, started) in groups.items():
    st = stat(g)
    if st is not None and st[1] != started:
        continue  # the leader's pid now names another process
    try:
        os.killpg(g, signal.SIGKILL)
    except OSError:
        pass
own = "%s-%d-" % (sys.argv[2], referee)  # its cgroups
cgroups = []
for parent in cgroup_parents if dead else []:
    try:
        names = os.listdir(parent)
    except OSError:
        continue
    for name in names:
        if name.startswith(own):
            group = os.path.join(parent, name)
            cgroups.append(group)
            write(os.path.join(group, "freezer.state"), "THAWED")  # a v1-frozen process dies once thawed
            write(os.path.join(group, "cgroup.freeze"), "0")
            write(os.path.join(group, "cgroup.kill"), "1")
            for pid in pids(group):
                kill(pid)
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
            kill(int(name))
    if not left:
        break
deadline = time.monotonic() + 10
while cgroups and time.monotonic() < deadline:  # dying processes leave their groups in a moment
    for group in list(cgroups):
        for pid in pids(group):
            kill(pid)
        try:
            os.rmdir(group)
            cgroups.remove(group)
        except FileNotFoundError:
            cgroups.remove(group)
        except OSError:
            pass
    if cgroups:
        time.sleep(0.02)
if dead:
    import shutil
    for folder in folders:
        if os.path.basename(folder).startswith("%s%d-" % (sys.argv[3], referee)) and not os.path.islink(folder):
            shutil.rmtree(folder, ignore_errors=True)
"""


class Guardian:
    """Registers bot process groups with the watchdog process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        # What the guardian should hold, told again to a new one: live groups, and places to clean.
        self._groups: dict[int, str] = {}
        self._places: dict[str, None] = {}

    def _start(self) -> socket.socket | None:
        """The channel to a running guardian, starting one if needed (lock held)."""
        if self._proc is not None and self._proc.poll() is None and self._channel is not None:
            return self._channel
        self._drop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    _GUARD_SOURCE,
                    TAG_VARIABLE,
                    GROUP_PREFIX,
                    STAGE_PREFIX,
                    str(os.getpid()),
                ],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a kill of the referee's process group must not take it along
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
        told = [*self._places, *self._groups.values()]
        if told:  # a guardian died (or was killed): the new one learns every live group
            try:
                ours.sendall("".join(f"{line}\n" for line in told).encode())
            except OSError:
                self._drop()
                return None
        return ours

    def _drop(self) -> None:
        if self._channel is not None:
            self._channel.close()
        self._channel = None

    def _send(self, line: str) -> None:
        """Tell the running guardian (lock held)."""
        channel = self._start()
        if channel is not None:
            try:
                channel.sendall(line.encode() + b"\n")
            except OSError:
                self._drop()

    @property
    def pid(self) -> int | None:
        """The running guardian's pid (None before the first bot)."""
        return None if self._proc is None else self._proc.pid

    def start(self) -> None:
        """Start the guardian now (before any bot exists), not at the first bot."""
        with self._lock:
            self._start()

    def watch(self, pgid: int, tag: str = "") -> None:
        """Process `pgid` (a child of this process, not yet waited for) leads a bot's group."""
        line = f"+{pgid} {_start_time(pgid)} {tag}".rstrip()
        with self._lock:
            self._send(line)
            self._groups[pgid] = line

    def release(self, pgid: int) -> None:
        with self._lock:
            self._send(f"-{pgid}")
            self._groups.pop(pgid, None)

    def clean_after(self, cgroup_parents: Iterable[str], folders: Iterable[str]) -> None:
        """If this process dies: empty and remove its cgroups (`GROUP_PREFIX-PID-*`)
        below these folders, and remove these temporary folders of its own."""
        lines = [*(f"C {p}" for p in cgroup_parents), *(f"D {f}" for f in folders)]
        with self._lock:
            for line in lines:
                if line not in self._places and "\n" not in line:
                    self._send(line)
                    self._places[line] = None

    def close(self) -> None:
        """Normal exit: nothing is registered any more; let the guardian go
        (and leave this process's cgroups and folders to it: it is alive)."""
        with self._lock:
            proc = self._proc
            self._groups.clear()
            if self._channel is not None:
                try:
                    self._channel.sendall(b".\n")
                except OSError:
                    pass
            self._drop()
            if proc is not None:
                try:
                    proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
            self._proc = None


def _start_time(pid: int) -> str:
    """A process's start time (clock ticks after boot) from /proc, '0' if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read()
        return text[text.rindex(b")") + 2 :].split()[19].decode()
    except (OSError, ValueError, IndexError):
        return "0"


GUARDIAN = Guardian()
atexit.register(GUARDIAN.close)
