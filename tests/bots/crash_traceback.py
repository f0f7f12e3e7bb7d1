"""Prints a debug line to stderr, then dies of an uncaught exception at request
`on` (default 3): its Python traceback on stderr is the evidence a user needs."""

import sys

from _botlib import first_legal, options, serve

opts = options()
on = int(opts.get("on", 3))


def on_request(n, msg):
    print(f"debug: thinking about request {n}", file=sys.stderr, flush=True)
    if n == on:
        raise ValueError("my bug in the exchange code")
    return first_legal(msg)


serve("crash-traceback", on_request)
