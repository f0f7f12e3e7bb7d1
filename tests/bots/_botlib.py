"""Shared helpers for the misbehaving test bots (stdlib only, raw protocol).

Every bot is started as `python -u BOT.py MARKER [key=value ...]`. MARKER is
a unique string the tests look for in /proc/*/cmdline to prove that no
process outlives its match. `pidfile=PATH` appends this process's pid to
PATH (one line per start), so a test can count restarts.
"""

import json
import os
import sys


def options() -> dict[str, str]:
    opts = {}
    for arg in sys.argv[2:]:
        key, _, value = arg.partition("=")
        opts[key] = value
    if "pidfile" in opts:
        with open(opts["pidfile"], "a") as fh:
            fh.write(f"{os.getpid()}\n")
    return opts


def marker() -> str:
    return sys.argv[1] if len(sys.argv) > 1 else "no-marker"


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def send_raw(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def hello(name: str) -> None:
    send({"type": "hello", "name": name, "version": "test"})


def serve(name: str, on_request) -> None:
    """Answer hello; call `on_request(n, msg)` for the n-th request (1-based)
    of this process; `on_request` returns an object to send, or None to send
    nothing (it may write by itself). Returns on `bye` or end of input."""
    n = 0
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            hello(name)
        elif kind == "request":
            n += 1
            reply = on_request(n, msg)
            if reply is not None:
                send(reply)
        elif kind == "bye":
            return


def first_legal(msg: dict) -> dict:
    return {"type": "action", "id": msg["id"], "action": msg["legal"][0]}


def bound_resources(cpu_s: int = 30, memory: int = 512 * 1024 * 1024) -> None:
    """A hostile test bot limits itself: CPU seconds, address space, no files
    written (it floods only the pipes the referee reads)."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024 * 1024, 1024 * 1024))


def write_bytes(data: bytes) -> None:
    """Raw bytes to stdout in one write where the pipe takes them (not via text I/O)."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    out.write(data)
    out.flush()
