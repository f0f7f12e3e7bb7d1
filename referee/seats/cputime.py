"""CPU time of a bot that runs without a control group, read from /proc.

A sandboxed bot with a CPU-accounting cgroup is measured by its group, which
counts every process inside exactly (`cgroups.BotCgroup.cpu_seconds`). Any
other bot is measured here, as a process tree rooted at the process the
referee started:

- each process's threads, from `/proc/<pid>/task/<tid>/schedstat`
  (nanoseconds: a 1 ms decision reads as 1 ms, where `/proc/<pid>/stat`
  counts in 10 ms ticks); a thread that ended is counted as last read, and
  the ticks of `/proc/<pid>/stat` (which keep ended threads) make up the rest;
- the children it has already waited for, from `cutime` and `cstime` of
  `/proc/<pid>/stat` (ticks: the kernel keeps no finer sum of them);
- its live descendants, found by a scan of `/proc` for parent pids. The scan
  reads every process on the machine, so it runs at most once a second; a
  child started since the last scan is counted from the next one on (its
  time is not lost, it lands in a later decision). One scan serves every
  bot of the referee. That scan, and the read of each process's
  `/proc/<pid>/stat` (new threads, waited-for children), happen at most
  once a second; in between a read is one `pread` per known thread.

The readers keep each file open and `pread` it, so a read costs about one
system call per thread (see `tests/benchmarks/bench_fairness.py`).
A process that left the tree (it changed its parent by dying, or a daemon
re-parented to init) is not followed; a sandbox's cgroup is the exact count.
"""

from __future__ import annotations

import os
import time

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
RESCAN_S = 1.0


def _pread(fd: int) -> bytes:
    return os.pread(fd, 4096, 0)


class _ProcessCpu:
    """One process: its threads' run time and its waited-for children's."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.stat_fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        self.thread_fds: dict[str, int] = {}
        self.thread_ns: dict[str, int] = {}  # each live thread's run time when last read
        self.ended_ns = 0  # the run time of threads that have ended, as last read
        self.own_ticks = 0.0  # from the last full read of /proc/<pid>/stat
        self.children = 0.0

    def close(self) -> None:
        for fd in (self.stat_fd, *self.thread_fds.values()):
            os.close(fd)
        self.thread_fds = {}

    def seconds(self, full: bool) -> float:
        """Raises OSError once the process is gone. Only a `full` read looks at
        /proc/<pid>/stat (new threads, waited-for children, the ticks)."""
        if full:
            stat = _pread(self.stat_fd)
            fields = stat[stat.rindex(b")") + 2 :].split()
            self.own_ticks = (int(fields[11]) + int(fields[12])) * TICK_S  # utime, stime: ended threads too
            self.children = (int(fields[13]) + int(fields[14])) * TICK_S  # cutime, cstime
            if int(fields[17]) != len(self.thread_fds):  # num_threads: list them again only when it changed
                self._reopen(os.listdir(f"/proc/{self.pid}/task"))
        ns = self.ended_ns
        relist = False
        for tid, fd in self.thread_fds.items():
            try:
                used = int(_pread(fd).split(maxsplit=1)[0])
            except (OSError, ValueError, IndexError):  # a thread that ended (maybe replaced by another)
                ns += self.thread_ns.get(tid, 0)
                relist = True
                continue
            self.thread_ns[tid] = used
            ns += used
        if relist:  # for the next read; what the ended thread had used is kept
            self._reopen(os.listdir(f"/proc/{self.pid}/task"))
        # Threads in ns, with what ended threads had used when last seen; the
        # ticks count what they used after that (to within a tick).
        return max(ns / 1e9, self.own_ticks) + self.children

    def _reopen(self, tids: list[str]) -> None:
        for tid in [t for t in self.thread_fds if t not in tids]:
            os.close(self.thread_fds.pop(tid))
            self.ended_ns += self.thread_ns.pop(tid, 0)
        for tid in tids:
            if tid not in self.thread_fds:
                try:
                    self.thread_fds[tid] = os.open(f"/proc/{self.pid}/task/{tid}/schedstat", os.O_RDONLY)
                except OSError:
                    pass


_scan_cache: tuple[float, dict[int, int]] = (-RESCAN_S, {})


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process this referee may look at; one scan
    a second serves every bot of the referee."""
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
        parents = _parents()
        tree, frontier = {self.root}, [self.root]
        while frontier:
            pid = frontier.pop()
            children = [p for p, pp in parents.items() if pp == pid and p not in tree]
            tree.update(children)
            frontier.extend(children)
        for pid in tree:
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
        for pid, proc in list(self.procs.items()):
            try:
                used = proc.seconds(full)
            except (OSError, ValueError, IndexError):
                proc.close()
                del self.procs[pid]
                continue
            total += used
        if self.root in self.procs:  # once the bot is gone, what it used stays as it was
            self.best = max(self.best, total)
        return self.best

    def close(self) -> None:
        for proc in self.procs.values():
            proc.close()
        self.procs = {}
