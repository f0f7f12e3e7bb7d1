"""The sandbox for untrusted bots: what each bot gets, what the host provides.

Each sandboxed bot runs under bubblewrap in namespaces of its own (PID,
network, mount, user, IPC, UTS, cgroup): it sees only its own processes, has
no network (not even the host's loopback), sees the system read-only, its own
folder read-only at `/bot` (a copy: `bot_folder`) and a private size-limited
tmpfs at `/scratch` (its working directory, HOME and TMPDIR), and nothing
else of the host; bubblewrap's options, which name host folders, reach it
through `--args`, off the command line the sandbox shows as its PID 1's. It
gets a short allowlisted environment. As root each running seat gets a uid
of its own (bwrap is started as that uid; no account needs to exist); as
another user the user namespace maps it to that user. No capabilities, no
new privileges (bwrap sets both), no further user namespaces.

Limits: rlimits (CPU seconds, file size, open files, processes, and memory
when no memory cgroup is usable): as root, set by the new process before it
execs bwrap (its uid is the seat's own, so the process limit counts only this
sandbox); as a user, set inside the sandbox by `prlimit` just before the
bot's program (there the process limit counts the bot's own processes, not
all of the user's). And, where the machine lets the referee make them,
cgroups (memory and processes for the whole sandbox, CPU accounting), which
also tell afterwards which limit a dead bot ran into. The sandbox's processes
are in their cgroups before the bot's program runs (`BotCgroup.join_self`,
`sandbox_gate`). It runs in a session of its own: killing that session's
group kills the sandbox's PID 1, and with it every process inside, whatever
it did to its session, environment or pid. bwrap's `--die-with-parent` is
not used: trio forks children from worker threads, and that parent-death
signal fires when the thread exits. Instead every sandbox waits behind its
gate until the guardian knows it (`sandbox_gate`: a gate whose referee died
makes bwrap exit), and the guardian kills the group, and empties and removes
the referee's cgroups, if the referee dies.

It fails closed: `require_sandbox` refuses with what is missing and how to
get it; nothing runs with less isolation than asked for.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import referee
from referee.errors import SandboxUnavailable
from referee.seats.packages import install_hint
from referee.seats.bot_folder import SEAT_GROUP, check_folder, shown_folder
from referee.seats.cgroups import BotCgroup, CgroupHost, find_cgroups, remove_stale
from referee.seats.sandbox_gate import GateError, SandboxGate
from referee.seats.sandbox_files import SYSTEM_DIRS, etc_binds, lib_binds, system_binds
from referee.seats.sandbox_limits import (  # noqa: F401 (re-exported: where callers have always found them)
    LIMITS_HELP,
    SandboxLimits,
    limits_from_table,
    parse_limits,
)

SCRATCH = "/scratch"
BOT_DIR = "/bot"
LIB_DIR = "/sandbox-lib"  # protocol/, msgspec and the pure engine (referee.games), for Python bots
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
SEAT_UID_BASE = 2_100_000_000  # far above any account; one uid per running seat
SEAT_UIDS_PER_REFEREE = 256
NAMESPACES = ("cgroup", "ipc", "mount", "network", "pid", "user", "uts")
MiB = 1 << 20
ADMIT_TIMEOUT_S = 30.0  # for bwrap to report its namespace child (milliseconds, even on a busy machine)


# ------------------------------------------------------------------ the host


@dataclass(frozen=True)
class HostReport:
    """What this machine provides for sandboxing, in plain facts."""

    bwrap: str | None
    bwrap_version: str
    works: bool  # a trial sandbox ran
    trial_error: str
    root: bool
    userns: str  # "enabled", "disabled" or "unknown"
    cgroups: CgroupHost
    prlimit: str | None
    python: str | None  # the interpreter sandboxed .py bots run with
    load: tuple[float, float, float]
    cores: int
    swap_mb: int
    memory_mb: int = 0

    def problems(self) -> list[str]:
        """Why sandboxing is impossible here (empty: it is possible)."""
        out = []
        if self.bwrap is None:
            out.append(f"bubblewrap (bwrap) is not installed: {install_hint('bubblewrap')}")
        elif not self.works:
            hint = ("enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                    "user.max_user_namespaces > 0), or run in a container that allows them")
            out.append(f"bubblewrap cannot create a sandbox here ({self.trial_error}); {hint}")
        if self.prlimit is None and not self.root:  # as root the limits are set before bwrap runs
            out.append(f"prlimit is not installed: {install_hint('util-linux')}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "bwrap": self.bwrap, "bwrap_version": self.bwrap_version, "sandbox_works": self.works,
            "trial_error": self.trial_error, "root": self.root, "user_namespaces": self.userns,
            "cgroup_version": self.cgroups.version, "cgroup_controllers": list(self.cgroups.usable),
            "cgroup_notes": list(self.cgroups.notes), "prlimit": self.prlimit, "python": self.python,
            "freezer": ("v2" if self.cgroups.freezer_v2 else "v1") if "freezer" in self.cgroups.usable else None,
            "cgroup_v2_groups": list(self.cgroups.on_v2), "cgroup_v2_favordynmods": self.cgroups.v2_favordynmods,
            "load": list(self.load), "cores": self.cores, "swap_mb": self.swap_mb, "memory_mb": self.memory_mb,
            "problems": self.problems(),
        }


def _userns_state() -> str:
    try:
        if Path("/proc/sys/user/max_user_namespaces").read_text().strip() == "0":
            return "disabled"
        clone = Path("/proc/sys/kernel/unprivileged_userns_clone")
        if clone.exists() and clone.read_text().strip() == "0":
            return "disabled"
        return "enabled"
    except OSError:
        return "unknown"


def _meminfo_mb(key: str) -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def sandbox_python() -> str | None:
    """The system interpreter of the referee's Python version (its ABI matches
    the msgspec the SDK needs); a virtualenv's or a user's interpreter lives
    outside what the sandbox shows."""
    name = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for folder in ("/usr/bin", "/usr/local/bin"):
        if os.access(f"{folder}/{name}", os.X_OK):
            return f"{folder}/{name}"
    return None


@functools.cache
def probe_host() -> HostReport:
    """Look at the machine once per process, including one trial sandbox."""
    bwrap = shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap", "/usr/local/bin/bwrap")
                                           if os.access(p, os.X_OK)), None)
    cgroups = find_cgroups() if os.geteuid() == 0 else CgroupHost(
        version=find_cgroups().version, notes=("cgroups are used only when the referee runs as root",))
    remove_stale(cgroups)
    version, works, error = "", False, "not installed"
    if bwrap is not None:
        try:
            version = subprocess.run([bwrap, "--version"], capture_output=True, text=True,
                                     timeout=10).stdout.strip().removeprefix("bubblewrap ").strip()
            uid = SEAT_UID_BASE + SEAT_UIDS_PER_REFEREE * 4096 if os.geteuid() == 0 else None
            gate = SandboxGate()
            gate.open()  # written first: the trial passes the gate as every sandbox does (seccomp included)
            try:
                trial = subprocess.run(
                    [bwrap, *gate.bwrap_args(), *_namespace_args(), *_system_args(), "--size", str(MiB),
                     "--tmpfs", SCRATCH, "--chdir", SCRATCH, "--", "/bin/true"],
                    capture_output=True, text=True, timeout=20, env={"PATH": SANDBOX_PATH},
                    user=uid, group=uid, extra_groups=[] if uid is not None else None, cwd="/",
                    pass_fds=gate.child_fds(),
                )
            finally:
                gate.spawned()
            works = trial.returncode == 0
            error = "" if works else (trial.stderr.strip().splitlines() or [f"exit code {trial.returncode}"])[-1]
        except (OSError, subprocess.SubprocessError, SandboxUnavailable) as exc:
            error = str(exc)
    return HostReport(
        bwrap=bwrap, bwrap_version=version, works=works, trial_error=error, root=os.geteuid() == 0,
        userns=_userns_state(), cgroups=cgroups,
        prlimit=shutil.which("prlimit") or ("/usr/bin/prlimit" if os.access("/usr/bin/prlimit", os.X_OK) else None),
        python=sandbox_python(), load=os.getloadavg(), cores=os.cpu_count() or 1, swap_mb=_meminfo_mb("SwapTotal"),
        memory_mb=_meminfo_mb("MemTotal"),
    )


FREEZER_MISSING = ("freeze_idle needs the cgroup freezer, and {why}: run the referee as root on a machine "
                   "with a writable cgroup v2 hierarchy (kernel 5.2 or later) or the cgroup v1 freezer "
                   "controller, or set freeze_idle = false (see `chicago-referee doctor`)")


def require_sandbox() -> HostReport:
    """The host report, or SandboxUnavailable naming what is missing."""
    host = probe_host()
    problems = host.problems()
    if problems:
        raise SandboxUnavailable("cannot sandbox bots on this machine: " + "; ".join(problems)
                                 + " (see `chicago-referee doctor`)")
    return host


def require_freezer(limits: SandboxLimits | None) -> None:
    """SandboxUnavailable if `limits` ask for freeze_idle and no freezer is usable."""
    host = probe_host()
    if limits is not None and limits.freeze_idle and "freezer" not in host.cgroups.usable:
        why = ("cgroups are used only when the referee runs as root" if not host.root
               else "this machine offers no freezer the referee can use")
        raise SandboxUnavailable(FREEZER_MISSING.format(why=why))


def describe(limits: SandboxLimits | None) -> dict[str, Any]:
    """The isolation in force, for each game log's header (no pids or uids:
    logs of the same seed stay identical)."""
    if limits is None:
        return {"sandbox": "none"}
    host = probe_host()
    return {
        "sandbox": "bubblewrap", "bwrap_version": host.bwrap_version, "namespaces": list(NAMESPACES),
        "identity": "a uid per seat" if host.root else "user namespace",
        "cgroups": list(host.cgroups.usable), "limits": limits.as_dict(),
    }


# ------------------------------------------------------------------ one bot


class _SeatUids:
    """uids for running seats: distinct within this referee, and, by the
    referee's pid, most likely from other referees on the machine too."""

    def __init__(self) -> None:
        self.in_use: set[int] = set()

    def acquire(self) -> int:
        block = SEAT_UID_BASE + SEAT_UIDS_PER_REFEREE * (os.getpid() % 4096)
        for uid in range(block, block + SEAT_UIDS_PER_REFEREE):
            if uid not in self.in_use:
                self.in_use.add(uid)
                return uid
        raise SandboxUnavailable(f"more than {SEAT_UIDS_PER_REFEREE} sandboxed bots at once")

    def release(self, uid: int) -> None:
        self.in_use.discard(uid)


