"""Answers request number `on` (default 1; 0 = every request) with id - 1."""

from _botlib import first_legal, options, serve

opts = options()
on = int(opts.get("on", 1))


def on_request(n, msg):
    reply = first_legal(msg)
    if on == 0 or n == on:
        reply["id"] = msg["id"] - 1
    return reply


serve("stale-id", on_request)
