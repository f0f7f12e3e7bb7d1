"""CPU time of a bot that runs without a control group, read from /proc.

A sandboxed bot with a CPU-accounting cgroup is measured by its group, which
counts every process inside exactly (`cgroups.BotCgroup.cpu_seconds`). Any
other bot is measured here, as a process tree rooted at the process the
referee started:

- each process's own run time, all its threads (ended ones included) in
  nanoseconds, from the kernel's CPU-time clock of the process
  (`clock_gettime` on the clock `clock_getcpuclockid(3)` names: one system
  call, where reading `/proc/<pid>/task/<tid>/schedstat` took a read and a
  parse per thread and lost what an ended thread used after its last read;
  `/proc/<pid>/stat` counts in 10 ms ticks);
- the children it has already waited for, from `cutime` and `cstime` of
  `/proc/<pid>/stat` (ticks: the kernel keeps no finer sum of them);
- its live descendants, found from the `children` file of each thread of
  each process of the tree (`/proc/<pid>/task/<tid>/children`); a kernel
  without those files gets a scan of all of `/proc` for parent pids, at most
  once a second for every bot of the referee. A child started since the last
  look is counted from the next one on (its time is not lost, it lands in a
  later decision).

That look for descendants, and the read of each process's `/proc/<pid>/stat`
(waited-for children; and the check that the pid is still the process first
seen: the file stays bound to it), happen at most once a second; in between
a read is one `clock_gettime` per process of the tree. A pid is handed out
again only after the kernel has gone once round all of them, so a process
that ended is dropped at the next `/proc/<pid>/stat` read, long before then.
A process that left the tree (it changed its parent by dying, or a daemon
re-parented to init; a process traced by another is listed as the tracer's
child) is not followed; a sandbox's cgroup is the exact count.
See `tests/benchmarks/bench_fairness.py` and `bench_decision.py` for costs.
"""

from __future__ import annotations

import os
import time

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
RESCAN_S = 1.0
_CPUCLOCK_SCHED = 2  # the kernel's per-process clock of run time, in nanoseconds
_HAS_CHILDREN_FILES = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def _pread(fd: int) -> bytes:
    return os.pread(fd, 4096, 0)


def process_cpu_clock(pid: int) -> int:
    """The clock id of `pid`'s CPU time, as `clock_getcpuclockid(3)` makes it on Linux."""
    return (~pid << 3) | _CPUCLOCK_SCHED


class _ProcessCpu:
    """One process: its threads' run time and its waited-for children's."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.stat_fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        self.clock = process_cpu_clock(pid)
        self.own_ticks = 0.0  # from the last full read of /proc/<pid>/stat
        self.children = 0.0

    def close(self) -> None:
        if self.stat_fd >= 0:
            os.close(self.stat_fd)
            self.stat_fd = -1

    def seconds(self, full: bool) -> float:
        """Raises OSError once the process is gone. Only a `full` read looks at
        /proc/<pid>/stat (waited-for children, the ticks)."""
        if full:
            stat = _pread(self.stat_fd)
            fields = stat[stat.rindex(b")") + 2 :].split()
            self.own_ticks = (int(fields[11]) + int(fields[12])) * TICK_S  # utime, stime
            self.children = (int(fields[13]) + int(fields[14])) * TICK_S  # cutime, cstime
        # The clock in ns; the ticks may run a little ahead of it (to within a tick).
        return max(time.clock_gettime_ns(self.clock) / 1e9, self.own_ticks) + self.children


def _children(pid: int) -> list[int]:
    """The live children of every thread of `pid` ([] once it is gone)."""
    found: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                found.extend(int(child) for child in fh.read().split())
        except (OSError, ValueError):  # the thread ended meanwhile
            pass
    return found


_scan_cache: tuple[float, dict[int, int]] = (-RESCAN_S, {})


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process this referee may look at (a kernel
    without `children` files); one scan a second serves every bot of the referee."""
    global _scan_cache
    now = time.monotonic()
    if now - _scan_cache[0] < RESCAN_S:
        return _scan_cache[1]
    found: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    stat = fh.read()
                found[int(name)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
            except (OSError, ValueError):
                pass
    _scan_cache = (now, found)
    return found


def _descendants(root: int) -> set[int]:
    """`root` and every live process below it."""
    tree, frontier = {root}, [root]
    parents = None if _HAS_CHILDREN_FILES else _parents()
    while frontier:
        pid = frontier.pop()
        if parents is None:
            children = [p for p in _children(pid) if p not in tree]
        else:
            children = [p for p, pp in parents.items() if pp == pid and p not in tree]
        tree.update(children)
        frontier.extend(children)
    return tree


class ProcessTreeCpu:
    """CPU seconds used so far by a process and its descendants (see module doc).

    A process leaves /proc only when it is waited for, and then its time is in
    its parent's `cutime`: the sum never loses a child of the tree. It never
    goes back either (tick rounding of `cutime` could make it dip)."""

    def __init__(self, pid: int) -> None:
        self.root = pid
        self.procs: dict[int, _ProcessCpu] = {}
        self.best = 0.0
        self.scanned = -RESCAN_S

    def _scan(self) -> None:
        self.scanned = time.monotonic()
        for pid in _descendants(self.root):
            if pid not in self.procs:
                try:
                    self.procs[pid] = _ProcessCpu(pid)
                except OSError:
                    pass

    def seconds(self) -> float:
        full = time.monotonic() - self.scanned >= RESCAN_S
        if full:
            self._scan()
        total = 0.0
        gone = None
        for pid, proc in self.procs.items():
            try:
                total += proc.seconds(full)
            except (OSError, ValueError, IndexError):
                gone = [*(gone or []), pid]
        for pid in gone or ():
            self.procs.pop(pid).close()
        if self.root in self.procs:  # once the bot is gone, what it used stays as it was
            self.best = max(self.best, total)
        return self.best

    def close(self) -> None:
        for proc in self.procs.values():
            proc.close()
        self.procs = {}