SEAT_UIDS = _SeatUids()


def _namespace_args() -> list[str]:
    return ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
            "--hostname", "sandbox"]


DEVICES = ("null", "zero", "urandom")  # what programs open; /dev/random is a link to urandom


def _dev_args() -> list[str]:
    """A /dev of the devices programs use, the links to a process's own
    descriptors, and nothing else: no terminal, no pseudo-terminals, no
    /dev/shm. bwrap's `--dev` binds nine nodes and mounts a devpts, each a
    mount and a read of the mount table, a good part of a sandbox's start."""
    args = ["--tmpfs", "/dev"]
    for name in DEVICES:
        args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    args += ["--symlink", "urandom", "/dev/random", "--symlink", "/proc/self/fd", "/dev/fd"]
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{fd}", f"/dev/{name}"]
    return args


@functools.cache
def _system_args() -> tuple[str, ...]:
    """The same for every bot of this referee: worked out once."""
    return (*system_binds(), *etc_binds(), "--proc", "/proc", *_dev_args())


def _under(path: Path, folder: Path) -> bool:
    """`path` is `folder` or inside it (both absolute; compared as text, which
    is what a start can afford: it runs for every bot start)."""
    text, base = str(path), str(folder)
    return text == base or text.startswith(os.path.join(base, ""))


