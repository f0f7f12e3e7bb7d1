"""Kills the pool worker that plays it: `worker_killer.py MARKER`. At its
first request it SIGKILLs its parent, but only if that parent is a worker
of the referee's local pool (`referee.tournament.pool_worker` in its command
line); anywhere else it plays the first legal action, so it can never kill
a test run or anything but a pool worker."""

import os
import signal

from _botlib import bound_resources, serve

bound_resources()


def on_request(n, msg):
    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/cmdline", "rb") as fh:
            cmdline = fh.read()
    except OSError:
        cmdline = b""
    if b"referee.tournament.pool_worker" in cmdline:
        os.kill(parent, signal.SIGKILL)
    return {"type": "action", "id": msg["id"], "action": msg["legal"][0]}


serve("worker-killer", on_request)
