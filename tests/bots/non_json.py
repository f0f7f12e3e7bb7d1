"""Answers request number `on` (default 1; 0 = every request) with a line that is not JSON."""

from _botlib import first_legal, options, send_raw, serve

opts = options()
on = int(opts.get("on", 1))


def on_request(n, msg):
    if on == 0 or n == on:
        send_raw("NOT-JSON: I play the ace of spades {\n")
        return None
    return first_legal(msg)


serve("non-json", on_request)
