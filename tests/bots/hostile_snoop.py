"""Hostile: looks around and reports what it finds on stderr as one
`REPORT {json}` line, then plays first-legal. Options name host things to
try: `pids=` (comma-separated: the referee, the guardian) to read and signal,
`paths=` (comma-separated) to read, `write=` to create, `port=` a port on
127.0.0.1 to connect to."""

import json
import os
import signal
import socket
import sys

from _botlib import first_legal, marker, options, serve

opts = options()
report: dict = {"own_pid": os.getpid(), "uid": os.getuid(), "env": dict(os.environ), "cwd": os.getcwd()}
report["visible_pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
report["own_fd0"] = os.readlink("/proc/self/fd/0")
report["fd0_of_others"] = {}
for pid in report["visible_pids"]:
    if pid != os.getpid():
        try:
            report["fd0_of_others"][pid] = os.readlink(f"/proc/{pid}/fd/0")
        except OSError as exc:
            report["fd0_of_others"][pid] = f"error {exc.errno}"
for key in ("pids", "paths", "write"):
    report[key] = {}
for pid in filter(None, opts.get("pids", "").split(",")):
    outcome = {}
    for what, probe in (
        ("environ", lambda: open(f"/proc/{pid}/environ", "rb").read(64)),
        ("cmdline", lambda: open(f"/proc/{pid}/cmdline", "rb").read(64)),
        ("signal", lambda: os.kill(int(pid), 0)),
    ):
        try:
            probe()
            outcome[what] = "ok"
        except OSError as exc:
            outcome[what] = type(exc).__name__
    report["pids"][pid] = outcome
try:
    os.kill(-1, signal.SIGKILL)  # everything it may signal (not itself)
    report["kill_all"] = "sent"
except OSError as exc:
    report["kill_all"] = type(exc).__name__
for path in filter(None, opts.get("paths", "").split(",")):
    try:
        with open(path, "rb") as fh:
            fh.read(16)
        report["paths"][path] = "read"
    except OSError as exc:
        report["paths"][path] = type(exc).__name__
for path in [
    *filter(None, opts.get("write", "").split(",")),
    "/bot/planted.txt",
    "/planted.txt",
    "/dev/shm/planted.txt",
    "/dev/planted.txt",
    "/scratch/mine.txt",
]:
    try:
        with open(path, "w") as fh:
            fh.write("planted")
        report["write"][path] = "written"
    except OSError as exc:
        report["write"][path] = type(exc).__name__
report["dev"] = sorted(os.listdir("/dev"))
devices = {}
for name, mode in (("null", "w"), ("zero", "rb"), ("urandom", "rb"), ("random", "rb"), ("tty", "r")):
    try:
        with open(f"/dev/{name}", mode) as fh:
            devices[name] = fh.write("x") if mode == "w" else len(fh.read(4))
    except OSError as exc:
        devices[name] = type(exc).__name__
report["devices"] = devices
try:
    import referee.games

    report["import_referee_games"] = "ok"
except ImportError as exc:
    report["import_referee_games"] = type(exc).__name__
report["engine_files"] = sorted(os.listdir(os.path.dirname(referee.__file__))) if "referee" in sys.modules else []
try:  # the engine is read-only: no planted rules
    with open(os.path.join(os.path.dirname(referee.games.__file__), "planted.py"), "w") as fh:
        fh.write("x = 1\n")
    report["engine_write"] = "written"
except (OSError, NameError) as exc:
    report["engine_write"] = type(exc).__name__
for runtime in ("referee.tournament", "referee.play", "referee.seats", "referee.logs", "trio", "typer"):
    try:  # the referee's runtime and the virtualenv's other packages are not
        __import__(runtime)
        report.setdefault("import_runtime", {})[runtime] = "ok"
    except ImportError as exc:
        report.setdefault("import_runtime", {})[runtime] = type(exc).__name__
if "port" in opts:
    try:
        socket.create_connection(("127.0.0.1", int(opts["port"])), timeout=2).close()
        report["connect"] = "connected"
    except OSError as exc:
        report["connect"] = type(exc).__name__
print("REPORT " + json.dumps(report), file=sys.stderr, flush=True)
serve(f"snoop {marker()}", lambda n, msg: first_legal(msg))
