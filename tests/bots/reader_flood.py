"""Floods stdout from request `on` (default 1) on and never stops.

`mode=stale`: lines answering request 0 (an id never current), no real reply.
`mode=junk`: the right reply, with a burst of junk lines in the same write,
then junk lines for ever. `mode=short`: the right reply, then 2-byte lines.
Writes block once the referee stops reading; the bot then just waits."""

import json

from _botlib import bound_resources, first_legal, options, serve, write_bytes

bound_resources()
opts = options()
mode = opts.get("mode", "stale")
on = int(opts.get("on", 1))


def on_request(n, msg):
    if n < on:
        return first_legal(msg)
    if mode == "stale":
        stale = first_legal(msg)
        stale["id"] = 0
        burst = (json.dumps(stale) + "\n").encode() * 200
        head = b""
    else:
        burst = b"x\n" * 8000 if mode == "short" else b"junk line: not a reply, not JSON either\n" * 400
        head = (json.dumps(first_legal(msg)) + "\n").encode()
    write_bytes(head + burst)
    while True:
        write_bytes(burst)


serve("reader-flood", on_request)
