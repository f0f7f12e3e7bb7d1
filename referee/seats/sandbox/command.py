"""The bubblewrap command line of a sandbox: its namespaces, the system it
shows, its `/dev`, the options file bwrap reads through `--args`, the shell
steps that keep the bot's pipes from bwrap, and the rlimits.

Pure argument building (the options file aside): what a sandbox is made of,
in one place, so a reader can check it against bubblewrap's manual.
"""

from __future__ import annotations

import functools
import os
import resource
import sys

from referee.seats.cgroups import BotCgroup
from referee.seats.sandbox.files import etc_binds, system_binds
from referee.seats.sandbox.limits import SandboxLimits

SCRATCH = "/scratch"
BOT_DIR = "/bot"
LIB_DIR = "/sandbox-lib"  # protocol/, msgspec and the pure engine (referee.games), for Python bots
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
NAMESPACES = ("cgroup", "ipc", "mount", "network", "pid", "user", "uts")
MiB = 1 << 20
DEVICES = ("null", "zero", "urandom")  # what programs open; /dev/random is a link to urandom

# A Python named by its bare name runs as the system Python of the referee's
# version, with the library copy on its path, as a `.py` command does.
BARE_PYTHONS = ("python", "python3", f"python{sys.version_info.major}.{sys.version_info.minor}")

PRLIMIT_NAMES = {
    resource.RLIMIT_CPU: "cpu",
    resource.RLIMIT_FSIZE: "fsize",
    resource.RLIMIT_NOFILE: "nofile",
    resource.RLIMIT_DATA: "data",
    resource.RLIMIT_NPROC: "nproc",
}


def namespace_args() -> list[str]:
    return ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--hostname", "sandbox"]


def dev_args() -> list[str]:
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
def system_args() -> tuple[str, ...]:
    """The same for every bot of this referee: worked out once."""
    return (*system_binds(), *etc_binds(), "--proc", "/proc", *dev_args())


def sandbox_options(gate_args: list[str], scratch_mb: int, binds: list[str], chdir: str = SCRATCH) -> list[str]:
    """Every option of one bot's bwrap, the gate's first (a build's too:
    its working copy among the binds, its working directory `chdir`)."""
    return [
        *gate_args,
        *namespace_args(),
        *system_args(),
        "--size",
        str(scratch_mb * MiB),
        "--tmpfs",
        SCRATCH,
        "--symlink",
        SCRATCH,
        "/tmp",
        *binds,
        # The sandbox's own / and /dev are tmpfs without a size: read-only,
        # so the scratch folder is the only place a bot can write.
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        chdir,
    ]


def options_file(options: list[str]) -> int:
    """bwrap's options in a memory file (NUL-separated, for `--args`): off its
    command line, which the sandbox shows as its PID 1's, with every host path
    in them (the staging folder, the bot's folder)."""
    fd = os.memfd_create("bwrap-options", os.MFD_CLOEXEC)
    try:
        data = b"".join(os.fsencode(option) + b"\0" for option in options)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
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


def bot_stdio(bwrap: list[str], args: list[str], passed: tuple[int, ...]) -> list[str]:
    """`bwrap ... -- args` with the bot's stdin and stdout kept from bwrap
    (descriptors a shell can name: 3-9, none that bwrap is passed)."""
    a, b = [fd for fd in range(3, 10) if fd not in passed][:2]
    return [
        SHELL,
        "-c",
        HOST_STDIO.format(a=a, b=b),
        "sandbox",
        *bwrap,
        SHELL,
        "-c",
        SANDBOX_STDIO.format(a=a, b=b),
        "bot",
        *args,
    ]


def rlimits(limits: SandboxLimits, cgroup: BotCgroup | None, before_bwrap: bool) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for the bot and everything it starts."""
    memory, file_size = limits.memory_mb * MiB, limits.file_size_mb * MiB
    # CPU: SIGXCPU at the limit (a bot that ignores it gets SIGKILL a second later).
    found = [
        (resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),
        (resource.RLIMIT_FSIZE, file_size, file_size),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
    ]
    if cgroup is None or "memory" not in cgroup.dirs:
        found.append((resource.RLIMIT_DATA, memory, memory))
    # The process limit counts the processes of a uid. Inside the sandbox they
    # are the sandbox's init and the bot's; set before bwrap (as root: a uid
    # of its own per seat) the outer bwrap counts too. With a pids cgroup it is
    # only a backstop, so that the cgroup refuses first and records that it did.
    nproc = limits.processes + (16 if cgroup is not None and "pids" in cgroup.dirs else 1) + int(before_bwrap)
    return [*found, (resource.RLIMIT_NPROC, nproc, nproc)]


def prlimit_args(prlimit: str, limits: list[tuple[int, int, int]]) -> list[str]:
    """`prlimit --cpu=S:H ... --`: the limits set inside the sandbox, just
    before the bot's program (as a user, whose uid every seat shares)."""
    return [prlimit, *(f"--{PRLIMIT_NAMES[which]}={soft}:{hard}" for which, soft, hard in limits), "--"]
