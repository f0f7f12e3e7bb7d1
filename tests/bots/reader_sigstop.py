"""Stops itself with SIGSTOP on request `on` (default 1) of this process: a
bot that never answers and cannot even be asked to exit (only SIGKILL ends it)."""

import os
import signal

from _botlib import bound_resources, first_legal, options, serve

bound_resources()
on = int(options().get("on", 1))


def on_request(n, msg):
    if n == on:
        os.kill(os.getpid(), signal.SIGSTOP)
    return first_legal(msg)


serve("reader-sigstop", on_request)
