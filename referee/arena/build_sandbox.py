"""One build command run in the sandbox: its bubblewrap, its limits, its
output into the log, and the one line that says why it failed.

A build runs a stranger's commands (a Makefile is a program), so it runs in
the sandbox bots play in (`referee.seats.sandbox`: the same namespaces,
system binds, `/dev`, gate, cgroups, rlimits and uids), with two
differences: the bot's working copy is bound writable at `/bot` (its working
directory), and its limits are the arena's `[builds]` ones.

What a build sees: the system read-only (`/usr`, `/bin`, `/lib*` and a few
files of `/etc`), so the toolchains the system installed there (`cc`,
`make`, `go`, `node`, `python3`, `javac`) and nothing installed elsewhere: a
toolchain in a home folder (rustup's `cargo` in `~/.cargo`) is not there,
and a Rust bot then fails with "cargo not found in the sandbox". Its own
working copy at `/bot`; a private tmpfs at `/scratch` (`HOME`, `TMPDIR`,
`/tmp`, and the caches: `GOCACHE`, `GOPATH`, `CARGO_HOME`,
`XDG_CACHE_HOME`), counted in its memory; a clean environment. What it
cannot: the network (a namespace of its own, not even loopback), other
processes (its own PID namespace), the host's files, the arena's folder,
other builds and seats (each its own uid when the arena runs as root). So
builds are offline: Go with the standard library or `vendor/`
(`GOPROXY=off`, `GOTOOLCHAIN=local`), Rust with vendored crates
(`--offline`), Python and JavaScript with what the folder holds
(docs/arena.md, "Builds").

Limits (`BuildLimits`): the wall clock (at `wall_seconds` the sandbox's
session is killed: bubblewrap and the sandbox's PID 1, so every process
inside), memory (a cgroup where usable, else RLIMIT_DATA; a cgroup that
cannot be made refuses the build: no build runs without its limits),
processes (a pids cgroup and RLIMIT_NPROC, which counts the build's own
uid as root), the size of one file (`FILE_SIZE_MIB`), the disk (stopped if
its file system falls below `DISK_FLOOR_BYTES` free) and the output kept:
past `output_bytes` the log says `[output cut at ...]` and the rest is read
and dropped, so a chatty build still finishes. The build is over when its
command exits: what it left running in the background goes with its
sandbox.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from referee.arena.config import BuildLimits
from referee.errors import SandboxUnavailable
from referee.seats.bot_process import kill_group
from referee.seats.cgroups import BotCgroup
from referee.seats.guardian import GUARDIAN
from referee.seats.sandbox import BOT_DIR, SANDBOX_PATH, SCRATCH, HostReport, SandboxedBot, SandboxGate, SandboxLimits
from referee.seats.sandbox.command import SHELL, MiB, options_file, prlimit_args, rlimits, sandbox_options
from referee.seats.sandbox.files import stage
from referee.visible import visible

FILE_SIZE_MIB = 512  # one file a build writes
OPEN_FILES = 1024
DISK_FLOOR_BYTES = 256 * MiB  # a build is stopped when its file system has less free
REASON_CHARS = 300
_CHUNK = 1 << 16
BUILD_ENV = {
    "PATH": SANDBOX_PATH,
    "LANG": "C.UTF-8",
    "HOME": SCRATCH,
    "TMPDIR": SCRATCH,
    "XDG_CACHE_HOME": f"{SCRATCH}/.cache",
    "GOCACHE": f"{SCRATCH}/go-build",
    "GOPATH": f"{SCRATCH}/go",
    "GOPROXY": "off",  # the standard library or vendor/ only
    "GOSUMDB": "off",
    "GOTOOLCHAIN": "local",  # never fetch the toolchain a go.mod names
    "GOTELEMETRY": "off",
    "CARGO_HOME": f"{SCRATCH}/cargo",
    "CARGO_NET_OFFLINE": "true",
    "npm_config_cache": f"{SCRATCH}/npm",
    "npm_config_offline": "true",
    "PIP_NO_INDEX": "1",
}


def build_sandbox_limits(limits: BuildLimits) -> SandboxLimits:
    """The game sandbox's limits, as a build has them. CPU time is per
    process and never binds before the wall clock; the scratch tmpfs may be
    as large as the memory it is counted in."""
    return SandboxLimits(
        memory_mb=limits.memory_mib,
        processes=limits.processes,
        cpu_s=limits.wall_seconds * (os.cpu_count() or 1) + 1,
        file_size_mb=FILE_SIZE_MIB,
        open_files=OPEN_FILES,
        scratch_mb=limits.memory_mib,
    )


def plan_build(command: str, folder: Path, limits: BuildLimits, host: HostReport, uid: int | None) -> SandboxedBot:
    """The bwrap command, environment, cgroups, gate and rlimits of one build
    (the game sandbox's, with the working copy writable at /bot)."""
    lim = build_sandbox_limits(limits)
    assert host.bwrap is not None
    try:
        with ExitStack() as undo:
            cgroup = None
            if host.cgroups.usable:
                name = f"{os.getpid()}-build-{uuid.uuid4().hex[:12]}"
                cgroup = BotCgroup(host.cgroups, name, lim.memory_mb * MiB, lim.processes + 2)
                undo.callback(cgroup.remove)
            gate = SandboxGate(reports=cgroup is not None and cgroup.referee_admits)
            undo.callback(gate.close)
            binds = ["--bind", str(folder), BOT_DIR]
            options_fd = options_file(sandbox_options(gate.bwrap_args(), lim.scratch_mb, binds, chdir=BOT_DIR))
            undo.pop_all()
    except OSError as exc:  # fail closed: no build without its limits
        raise SandboxUnavailable(f"cannot prepare the sandbox of a build: {exc.strerror or exc}") from exc
    limited = rlimits(lim, cgroup, before_bwrap=host.root)
    inner = [SHELL, "-c", command]
    args = inner if host.root else [*prlimit_args(host.prlimit or "", limited), *inner]
    return SandboxedBot(
        argv=[host.bwrap, "--args", str(options_fd), "--", *args],
        env=dict(BUILD_ENV),
        limits=lim,
        uid=uid,
        cgroup=cgroup,
        name="build",
        gate=gate,
        rlimits=limited if host.root else [],
        options_fd=options_fd,
    )


def run_build(
    command: str, folder: Path, log_path: Path, limits: BuildLimits, host: HostReport, uid: int | None
) -> str | None:
    """Run the build command in its sandbox, its output into the log; the
    reason it failed, or None."""
    box = plan_build(command, folder, limits, host, uid)
    GUARDIAN.clean_after([str(d.parent) for d in box.cgroup.dirs.values()] if box.cgroup else [], [str(stage())])
    with open(log_path, "wb") as log:
        log.write(f"$ {visible(command)}\n".encode())  # one line, whatever the command holds
        try:
            proc = subprocess.Popen(
                box.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                **box.spawn_options(),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            box.uid = None  # the build's uid is released with its working copy
            box.sweep()
            raise SandboxUnavailable(f"cannot start the sandbox of a build: {exc}") from exc
        box.spawned()
        try:
            GUARDIAN.watch(proc.pid)  # before the gate opens: a dying referee leaves no build behind
            _let_in(box, proc)
            stopped = _follow(proc, log, limits, folder)
            breach = None if stopped or proc.returncode == 0 else box.limit_breach(proc.returncode, _tail(log_path))
        finally:
            if proc.returncode is None:
                kill_group(proc.pid)
                proc.wait()
            box.uid = None
            box.sweep()  # what is left in its cgroups, and the cgroups
            GUARDIAN.release(proc.pid)
            assert proc.stdout is not None
            proc.stdout.close()
        if stopped:
            log.write(f"\n[stopped: {stopped}]\n".encode())
    if stopped:
        return stopped
    if proc.returncode == 0:
        return None
    code = f"exit {proc.returncode}" if proc.returncode >= 0 else f"killed by signal {-proc.returncode}"
    if breach is not None:
        return f"build failed ({code}): the build {breach[1]}"
    return f"build failed ({code}): {_explain(log_path, proc.returncode)}"


def _let_in(box: SandboxedBot, proc: subprocess.Popen[bytes]) -> None:
    """Open the gate: at once, or once bwrap's processes are in their v2 groups."""
    assert box.gate is not None
    box.gate.spawned()
    if box.cgroup is None or not box.cgroup.referee_admits:
        box.gate.open()
    else:
        box.admit(proc.pid)  # False: bwrap ended before it ran anything (its words are in the log)


def _follow(proc: subprocess.Popen[bytes], log: IO[bytes], limits: BuildLimits, folder: Path) -> str:
    """Copy the build's output into the log, up to its cap, until its command
    exits (what it left running in the background goes with its sandbox);
    kill it at the wall clock or when the disk runs low. '' if it ended by
    itself, else why it was stopped."""
    assert proc.stdout is not None
    output = _Output(proc.stdout.fileno(), log, limits.output_bytes)
    deadline = time.monotonic() + limits.wall_seconds
    stopped, next_disk_check = "", 0.0
    while not _exited(proc.pid):
        now = time.monotonic()
        if now >= deadline:
            stopped = f"build took longer than {limits.wall_seconds} s"
            break
        if now >= next_disk_check:
            if free_bytes(folder) < DISK_FLOOR_BYTES:
                stopped = f"build filled the disk (less than {DISK_FLOOR_BYTES // MiB} MiB left free)"
                break
            next_disk_check = now + 1.0
        output.take(min(deadline - now, 0.1))
    # Its session: bwrap and the sandbox's PID 1, so every process inside
    # (bwrap is not reaped yet: its pid, the group's, cannot name another).
    kill_group(proc.pid)
    output.take_rest(time.monotonic() + 5.0)
    log.flush()
    proc.wait()
    return stopped


class _Output:
    """The build's stdout and stderr (one pipe) into its log, up to the cap;
    the rest is read and dropped, so that the build never blocks on it."""

    def __init__(self, fd: int, log: IO[bytes], cap: int) -> None:
        self.fd, self.log, self.cap, self.kept = fd, log, cap, 0
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)
        self.ended = False

    def take(self, wait_s: float) -> None:
        """Read one chunk, waiting at most `wait_s` for it."""
        if self.ended or not self.poller.poll(max(wait_s, 0.0) * 1000):
            return
        chunk = os.read(self.fd, _CHUNK)
        if not chunk:
            self.ended = True  # every process that held the pipe is gone
        elif self.kept < self.cap:
            part = chunk[: self.cap - self.kept]
            self.log.write(part)
            self.kept += len(part)
            if self.kept >= self.cap:
                self.log.write(f"\n[output cut at {amount(self.cap)}]\n".encode())

    def take_rest(self, deadline: float) -> None:
        while not self.ended and time.monotonic() < deadline:
            self.take(deadline - time.monotonic())


def _exited(pid: int) -> bool:
    """The process has exited (without reaping it)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


_STRONG = re.compile(r"\berror\b|\bfatal\b", re.IGNORECASE)
_LOCATION = re.compile(r"^\S+:\d+:(\d+:)? (?!warning|note)")  # file:line:col: what (go, gcc without the word)
_SHELL_NOT_FOUND = re.compile(r"^(?:/bin/)?sh: (?:\d+: |line \d+: )?([^\s:]+): (?:command )?not found$")  # exit 127
_MAKE_NOT_FOUND = re.compile(r"^make(?:\[\d+\])?: ([^\s:]+): (?:No such file or directory|Command not found)$")


def _explain(log_path: Path, returncode: int) -> str:
    """The line of the log that says what went wrong: a missing program, the
    first line that looks like an error, else the last line."""
    strong = location = last = ""
    with open(log_path, encoding="utf-8", errors="replace") as log:
        log.readline(_CHUNK)  # the `$ command` line
        while line := log.readline(_CHUNK):
            text = line.strip()
            if not text or text.startswith("[output cut at"):
                continue
            missing = (_SHELL_NOT_FOUND.match(text) if returncode == 127 else None) or _MAKE_NOT_FOUND.match(text)
            if missing:
                return f"{visible(missing.group(1))[:80]} not found in the sandbox"
            if not strong and _STRONG.search(text):
                strong = text
            elif not location and _LOCATION.match(text):
                location = text
            last = text
    return _short(strong or location or last or "the build printed nothing")


def _short(text: str) -> str:
    text = visible(text)
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 3] + "..."


def _tail(log_path: Path, size: int = 4096) -> str:
    with open(log_path, "rb") as log:
        log.seek(max(0, os.fstat(log.fileno()).st_size - size))
        return log.read().decode("utf-8", "replace")


def free_bytes(path: Path) -> int:
    try:
        info = os.statvfs(path)
    except OSError:
        return DISK_FLOOR_BYTES  # gone: the build is ending anyway
    return info.f_bavail * info.f_frsize


def amount(n: int) -> str:
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n:,} bytes"
