"""Answers request number `on` (default 1) with valid JSON that breaks the
schema: `kind=unknown_field` (an extra key) or `kind=wrong_type` (id as a string)."""

from _botlib import first_legal, options, serve

opts = options()
on = int(opts.get("on", 1))
kind = opts.get("kind", "unknown_field")


def on_request(n, msg):
    reply = first_legal(msg)
    if n == on:
        if kind == "unknown_field":
            reply["confidence"] = 0.9
        else:
            reply["id"] = str(msg["id"])
    return reply


serve("schema-violation", on_request)
