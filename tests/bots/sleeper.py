"""Sleeps `sleep` seconds (default 1.0) before answering request number `on`
(default 1; 0 = every request) of this process, then answers it correctly
(too late).
With `once=PATH` only the first process to create PATH sleeps.
With `asked=PATH` each request's id is appended to PATH as it arrives: a
sign, for a test, that a game is under way."""

import sys
import time

from _botlib import first_legal, options, serve

opts = options()
delay = float(opts.get("sleep", 1.0))
on = int(opts.get("on", 1))
if "once" in opts:
    try:
        open(opts["once"], "x").close()
    except FileExistsError:
        on = -1


def on_request(n, msg):
    if "asked" in opts:
        with open(opts["asked"], "a") as fh:
            fh.write(f"{msg['id']}\n")
    if n == on or on == 0:
        sys.stderr.write(f"sleeper: sleeping {delay}s on request {msg['id']}\n")
        sys.stderr.flush()
        time.sleep(delay)
    return first_legal(msg)


serve("sleeper", on_request)
