"""One bot's sandbox, planned: the bwrap command, environment, identity,
cgroups and limits for one start. Everything it makes (cgroups, the gate's
pipes, the options file, a uid) is given back if a later step fails."""

from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from referee.errors import SandboxUnavailable
from referee.seats.cgroups import BotCgroup
from referee.seats.packages import install_hint
from referee.seats.sandbox.command import (
    BARE_PYTHONS,
    BOT_DIR,
    LIB_DIR,
    SANDBOX_PATH,
    SCRATCH,
    MiB,
    bot_stdio,
    options_file,
    prlimit_args,
    rlimits,
    sandbox_options,
)
from referee.seats.sandbox.files import lib_binds
from referee.seats.sandbox.folder import SEAT_GROUP, shown_folder
from referee.seats.sandbox.gate import SandboxGate
from referee.seats.sandbox.host import FREEZER_MISSING, HostReport, require_freezer, require_sandbox
from referee.seats.sandbox.limits import SandboxLimits
from referee.seats.sandbox.paths import bot_program, check_bot
from referee.seats.sandbox.running import SEAT_UIDS, SandboxedBot


@dataclass
class _Shown:
    """The bot's command as the sandbox runs it, and what it must be shown."""

    args: list[str]
    binds: list[str] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    is_python: bool = False


def plan(
    argv: tuple[str, ...], cwd: str | None, name: str, limits: SandboxLimits, forbidden: list[Path], tag: str
) -> SandboxedBot:
    """The bwrap command, environment, identity and limits for one bot start."""
    host = require_sandbox()
    require_freezer(limits)
    check_bot(argv, cwd, name, forbidden)
    shown = _shown_command(argv, cwd, name, host)
    assert host.bwrap is not None and (host.root or host.prlimit is not None)
    with ExitStack() as undo:
        cgroup = _make_cgroup(host, limits, name, tag)
        if cgroup is not None:
            undo.callback(cgroup.remove)
        gate = _make_gate(cgroup, name)
        undo.callback(gate.close)
        options_fd = _pass_options(sandbox_options(gate.bwrap_args(), limits.scratch_mb, shown.binds), name)
        undo.callback(os.close, options_fd)
        uid = SEAT_UIDS.acquire() if host.root else None
        undo.pop_all()  # all made: the SandboxedBot owns them now
    limited = rlimits(limits, cgroup, before_bwrap=host.root)
    args = shown.args if host.root else [*prlimit_args(host.prlimit or "", limited), *shown.args]
    command = bot_stdio([host.bwrap, "--args", str(options_fd), "--"], args, (options_fd, *gate.child_fds()))
    return SandboxedBot(
        argv=command,
        env=_environment(limits, shown.is_python),
        limits=limits,
        uid=uid,
        cgroup=cgroup,
        name=name,
        gate=gate,
        rlimits=limited if host.root else [],
        groups=shown.groups,
        options_fd=options_fd,
    )


def _shown_command(argv: tuple[str, ...], cwd: str | None, name: str, host: HostReport) -> _Shown:
    """The bot's program at /bot (its folder shown as a copy, whose real path
    stays off the sandbox's mount table), a Python bot run by the system
    Python with the library copy."""
    shown = _Shown(args=list(argv))
    found = bot_program(argv, cwd)
    if found is not None:
        index, program = found
        folder, copied = shown_folder(program, name)
        if copied and host.root:
            shown.groups.append(SEAT_GROUP)  # the copy's group, which only seats carry
        shown.binds += ["--ro-bind", str(folder), BOT_DIR]
        shown.args[index] = f"{BOT_DIR}/{program.name}"
    if shown.args[0] in BARE_PYTHONS:  # `python bot.py`: no such name on the sandbox's PATH (Debian has python3)
        shown.args[0] = sys.executable
    shown.is_python = shown.args[0] == sys.executable or (found is not None and found[1].suffix == ".py")
    if shown.args[0] == sys.executable:
        if host.python is None:
            version = f"python{sys.version_info.major}.{sys.version_info.minor}"
            raise SandboxUnavailable(
                f"bot {name!r}: sandboxed Python bots run with the system's {version}, "
                f"which is not installed: {install_hint(version)}"
            )
        shown.args = [host.python, "-s", *shown.args[1:]]
    if shown.is_python:  # a copy readable by every uid, however the referee is installed (files.py)
        shown.binds += lib_binds(LIB_DIR)
    return shown


def _environment(limits: SandboxLimits, is_python: bool) -> dict[str, str]:
    """A short allowlist, and the variables the limits pass on."""
    env = {"PATH": SANDBOX_PATH, "LANG": os.environ.get("LANG", "C.UTF-8"), "HOME": SCRATCH, "TMPDIR": SCRATCH}
    if is_python:
        env.update(PYTHONPATH=LIB_DIR, PYTHONDONTWRITEBYTECODE="1")
    for var in limits.env:
        if var in os.environ:
            env[var] = os.environ[var]
    return env


def _make_cgroup(host: HostReport, limits: SandboxLimits, name: str, tag: str) -> BotCgroup | None:
    """The bot's cgroups where the machine has usable ones; with freeze_idle,
    a freezer or a refusal (fail closed)."""
    if not host.cgroups.usable:
        return None
    try:
        cgroup = BotCgroup(
            host.cgroups,
            f"{os.getpid()}-{tag[:12]}",
            limits.memory_mb * MiB,
            limits.processes + 2,
            freeze=limits.freeze_idle,
        )
    except OSError as exc:
        raise SandboxUnavailable(f"cannot make the cgroups of bot {name!r}: {exc.strerror or exc}") from exc
    if limits.freeze_idle and not cgroup.can_freeze:
        cgroup.remove()
        raise SandboxUnavailable(FREEZER_MISSING.format(why="no freezer group could be made"))
    return cgroup


def _make_gate(cgroup: BotCgroup | None, name: str) -> SandboxGate:
    try:
        return SandboxGate(reports=cgroup is not None and cgroup.referee_admits)
    except OSError as exc:
        raise SandboxUnavailable(f"cannot make the start pipes of bot {name!r}: {exc.strerror or exc}") from exc


def _pass_options(options: list[str], name: str) -> int:
    try:
        return options_file(options)
    except OSError as exc:
        raise SandboxUnavailable(f"cannot pass bubblewrap the options of bot {name!r}: {exc.strerror or exc}") from exc