def _is_system(path: Path) -> bool:
    return any(_under(path, Path(d)) for d in SYSTEM_DIRS)


def bot_program(argv: tuple[str, ...], cwd: str | None) -> tuple[int, Path] | None:
    """(index in argv, resolved path) of the bot's own program file: the
    script after an interpreter, or the executable itself; None for a command
    that only uses the system (`sh -c ...`)."""
    base = Path(cwd) if cwd else Path.cwd()
    for i, arg in enumerate(argv):
        if arg.startswith("-") or (i == 0 and "/" not in arg) or (i == 0 and arg == sys.executable):
            continue
        path = Path(arg) if os.path.isabs(arg) else base / arg
        if path.is_file():
            resolved = path.resolve()
            if not _is_system(resolved):
                return i, resolved
    return None


def forbidden_paths(extra: list[Path] | tuple[Path, ...] = ()) -> list[Path]:
    """What no bot's folder may contain: the referee's source and virtualenv,
    and the run's logs, config and results."""
    found = [Path(referee.__file__).resolve().parent, Path(sys.prefix).resolve()]
    return found + [Path(p).resolve() for p in extra]


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
            raise SandboxUnavailable(f"cannot put bot {self.name!r} into its cgroups: {exc.strerror or exc}; "
                                     "it was stopped before it ran") from exc
        except GateError as exc:
            raise SandboxUnavailable(f"cannot start the sandbox of bot {self.name!r}: {exc}; "
                                     "it was stopped before it ran") from exc
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
        if returncode in (128 + signal.SIGXCPU, -signal.SIGXCPU) or (
                cg is not None and cg.cpu_seconds() >= lim.cpu_s):
            return "cpu_limit", f"used up its {lim.cpu_s} s of CPU time"
        if returncode in (128 + signal.SIGXFSZ, -signal.SIGXFSZ) or "File too large" in stderr_tail:
            return "file_size_limit", f"wrote a file over its limit of {lim.file_size_mb} MiB"
        # Without cgroups, only the bot's own last words tell (a bot can fake them, but only about itself).
        if (cg is None or "memory" not in cg.dirs) and re.search(
                r"MemoryError|Cannot allocate memory|bad_alloc|out of memory|allocation failed", stderr_tail):
            return "memory_limit", f"could not get more memory than its limit of {lim.memory_mb} MiB"
        if (cg is None or "pids" not in cg.dirs) and re.search(
                r"Resource temporarily unavailable|BlockingIOError|fork: retry|can't fork", stderr_tail):
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


