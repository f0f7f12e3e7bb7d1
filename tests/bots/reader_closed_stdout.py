"""Closes its stdout on request `on` (default 1) and keeps running: it reads
stdin until it ends, then sleeps (the referee must kill it)."""

import os
import sys
import time

from _botlib import bound_resources, first_legal, options, serve

bound_resources()
on = int(options().get("on", 1))


def on_request(n, msg):
    if n != on:
        return first_legal(msg)
    sys.stdout.flush()
    os.close(1)
    sys.stderr.write("reader-closed-stdout: stdout closed, still running\n")
    sys.stderr.flush()
    for _ in sys.stdin:
        pass
    time.sleep(600)


serve("reader-closed-stdout", on_request)
