"""One sandboxed bot while it runs: how it is spawned, let through its gate
into its cgroups, told apart when it hit a limit, and swept up afterwards;
and the uids the seats run as (as root)."""

from __future__ import annotations

import os
import re
import resource
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

from referee.errors import SandboxUnavailable
from referee.seats.cgroups import BotCgroup
from referee.seats.sandbox.gate import GateError, SandboxGate
from referee.seats.sandbox.limits import SandboxLimits

SEAT_UID_BASE = 2_100_000_000  # far above any account; one uid per running seat
SEAT_UIDS_PER_REFEREE = 256
ADMIT_TIMEOUT_S = 30.0  # for bwrap to report its namespace child (milliseconds, even on a busy machine)


class SeatUids:
    """uids for running seats (and the arena's builds): distinct within this
    referee, and, by the referee's pid, most likely from other referees on
    the machine too. Thread-safe: builds take theirs from worker threads."""

    def __init__(self) -> None:
        self.in_use: set[int] = set()
        self._lock = threading.Lock()

    def acquire(self) -> int:
        block = SEAT_UID_BASE + SEAT_UIDS_PER_REFEREE * (os.getpid() % 4096)
        with self._lock:
            for uid in range(block, block + SEAT_UIDS_PER_REFEREE):
                if uid not in self.in_use:
                    self.in_use.add(uid)
                    return uid
        raise SandboxUnavailable(f"more than {SEAT_UIDS_PER_REFEREE} sandboxed bots at once")

    def release(self, uid: int) -> None:
        with self._lock:
            self.in_use.discard(uid)


SEAT_UIDS = SeatUids()


@dataclass
class SandboxedBot:
    """How to start one bot in its sandbox, and its resources while it runs."""

    argv: list[str]
    env: dict[str, str]
    limits: SandboxLimits
    uid: int | None
    cgroup: BotCgroup | None
    name: str = ""
    gate: SandboxGate | None = None  # bwrap waits behind it until the referee lets the bot run
    rlimits: list[tuple[int, int, int]] = field(default_factory=list)  # (resource, soft, hard), set before bwrap
    groups: list[int] = field(default_factory=list)  # supplementary groups of the seat's uid (as root)
    options_fd: int = -1  # bwrap's options, read through `--args` (none of them on its command line)

    def spawned(self) -> None:
        """After the spawn: bwrap has its own copy of the options descriptor."""
        if self.options_fd >= 0:
            os.close(self.options_fd)
            self.options_fd = -1

    def preexec(self) -> None:
        """In the new process, before it execs bwrap: into the v1 groups, the rlimits lowered."""
        if self.cgroup is not None:
            self.cgroup.join_self()
        for which, soft, hard in self.rlimits:
            resource.setrlimit(which, (soft, hard))

    def spawn_options(self) -> dict[str, Any]:
        """Popen options. The new process enters its cgroup v1 groups itself
        before it execs bwrap (a single-thread move, without the kernel's wait);
        v2 groups are entered behind the gate (`admit`)."""
        opts: dict[str, Any] = {"env": self.env, "cwd": "/", "start_new_session": True}
        if self.rlimits or (self.cgroup is not None and self.cgroup.joins_itself):
            opts["preexec_fn"] = self.preexec
        opts["pass_fds"] = (self.options_fd, *(self.gate.child_fds() if self.gate is not None else ()))
        if self.uid is not None:
            opts.update(user=self.uid, group=self.uid, extra_groups=list(self.groups))
        return opts

    def admit(self, outer_pid: int, timeout_s: float = ADMIT_TIMEOUT_S) -> bool:
        """Right after the spawn, in a worker thread (a v2 move waits for the
        kernel): bwrap's processes into the v2 groups, then the gate opened.
        False if bwrap ended first (it said why on its stderr; the gate stays
        shut). SandboxUnavailable if the groups cannot be entered."""
        gate, cgroup = self.gate, self.cgroup
        assert gate is not None and cgroup is not None
        try:
            cgroup.admit(outer_pid)  # first: the kernel's wait overlaps bwrap's start
            child = gate.namespace_child(outer_pid, timeout_s)
            if child is None:
                return False
            cgroup.admit(child)
        except ProcessLookupError:
            return False  # bwrap ended meanwhile
        except OSError as exc:
            raise SandboxUnavailable(
                f"cannot put bot {self.name!r} into its cgroups: {exc.strerror or exc}; it was stopped before it ran"
            ) from exc
        except GateError as exc:
            raise SandboxUnavailable(
                f"cannot start the sandbox of bot {self.name!r}: {exc}; it was stopped before it ran"
            ) from exc
        finally:
            cgroup.close_fds()
        gate.open()
        return True

    def limit_breach(self, returncode: int | None, stderr_tail: str) -> tuple[str, str] | None:
        """(reason code, plain message) if the bot ran into one of its limits."""
        lim = self.limits
        cg = self.cgroup
        if cg is not None and cg.oom_kills():
            return "memory_limit", f"went over its memory limit of {lim.memory_mb} MiB and was killed"
        if cg is not None and returncode is None and cg.memory_limit_hits():
            # Still running (a timeout): held at the limit, the kernel reclaiming before it kills.
            return "memory_limit", f"was held at its memory limit of {lim.memory_mb} MiB"
        if cg is not None and cg.forks_refused():
            return "process_limit", f"reached its limit of {lim.processes} processes and threads"
        if returncode in (128 + signal.SIGXCPU, -signal.SIGXCPU) or (cg is not None and cg.cpu_seconds() >= lim.cpu_s):
            return "cpu_limit", f"used up its {lim.cpu_s} s of CPU time"
        if returncode in (128 + signal.SIGXFSZ, -signal.SIGXFSZ) or "File too large" in stderr_tail:
            return "file_size_limit", f"wrote a file over its limit of {lim.file_size_mb} MiB"
        # Without cgroups, only the bot's own last words tell (a bot can fake them, but only about itself).
        if (cg is None or "memory" not in cg.dirs) and re.search(
            r"MemoryError|Cannot allocate memory|bad_alloc|out of memory|allocation failed", stderr_tail
        ):
            return "memory_limit", f"could not get more memory than its limit of {lim.memory_mb} MiB"
        if (cg is None or "pids" not in cg.dirs) and re.search(
            r"Resource temporarily unavailable|BlockingIOError|fork: retry|can't fork|Cannot fork", stderr_tail
        ):
            return "process_limit", f"could not start more than {lim.processes} processes and threads"
        if "Too many open files" in stderr_tail:
            return "open_files_limit", f"opened more than {lim.open_files} files"
        return None

    def sweep(self) -> int:
        """After the sandbox's PID 1 is dead: kill anything left in its cgroups
        (nothing should be), free them and the uid. Returns how many were left."""
        left = 0
        self.spawned()
        if self.gate is not None:
            self.gate.close()
        if self.cgroup is not None:
            left = self.cgroup.kill_all()
            self.cgroup.remove()
        if self.uid is not None:
            SEAT_UIDS.release(self.uid)
            self.uid = None
        return left
