"""Tries to steer the host's terminal: escape sequences (retitle, clear the
screen, a carriage return), a right-to-left override and a zero-width space
on its stderr, then, at request `on` (default 1), the same in a reply line
that is not JSON. The referee must show all of it as visible escapes."""

import sys

from _botlib import bound_resources, first_legal, options, send_raw, serve

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\rfake line\u202eevil\u200bname\x9b31m\x7f"

bound_resources()
opts = options()
on = int(opts.get("on", 1))
sys.stderr.write(f"starting {HOSTILE}\n")
sys.stderr.flush()


def on_request(n, msg):
    if n == on:
        send_raw(f"{HOSTILE} not json\n")
        return None
    return first_legal(msg)


serve("spoofer" + HOSTILE, on_request)
