"""What this machine offers for sandboxing, looked at once per process, and
the refusals when it offers too little (fail closed: nothing runs with less
isolation than was asked for)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import SandboxUnavailable
from referee.seats.cgroups import CgroupHost, find_cgroups, remove_stale
from referee.seats.packages import install_hint
from referee.seats.sandbox.command import NAMESPACES, SANDBOX_PATH, SCRATCH, MiB, namespace_args, system_args
from referee.seats.sandbox.gate import SandboxGate
from referee.seats.sandbox.limits import SandboxLimits
from referee.seats.sandbox.running import SEAT_UID_BASE, SEAT_UIDS_PER_REFEREE

FREEZER_MISSING = (
    "freeze_idle needs the cgroup freezer, and {why}: run the referee as root on a machine "
    "with a writable cgroup v2 hierarchy (kernel 5.2 or later) or the cgroup v1 freezer "
    "controller, or set freeze_idle = false (see `chicago-referee doctor`)"
)


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
            hint = (
                "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                "user.max_user_namespaces > 0), or run in a container that allows them"
            )
            out.append(f"bubblewrap cannot create a sandbox here ({self.trial_error}); {hint}")
        if self.prlimit is None and not self.root:  # as root the limits are set before bwrap runs
            out.append(f"prlimit is not installed: {install_hint('util-linux')}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "bwrap": self.bwrap,
            "bwrap_version": self.bwrap_version,
            "sandbox_works": self.works,
            "trial_error": self.trial_error,
            "root": self.root,
            "user_namespaces": self.userns,
            "cgroup_version": self.cgroups.version,
            "cgroup_controllers": list(self.cgroups.usable),
            "cgroup_notes": list(self.cgroups.notes),
            "prlimit": self.prlimit,
            "python": self.python,
            "freezer": ("v2" if self.cgroups.freezer_v2 else "v1") if "freezer" in self.cgroups.usable else None,
            "cgroup_v2_groups": list(self.cgroups.on_v2),
            "cgroup_v2_favordynmods": self.cgroups.v2_favordynmods,
            "load": list(self.load),
            "cores": self.cores,
            "swap_mb": self.swap_mb,
            "memory_mb": self.memory_mb,
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


def _executable(name: str, folders: tuple[str, ...] = ("/usr/bin", "/usr/local/bin")) -> str | None:
    return shutil.which(name) or next((f"{f}/{name}" for f in folders if os.access(f"{f}/{name}", os.X_OK)), None)


def sandbox_python() -> str | None:
    """The system interpreter of the referee's Python version (its ABI matches
    the msgspec the SDK needs); a virtualenv's or a user's interpreter lives
    outside what the sandbox shows."""
    name = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for folder in ("/usr/bin", "/usr/local/bin"):
        if os.access(f"{folder}/{name}", os.X_OK):
            return f"{folder}/{name}"
    return None


def _trial_sandbox(bwrap: str) -> tuple[str, bool, str]:
    """(bubblewrap's version, whether a trial sandbox ran, why not). The trial
    passes the gate as every sandbox does, seccomp included."""
    try:
        version = (
            subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
            .stdout.strip()
            .removeprefix("bubblewrap ")
            .strip()
        )
        uid = SEAT_UID_BASE + SEAT_UIDS_PER_REFEREE * 4096 if os.geteuid() == 0 else None
        gate = SandboxGate()
        gate.open()  # written first: nothing waits on the referee here
        try:
            trial = subprocess.run(
                [
                    bwrap,
                    *gate.bwrap_args(),
                    *namespace_args(),
                    *system_args(),
                    "--size",
                    str(MiB),
                    "--tmpfs",
                    SCRATCH,
                    "--chdir",
                    SCRATCH,
                    "--",
                    "/bin/true",
                ],
                capture_output=True,
                text=True,
                timeout=20,
                env={"PATH": SANDBOX_PATH},
                user=uid,
                group=uid,
                extra_groups=[] if uid is not None else None,
                cwd="/",
                pass_fds=gate.child_fds(),
            )
        finally:
            gate.spawned()
    except (OSError, subprocess.SubprocessError, SandboxUnavailable) as exc:
        return "", False, str(exc)
    if trial.returncode == 0:
        return version, True, ""
    return version, False, (trial.stderr.strip().splitlines() or [f"exit code {trial.returncode}"])[-1]


@functools.cache
def probe_host() -> HostReport:
    """Look at the machine once per process, including one trial sandbox."""
    bwrap = _executable("bwrap")
    cgroups = (
        find_cgroups()
        if os.geteuid() == 0
        else CgroupHost(version=find_cgroups().version, notes=("cgroups are used only when the referee runs as root",))
    )
    remove_stale(cgroups)
    version, works, error = _trial_sandbox(bwrap) if bwrap is not None else ("", False, "not installed")
    return HostReport(
        bwrap=bwrap,
        bwrap_version=version,
        works=works,
        trial_error=error,
        root=os.geteuid() == 0,
        userns=_userns_state(),
        cgroups=cgroups,
        prlimit=_executable("prlimit", ("/usr/bin",)),
        python=sandbox_python(),
        load=os.getloadavg(),
        cores=os.cpu_count() or 1,
        swap_mb=_meminfo_mb("SwapTotal"),
        memory_mb=_meminfo_mb("MemTotal"),
    )


def require_sandbox() -> HostReport:
    """The host report, or SandboxUnavailable naming what is missing."""
    host = probe_host()
    problems = host.problems()
    if problems:
        raise SandboxUnavailable(
            "cannot sandbox bots on this machine: " + "; ".join(problems) + " (see `chicago-referee doctor`)"
        )
    return host


def require_freezer(limits: SandboxLimits | None) -> None:
    """SandboxUnavailable if `limits` ask for freeze_idle and no freezer is usable."""
    host = probe_host()
    if limits is not None and limits.freeze_idle and "freezer" not in host.cgroups.usable:
        why = (
            "cgroups are used only when the referee runs as root"
            if not host.root
            else "this machine offers no freezer the referee can use"
        )
        raise SandboxUnavailable(FREEZER_MISSING.format(why=why))


def describe(limits: SandboxLimits | None) -> dict[str, Any]:
    """The isolation in force, for each game log's header (no pids or uids:
    logs of the same seed stay identical)."""
    if limits is None:
        return {"sandbox": "none"}
    host = probe_host()
    return {
        "sandbox": "bubblewrap",
        "bwrap_version": host.bwrap_version,
        "namespaces": list(NAMESPACES),
        "identity": "a uid per seat" if host.root else "user namespace",
        "cgroups": list(host.cgroups.usable),
        "limits": limits.as_dict(),
    }
