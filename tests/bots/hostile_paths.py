"""Hostile: reads what its sandbox tells about the host's paths, reports it
on stderr as one `REPORT {json}` line, then plays first-legal: the command
lines, environments, working folders and descriptors of its sandbox's PID 1
and of itself, its mount table (`mountinfo`, `mounts`) and its cgroups."""

import json
import os
import sys

from _botlib import first_legal, marker, serve


def read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError as exc:
        return type(exc).__name__


def links(folder):
    try:
        names = sorted(os.listdir(folder))
    except OSError as exc:
        return {"error": type(exc).__name__}
    found = {}
    for name in names:
        try:
            found[name] = os.readlink(os.path.join(folder, name))
        except OSError as exc:
            found[name] = type(exc).__name__
    return found


report = {}
for pid in ("1", "self"):
    for what in ("cmdline", "environ", "mountinfo", "mounts", "cgroup"):
        report[f"{pid}/{what}"] = read(f"/proc/{pid}/{what}")
    report[f"{pid}/fd"] = links(f"/proc/{pid}/fd")
    for name in ("exe", "cwd", "root"):
        try:
            report[f"{pid}/{name}"] = os.readlink(f"/proc/{pid}/{name}")
        except OSError as exc:
            report[f"{pid}/{name}"] = type(exc).__name__
print("REPORT " + json.dumps(report), file=sys.stderr, flush=True)
serve(f"paths {marker()}", lambda n, msg: first_legal(msg))