def check_bot(argv: tuple[str, ...], cwd: str | None, name: str, forbidden: list[Path]) -> str:
    """Refuse (SandboxUnavailable) a bot whose folder would expose what must
    stay hidden, or that cannot be shown to it; '' if all is as usual, else
    one line for the user (its folder will be shown as a copy)."""
    found = bot_program(argv, cwd)
    if found is None:
        return ""
    folder = found[1].parent
    for hidden in forbidden:
        if _under(hidden, folder):
            raise SandboxUnavailable(
                f"bot {name!r}: its folder {folder} would be visible to it and holds {hidden}; "
                "put the bot in a folder of its own")
    return check_folder(found[1], name)


def plan(argv: tuple[str, ...], cwd: str | None, name: str, limits: SandboxLimits, forbidden: list[Path],
         tag: str) -> SandboxedBot:
    """The bwrap command, environment, identity and limits for one bot start."""
    host = require_sandbox()
    require_freezer(limits)
    check_bot(argv, cwd, name, forbidden)
    args = list(argv)
    binds: list[str] = []
    groups: list[int] = []
    found = bot_program(argv, cwd)
    if found is not None:
        index, program = found
        folder, copied = shown_folder(program, name)  # a copy: its real path stays off the sandbox's mount table
        if copied and host.root:
            groups.append(SEAT_GROUP)  # the copy's group, which only seats carry
        binds += ["--ro-bind", str(folder), BOT_DIR]
        args[index] = f"{BOT_DIR}/{program.name}"
    if args[0] in BARE_PYTHONS:  # `python bot.py`: no such name on the sandbox's PATH (Debian has python3)
        args[0] = sys.executable
    is_python = args[0] == sys.executable or (found is not None and program.suffix == ".py")
    if args[0] == sys.executable:
        if host.python is None:
            version = f"python{sys.version_info.major}.{sys.version_info.minor}"
            raise SandboxUnavailable(f"bot {name!r}: sandboxed Python bots run with the system's {version}, "
                                     f"which is not installed: {install_hint(version)}")
        args = [host.python, "-s", *args[1:]]
    env = {"PATH": SANDBOX_PATH, "LANG": os.environ.get("LANG", "C.UTF-8"), "HOME": SCRATCH, "TMPDIR": SCRATCH}
    if is_python:  # a copy readable by every uid, however the referee is installed (sandbox_files)
        env.update(PYTHONPATH=LIB_DIR, PYTHONDONTWRITEBYTECODE="1")
        binds += lib_binds(LIB_DIR)
    for var in limits.env:
        if var in os.environ:
            env[var] = os.environ[var]
    cgroup = None
    if host.cgroups.usable:
        try:
            cgroup = BotCgroup(host.cgroups, f"{os.getpid()}-{tag[:12]}", limits.memory_mb * MiB, limits.processes + 2,
                               freeze=limits.freeze_idle)
        except OSError as exc:
            raise SandboxUnavailable(f"cannot make the cgroups of bot {name!r}: {exc.strerror or exc}") from exc
        if limits.freeze_idle and not cgroup.can_freeze:  # fail closed
            cgroup.remove()
            raise SandboxUnavailable(FREEZER_MISSING.format(why="no freezer group could be made"))
    assert host.bwrap is not None and (host.root or host.prlimit is not None)
    try:
        gate = SandboxGate(reports=cgroup is not None and cgroup.referee_admits)
    except OSError as exc:
        if cgroup is not None:
            cgroup.remove()
        raise SandboxUnavailable(f"cannot make the start pipes of bot {name!r}: {exc.strerror or exc}") from exc
    options = [*gate.bwrap_args(), *_namespace_args(), *_system_args(),
               "--size", str(limits.scratch_mb * MiB), "--tmpfs", SCRATCH, "--symlink", SCRATCH, "/tmp", *binds,
               # The sandbox's own / and /dev are tmpfs without a size: read-only,
               # so the scratch folder is the only place a bot can write.
               "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SCRATCH]
    rlimits = _rlimits(limits, cgroup, before_bwrap=host.root)
    if not host.root:
        args = [host.prlimit, *(f"--{PRLIMIT_NAMES[which]}={soft}:{hard}" for which, soft, hard in rlimits),
                "--", *args]
    options_fd = -1
    try:
        options_fd = _options_file(options)
        uid = SEAT_UIDS.acquire() if host.root else None
    except (OSError, SandboxUnavailable) as exc:
        if options_fd >= 0:
            os.close(options_fd)
        gate.close()
        if cgroup is not None:
            cgroup.remove()
        if isinstance(exc, OSError):
            raise SandboxUnavailable(f"cannot pass bubblewrap the options of bot {name!r}: "
                                     f"{exc.strerror or exc}") from exc
        raise
    passed = (options_fd, *gate.child_fds())
    command = _bot_stdio([host.bwrap, "--args", str(options_fd), "--"], args, passed)
    return SandboxedBot(argv=command, env=env, limits=limits, uid=uid, cgroup=cgroup, name=name, gate=gate,
                        rlimits=rlimits if host.root else [], groups=groups, options_fd=options_fd)


def _options_file(options: list[str]) -> int:
    """bwrap's options in a memory file (NUL-separated, for `--args`): off its
    command line, which the sandbox shows as its PID 1's, with every host path
    in them (the staging folder, the bot's folder)."""
    fd = os.memfd_create("bwrap-options", os.MFD_CLOEXEC)
    try:
        data = b"".join(os.fsencode(option) + b"\0" for option in options)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


# The bot's stdin and stdout are its alone. bwrap's init (the sandbox's PID 1)
# and the outer bwrap keep their standard streams open as long as the sandbox
# lives: were those the bot's pipes, a bot that closes its stdout would leave
# the referee waiting for a line until the clock ran out, where an unsandboxed
# one is seen to crash at once. So on the host the pipes move to two spare
# descriptors and bwrap gets /dev/null; init closes every descriptor above 2,
# and inside the sandbox, just before the bot's program, they move back.
HOST_STDIO = 'exec {a}<&0 {b}>&1 0</dev/null 1>/dev/null; exec "$@"'
SANDBOX_STDIO = 'exec 0<&{a} 1>&{b} {a}<&- {b}>&-; exec "$@"'
SHELL = "/bin/sh"


def _bot_stdio(bwrap: list[str], args: list[str], passed: tuple[int, ...]) -> list[str]:
    """`bwrap ... -- args` with the bot's stdin and stdout kept from bwrap
    (descriptors a shell can name: 3-9, none that bwrap is passed)."""
    a, b = [fd for fd in range(3, 10) if fd not in passed][:2]
    return [SHELL, "-c", HOST_STDIO.format(a=a, b=b), "sandbox", *bwrap,
            SHELL, "-c", SANDBOX_STDIO.format(a=a, b=b), "bot", *args]


# A Python named by its bare name runs as the system Python of the referee's
# version, with the library copy on its path, as a `.py` command does.
BARE_PYTHONS = ("python", "python3", f"python{sys.version_info.major}.{sys.version_info.minor}")

PRLIMIT_NAMES = {resource.RLIMIT_CPU: "cpu", resource.RLIMIT_FSIZE: "fsize", resource.RLIMIT_NOFILE: "nofile",
                 resource.RLIMIT_DATA: "data", resource.RLIMIT_NPROC: "nproc"}


def _rlimits(limits: SandboxLimits, cgroup: BotCgroup | None, before_bwrap: bool) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for the bot and everything it starts."""
    memory, file_size = limits.memory_mb * MiB, limits.file_size_mb * MiB
    # CPU: SIGXCPU at the limit (a bot that ignores it gets SIGKILL a second later).
    found = [(resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1), (resource.RLIMIT_FSIZE, file_size, file_size),
             (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files)]
    if cgroup is None or "memory" not in cgroup.dirs:
        found.append((resource.RLIMIT_DATA, memory, memory))
    # The process limit counts the processes of a uid. Inside the sandbox they
    # are the sandbox's init and the bot's; set before bwrap (as root: a uid
    # of its own per seat) the outer bwrap counts too. With a pids cgroup it is
    # only a backstop, so that the cgroup refuses first and records that it did.
    nproc = limits.processes + (16 if cgroup is not None and "pids" in cgroup.dirs else 1) + int(before_bwrap)
    return [*found, (resource.RLIMIT_NPROC, nproc, nproc)]
