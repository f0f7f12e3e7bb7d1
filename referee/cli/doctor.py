"""`chicago-referee doctor`: what this machine provides for running untrusted
bots, and what that means for a host, in plain words (or `--json`)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from referee.arena.toolchains import probe_toolchains, summary
from referee.bots import BUILTIN_BOTS, builtin_names
from referee.cli.common import EXIT_FAILED, app, expected_errors, out
from referee.seats.packages import install_hint
from referee.seats.sandbox import HostReport, SandboxLimits
from referee.seats.sandbox import host as sandbox_host


def _findings(host: HostReport) -> list[tuple[str, str, str]]:
    """(status, subject, what it means) per finding; status is ok, warn or fail."""
    rows = []
    if host.bwrap is None:
        rows.append(("fail", "bubblewrap", f"not installed: {install_hint('bubblewrap')}"))
    else:
        rows.append(("ok", "bubblewrap", f"{host.bwrap_version} at {host.bwrap}"))
        if host.works:
            rows.append(("ok", "trial sandbox", "ran: own PID, network, mount, user, IPC and UTS namespaces"))
        else:
            rows.append(("fail", "trial sandbox", f"failed: {host.trial_error}"))
    rows.append(("ok" if host.userns == "enabled" else "fail", "user namespaces", host.userns))
    if host.prlimit is None:
        rows.append(
            (
                "ok" if host.root else "fail",
                "prlimit",
                f"not installed: needed for the limits when the referee is not root; {install_hint('util-linux')}",
            )
        )
    if host.root:
        rows.append(("ok", "running as root", "each running seat gets a uid of its own"))
    else:
        rows.append(("ok", "running as a user", "bots get a user namespace; their processes count as yours"))
    usable = host.cgroups.usable
    if usable:
        rows.append(
            (
                "ok",
                f"cgroups ({host.cgroups.version})",
                f"{', '.join(usable)}: memory and processes limited for the whole sandbox, "
                "and a dead bot's limit is named for sure",
            )
        )
    else:
        rows.append(
            (
                "warn",
                f"cgroups ({host.cgroups.version})",
                "none usable: memory is limited per process (RLIMIT_DATA), and which limit a bot "
                "hit is read from its last words",
            )
        )
    for note in host.cgroups.notes:
        rows.append(("warn", "cgroups", note))
    if "freezer" in usable:
        kind = "v2 cgroup.freeze" if host.cgroups.freezer_v2 else "v1 freezer controller"
        rows.append(("ok", "freezer", f"{kind}: freeze_idle can stop a bot's sandbox while it is not its turn"))
    else:
        rows.append(
            (
                "warn",
                "freezer",
                "none usable: freeze_idle (on by default in sandboxed tournaments) "
                "refuses to start; run as root with cgroups, or set freeze_idle = false",
            )
        )
    rows += _moves(host)
    missing = [c for c in ("memory", "pids") if c not in usable]
    if usable and missing:
        rows.append(("warn", "cgroups", f"no {' or '.join(missing)} controller: those limits are per process only"))
    if host.python is None:
        rows.append(("warn", "python", "no system python of the referee's version: sandboxed .py bots cannot run"))
        rows.append(
            (
                "warn",
                "built-in bots",
                f"{builtin_names()}: by name in any bot command; sandboxed they need that system python too",
            )
        )
    else:
        rows.append(("ok", "python", f"sandboxed .py bots run with {host.python}"))
        rows.append(
            (
                "ok",
                "built-in bots",
                f"{builtin_names()}: by name in any bot command (`match mybot.py pimc`), sandboxed or not",
            )
        )
    load = host.load[0]
    rows.append(
        (
            "warn" if load > host.cores else "ok",
            "load",
            f"{load:.2f} on {host.cores} cores" + (": busy; time limits may bite" if load > host.cores else ""),
        )
    )
    rows.append(
        (
            "warn" if host.swap_mb else "ok",
            "swap",
            f"{host.swap_mb} MiB: a bot over its memory limit may swap before it is stopped"
            if host.swap_mb
            else "none",
        )
    )
    return rows


def _moves(host: HostReport) -> list[tuple[str, str, str]]:
    """How a sandbox enters its groups, and whether that waits for the kernel."""
    cg = host.cgroups
    if not cg.usable:
        return []
    v1 = [c for c in cg.usable if c not in cg.on_v2]
    said = []
    if v1:
        said.append(f"v1 groups ({', '.join(v1)}) are entered by the new process moving its one thread, at once")
    if cg.on_v2:
        wait = (
            "no wait: the v2 hierarchy is mounted with favordynmods"
            if cg.v2_favordynmods
            else "each such move waits for an RCU grace period, overlapped with bubblewrap's setup (a host may "
            "mount cgroup2 with favordynmods, kernel 6.0+, to drop the wait, at some cost to every fork "
            "and exit on the machine)"
        )
        names = ", ".join("freezer, with freeze_idle" if c == "freezer" else c for c in cg.on_v2)
        said.append(f"v2 groups ({names}) by the referee while bubblewrap waits; {wait}")
    return [("ok", "cgroup moves", "; ".join(said))]


def _advice(host: HostReport) -> list[str]:
    """What the findings mean for a host planning a competition."""
    limits = SandboxLimits()
    lines = []
    concurrency = max(1, host.cores - 1)
    lines.append(
        f"games at once: {concurrency} (cores - 1, the tournament default); each game runs one "
        "bot per seat, and only the bot to act uses a core"
    )
    if host.memory_mb:
        bots = host.memory_mb // limits.memory_mb
        whole = "per sandbox" if "memory" in host.cgroups.usable else "per process (no memory cgroup)"
        lines.append(
            f"memory: {host.memory_mb} MiB; at the default {limits.memory_mb} MiB {whole}, "
            f"{bots} bots at their limit fit at once; lower `memory` if more run together"
        )
    if not host.root:
        lines.append(
            "running as a user: every bot's processes count towards your own process limit "
            "outside its sandbox; as root each seat gets a uid of its own"
        )
    if "memory" not in host.cgroups.usable or "pids" not in host.cgroups.usable:
        lines.append(
            "for limits on the whole sandbox (and sure limit reasons), run as root on a machine "
            "with writable cgroups (v1 memory and pids controllers, or v2 with them delegated)"
        )
    return lines


@app.command()
@expected_errors
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """What this machine provides for sandboxing bots (exit 1 if it cannot)."""
    host = sandbox_host.probe_host()
    problems = host.problems()
    chains = probe_toolchains()
    if as_json:
        report = {
            **host.as_dict(),
            "toolchains": {t.name: {"path": t.path, "version": t.version} for t in chains},
            "sandbox_possible": not problems,
            "advice": _advice(host),
            "builtin_bots": {bot.name: bot.module for bot in BUILTIN_BOTS.values()},
        }
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}
        toolchains = ("ok", "toolchains", f"{summary(chains)} (what an arena can build bots with)")
        for status, subject, meaning in [*_findings(host), toolchains]:
            out.print(f"[{colour[status]}]{status:<4}[/]  {subject}: {meaning}", highlight=False)
        out.print("[bold]for a host[/]", highlight=False)
        for line in _advice(host):
            out.print(f"  {line}", highlight=False)
        if problems:
            out.print("[red]sandboxing is not possible here[/]: " + "; ".join(problems), highlight=False)
        else:
            out.print(
                "[green]sandboxing is possible[/]: --sandbox and sandbox = true will isolate each bot", highlight=False
            )
    if problems:
        raise typer.Exit(EXIT_FAILED)
