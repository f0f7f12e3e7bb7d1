"""Per-bot control groups: memory, process and CPU accounting for a sandbox.

rlimits count per process; a cgroup counts the whole sandbox, every process
the bot starts included, and says afterwards what happened (an OOM kill, a
refused fork, CPU used). Both layouts are handled: cgroup v1 (one hierarchy
per controller) and v2 (one unified hierarchy), and the hybrid of the two,
taking each controller where it is mounted. A sandbox's first process
enters its v1 groups itself, before it execs bubblewrap (`join_self`), and
the referee moves bubblewrap's processes into its v2 groups while bubblewrap
sets up (`admit`, `sandbox.gate`); both write through descriptors opened
when the groups were made (the kernel checks a move against the opener's
credentials), and every process the bot starts later is born inside.

The freezer (`freeze_idle`) stops every process of a sandbox at once while it
is not that bot's turn: v2's `cgroup.freeze` where a unified hierarchy is
mounted (frozen processes still die of SIGKILL), else v1's freezer controller
(frozen processes die only once thawed, so `thaw` comes before every kill).
A group is made for it only when it is asked for.

A referee that dies leaves its groups to its guardian, which empties and
removes them; if the guardian died too, the next referee's `remove_stale`
kills what is left inside the groups of every referee no longer running
and removes them. Referees that make groups in the same folder are taken to
share a PID namespace (a group is named after its referee's pid); a process
of another PID namespace shows as pid 0 in `cgroup.procs` and is never
signalled (kill(0) would signal the caller's own group).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
GROUP_PREFIX = "chicago-referee"


@dataclass(frozen=True)
class CgroupHost:
    """Where this machine lets the referee make groups, per controller."""

    version: str  # "v1", "v2", "hybrid" or "none"
    parents: dict[str, Path] = field(default_factory=dict)  # controller -> a folder we may create groups in
    v2_parent: Path | None = None  # the unified folder when memory/pids come from v2
    freezer_v2: bool = False  # the freezer is v2's cgroup.freeze (under parents["freezer"])
    notes: tuple[str, ...] = ()
    v2_favordynmods: bool = False  # the v2 hierarchy is mounted with favordynmods (moves need no RCU wait)

    @property
    def usable(self) -> tuple[str, ...]:
        return tuple(c for c in CONTROLLERS if c in self.parents)

    @property
    def on_v2(self) -> tuple[str, ...]:
        """Controllers whose groups are v2 ones (entered behind the sandbox's gate)."""
        return tuple(
            c
            for c in self.usable
            if (self.v2_parent is not None and self.parents[c] == self.v2_parent)
            or (c == "freezer" and self.freezer_v2)
        )


def _mounts() -> list[tuple[str, str, set[str]]]:
    found: list[tuple[str, str, set[str]]] = []
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            found.append((parts[2], parts[1], set(parts[3].split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's group path."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path
    return paths


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def find_cgroups() -> CgroupHost:
    """Which controllers this process can put bots under (root usually can)."""
    mounts = _mounts()
    own = _own_paths()
    parents: dict[str, Path] = {}
    notes: list[str] = []
    v1 = [(where, options) for kind, where, options in mounts if kind == "cgroup"]
    v2 = [(where, options) for kind, where, options in mounts if kind == "cgroup2"]
    _find_v1(v1, own, parents, notes)
    v2_parent, freezer_v2 = None, False
    if v2 and "" in own:
        unified = Path(v2[0][0]) / own[""].lstrip("/")
        v2_parent = _enable_v2(unified, parents, notes)
        freezer_v2 = _find_v2_freezer(unified, parents, notes)
    version = "hybrid" if v1 and v2 else "v1" if v1 else "v2" if v2 else "none"
    return CgroupHost(
        version=version,
        parents=parents,
        v2_parent=v2_parent,
        freezer_v2=freezer_v2,
        notes=tuple(notes),
        v2_favordynmods=bool(v2) and "favordynmods" in v2[0][1],
    )


def _find_v1(
    mounts: list[tuple[str, set[str]]], own: dict[str, str], parents: dict[str, Path], notes: list[str]
) -> None:
    """The v1 controllers mounted, with this process's group writable."""
    for where, options in mounts:
        for name in CONTROLLERS:
            if name in options and name in own:
                parent = Path(where) / own[name].lstrip("/")
                if _writable_dir(parent):
                    parents[name] = parent
                else:
                    notes.append(f"cgroup v1 {name}: {parent} is not writable")


V2_CONTROLLERS = {"memory": "memory", "pids": "pids", "cpuacct": "cpu"}  # ours -> v2's name


def _enable_v2(parent: Path, parents: dict[str, Path], notes: list[str]) -> Path | None:
    """v2 controllers for what v1 did not give, enabled below this process's
    group; the unified folder if any were."""
    try:
        available = set((parent / "cgroup.controllers").read_text().split())
    except OSError:
        available = set()
    missing = [c for c, v2_name in V2_CONTROLLERS.items() if c not in parents and v2_name in available]
    if not missing:
        return None
    if not _writable_dir(parent):
        notes.append(f"cgroup v2: {parent} is not writable")
        return None
    try:
        (parent / "cgroup.subtree_control").write_text(" ".join(f"+{V2_CONTROLLERS[c]}" for c in missing))
    except OSError as exc:
        notes.append(f"cgroup v2: cannot enable {', '.join(missing)} below {parent}: {exc.strerror or exc}")
        return None
    for c in missing:
        parents[c] = parent
    return parent


def _find_v2_freezer(parent: Path, parents: dict[str, Path], notes: list[str]) -> bool:
    """v2's freezer needs no controller: preferred (SIGKILL works while frozen)."""
    if _writable_dir(parent) and _kernel_at_least(5, 2):
        parents["freezer"] = parent
        return True
    if "freezer" not in parents:
        notes.append(f"cgroup v2 freezer: {parent} is not writable, or the kernel is older than 5.2")
    return False


def _kernel_at_least(major: int, minor: int) -> bool:
    try:
        found = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    except ValueError:
        return False
    return found >= (major, minor)


def remove_stale(host: CgroupHost, patience_s: float = 5.0) -> int:
    """Empty and remove the groups a referee left when it died (named by its
    pid, which no longer runs; its guardian normally does this, unless it
    died too): every process still inside is killed (thawed first), then the
    group removed. Returns how many were removed."""
    stale = []
    for parent in set(host.parents.values()):
        for path in parent.glob(f"{GROUP_PREFIX}-*"):
            pid = path.name.removeprefix(f"{GROUP_PREFIX}-").split("-")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                stale.append(path)
    removed = 0
    deadline = time.monotonic() + patience_s
    while stale:
        for path in list(stale):
            _kill_inside(path)
            try:
                path.rmdir()
            except FileNotFoundError:
                pass
            except OSError:  # its killed processes are still leaving
                continue
            stale.remove(path)
            removed += 1
        if not stale or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    return removed


def _kill_inside(path: Path) -> None:
    """SIGKILL every process in group `path` (a v1-frozen one dies only once thawed)."""
    for file, text in (("freezer.state", "THAWED"), ("cgroup.freeze", "0"), ("cgroup.kill", "1")):
        try:
            (path / file).write_text(text)
        except OSError:
            pass
    try:
        pids = [int(p) for p in (path / "cgroup.procs").read_text().split() if p != "0"]
    except (OSError, ValueError):
        pids = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class BotCgroup:
    """The groups of one bot: created with limits, entered, read, removed."""

    def __init__(self, host: CgroupHost, name: str, memory_bytes: int, processes: int, freeze: bool = False) -> None:
        self.dirs: dict[str, Path] = {}
        self._v2 = host.v2_parent
        self._self_fds: list[int] = []  # cgroup v1 `tasks`: the new process moves itself (`join_self`)
        self._procs_fds: list[int] = []  # cgroup v2 `cgroup.procs`: the referee moves it (`admit`)
        self._cpu_fd = -1  # kept open: read once or twice per decision
        self._freeze_fd = -1
        self._freezer_v2 = host.freezer_v2
        self.frozen = False
        try:
            self._make_groups(host, name, freeze)
            v2 = {c for c, p in host.parents.items() if p == host.v2_parent}
            self._set_limits(v2, memory_bytes, processes)
            self._open_files(v2 | ({"freezer"} if host.freezer_v2 else set()))
        except OSError:
            self.remove()
            raise

    def _make_groups(self, host: CgroupHost, name: str, freeze: bool) -> None:
        """One folder per hierarchy (v2's controllers share one)."""
        for controller, parent in host.parents.items():
            if controller == "freezer" and not freeze:
                continue
            path = parent / f"{GROUP_PREFIX}-{name}"
            if path not in self.dirs.values():
                path.mkdir()
            self.dirs[controller] = path

    def _set_limits(self, v2: set[str], memory_bytes: int, processes: int) -> None:
        if "memory" in self.dirs:
            if "memory" in v2:
                self._write("memory", "memory.max", memory_bytes)
                self._write("memory", "memory.swap.max", 0, optional=True)
            else:
                self._write("memory", "memory.limit_in_bytes", memory_bytes)
                self._write("memory", "memory.memsw.limit_in_bytes", memory_bytes, optional=True)
        if "pids" in self.dirs:
            self._write("pids", "pids.max", processes)

    def _open_files(self, on_v2: set[str]) -> None:
        """The files written or read while the bot runs, opened once: how it
        enters each group, its CPU time, its freezer."""
        v2_dirs = {path for c, path in self.dirs.items() if c in on_v2}
        for path in sorted(set(self.dirs.values())):
            if path in v2_dirs:
                self._procs_fds.append(os.open(path / "cgroup.procs", os.O_WRONLY))
            else:
                self._self_fds.append(os.open(path / "tasks", os.O_WRONLY))
        if "cpuacct" in self.dirs:
            file = "cpu.stat" if self.dirs["cpuacct"] == self._v2 else "cpuacct.usage"
            self._cpu_fd = os.open(self.dirs["cpuacct"] / file, os.O_RDONLY)
        if "freezer" in self.dirs:
            file = "cgroup.freeze" if self._freezer_v2 else "freezer.state"
            self._freeze_fd = os.open(self.dirs["freezer"] / file, os.O_WRONLY)

    def _write(self, controller: str, file: str, value: int, optional: bool = False) -> None:
        try:
            (self.dirs[controller] / file).write_text(str(value))
        except OSError:
            if not optional:
                raise

    def _read(self, controller: str, file: str) -> str:
        path = self.dirs.get(controller)
        if path is None:
            return ""
        try:
            return (path / file).read_text()
        except OSError:
            return ""

    def join_self(self) -> None:
        """In a new process before it execs (it has one thread): into every
        cgroup v1 group. Writing 0 to `tasks` moves the calling thread, and the
        kernel moves the current thread without the lock, and the RCU grace
        period it waits for, that moving a whole process through `cgroup.procs`
        takes (milliseconds per start). A process of one thread is all moved."""
        for fd in self._self_fds:
            os.write(fd, b"0")

    @property
    def joins_itself(self) -> bool:
        """Some groups (cgroup v1) are entered by the new process (`join_self`)."""
        return bool(self._self_fds)

    @property
    def referee_admits(self) -> bool:
        """Some groups (cgroup v2: no single-thread move into a domain group)
        are entered by the referee moving the sandbox's processes (`admit`)."""
        return bool(self._procs_fds)

    def admit(self, pid: int) -> None:
        """Move process `pid`, all its threads, into every cgroup v2 group.
        Raises OSError (ESRCH: it is gone)."""
        text = str(pid).encode()
        for fd in self._procs_fds:
            os.write(fd, text)

    def close_fds(self) -> None:
        """Close the descriptors that move processes in (the bot is inside, or will not run)."""
        for fd in (*self._self_fds, *self._procs_fds):
            os.close(fd)
        self._self_fds, self._procs_fds = [], []

    @staticmethod
    def _counter(text: str, key: str) -> int:
        for line in text.splitlines():
            words = line.split()
            if len(words) == 2 and words[0] == key:
                return int(words[1])
        return 0

    def oom_kills(self) -> int:
        """Processes the kernel killed for going over the memory limit."""
        if "memory" not in self.dirs:
            return 0
        if self.dirs["memory"] == self._v2:
            return self._counter(self._read("memory", "memory.events"), "oom_kill")
        return self._counter(self._read("memory", "memory.oom_control"), "oom_kill")

    def memory_limit_hits(self) -> int:
        """How often usage reached the memory limit (the kernel then reclaims, slowly)."""
        if "memory" not in self.dirs:
            return 0
        if self.dirs["memory"] == self._v2:
            return self._counter(self._read("memory", "memory.events"), "max")
        text = self._read("memory", "memory.failcnt").strip()
        return int(text) if text.isdigit() else 0

    def forks_refused(self) -> int:
        """Forks (or threads) refused because the process limit was reached."""
        return self._counter(self._read("pids", "pids.events"), "max")

    @property
    def counts_cpu(self) -> bool:
        return self._cpu_fd >= 0

    def cpu_seconds(self) -> float:
        """CPU time of every process of the sandbox so far (0.0 without cpuacct)."""
        if self._cpu_fd < 0:
            return 0.0
        try:
            text = os.pread(self._cpu_fd, 4096, 0)
        except OSError:
            return 0.0
        if self.dirs["cpuacct"] == self._v2:
            return self._counter(text.decode(), "usage_usec") / 1e6
        text = text.strip()
        return int(text) / 1e9 if text.isdigit() else 0.0

    @property
    def can_freeze(self) -> bool:
        return self._freeze_fd >= 0

    def freeze(self) -> None:
        """Stop every process of the group (the kernel finishes it asynchronously)."""
        if self._freeze_fd >= 0 and not self.frozen:
            os.pwrite(self._freeze_fd, b"1" if self._freezer_v2 else b"FROZEN", 0)
            self.frozen = True

    def thaw(self) -> None:
        """Let the group run again; the processes are runnable when this returns."""
        if self._freeze_fd >= 0 and self.frozen:
            os.pwrite(self._freeze_fd, b"0" if self._freezer_v2 else b"THAWED", 0)
            self.frozen = False

    def freezer_state(self) -> str:
        """What the kernel says: 'frozen', 'freezing' or 'thawed' ('' without a freezer)."""
        if "freezer" not in self.dirs:
            return ""
        if self._freezer_v2:
            done = self._counter(self._read("freezer", "cgroup.events"), "frozen")
            return "frozen" if done else "freezing" if self.frozen else "thawed"
        return self._read("freezer", "freezer.state").strip().lower()

    def pids(self) -> list[int]:
        found: set[int] = set()
        for path in set(self.dirs.values()):
            try:
                found.update(int(p) for p in (path / "cgroup.procs").read_text().split() if p != "0")
            except (OSError, ValueError):
                pass
        return sorted(found)

    def kill_all(self) -> int:
        """SIGKILL every process still in the groups; returns how many were left."""
        left = 0
        try:
            self.thaw()  # v1: a frozen process dies only once thawed
        except OSError:
            pass
        for path in set(self.dirs.values()):  # v2 groups kill all at once
            if (path / "cgroup.kill").exists():
                try:
                    (path / "cgroup.kill").write_text("1")
                except OSError:
                    pass
        for _ in range(20):
            pids = self.pids()
            if not pids:
                break
            left = max(left, len(pids))
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.005)
        return left

    def remove(self) -> None:
        """Remove the groups (once empty; an exiting process may linger briefly)."""
        self.close_fds()
        for fd in (self._cpu_fd, self._freeze_fd):
            if fd >= 0:
                os.close(fd)
        self._cpu_fd = self._freeze_fd = -1
        for path in sorted(set(self.dirs.values()), reverse=True):
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        self.dirs = {}
