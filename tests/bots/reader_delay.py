"""Answers each of its first `requests` (default 3) requests of this process
after `delay` seconds, the rest at once."""

import time

from _botlib import bound_resources, first_legal, options, serve

bound_resources()
opts = options()
delay = float(opts.get("delay", 0.5))
requests = int(opts.get("requests", 3))


def on_request(n, msg):
    if n <= requests:
        time.sleep(delay)
    return first_legal(msg)


serve("reader-delay", on_request)
