"""The sandbox for untrusted bots: what each bot gets, what the host provides.

Each sandboxed bot runs under bubblewrap in namespaces of its own (PID,
network, mount, user, IPC, UTS, cgroup): it sees only its own processes, has
no network (not even the host's loopback), sees the system read-only, its own
folder read-only at `/bot` (a copy: `folder`) and a private size-limited
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
`gate`). It runs in a session of its own: killing that session's
group kills the sandbox's PID 1, and with it every process inside, whatever
it did to its session, environment or pid. bwrap's `--die-with-parent` is
not used: trio forks children from worker threads, and that parent-death
signal fires when the thread exits. Instead every sandbox waits behind its
gate until the guardian knows it (`gate`: a gate whose referee died
makes bwrap exit), and the guardian kills the group, and empties and removes
the referee's cgroups, if the referee dies.

It fails closed: `require_sandbox` refuses with what is missing and how to
get it; nothing runs with less isolation than asked for.

The package: `limits` (what a bot may use, parsed), `host` (the probe and
the refusals), `paths` (a bot's program and what its folder must not hold),
`folder` (the read-only copy of a bot's folder), `files` (the system files
and Python library every sandbox shows), `command` (bubblewrap's arguments),
`gate` (the start gate), `plan` (one start, planned) and `running` (one
sandbox while it runs). It imports `referee.errors` and the seats' `cgroups`
and `packages`, nothing above the seats.
"""

from __future__ import annotations

from referee.seats.sandbox.command import BOT_DIR, LIB_DIR, NAMESPACES, SANDBOX_PATH, SCRATCH
from referee.seats.sandbox.gate import GateError, SandboxGate
from referee.seats.sandbox.host import (
    HostReport,
    describe,
    probe_host,
    require_freezer,
    require_sandbox,
    sandbox_python,
)
from referee.seats.sandbox.limits import LIMITS_HELP, SandboxLimits, limits_from_table, parse_limits
from referee.seats.sandbox.paths import bot_program, check_bot, forbidden_paths
from referee.seats.sandbox.plan import plan
from referee.seats.sandbox.running import SEAT_UID_BASE, SEAT_UIDS_PER_REFEREE, SandboxedBot

__all__ = [
    "BOT_DIR",
    "LIB_DIR",
    "LIMITS_HELP",
    "NAMESPACES",
    "SANDBOX_PATH",
    "SCRATCH",
    "SEAT_UIDS_PER_REFEREE",
    "SEAT_UID_BASE",
    "GateError",
    "HostReport",
    "SandboxGate",
    "SandboxLimits",
    "SandboxedBot",
    "bot_program",
    "check_bot",
    "describe",
    "forbidden_paths",
    "limits_from_table",
    "parse_limits",
    "plan",
    "probe_host",
    "require_freezer",
    "require_sandbox",
    "sandbox_python",
]
