"""Writes replies before their requests: every reply comes with `count`
(default 2) guessed replies for the next request ids, in the same write, so
they are in the pipe before those requests are sent."""

import json

from _botlib import bound_resources, first_legal, options, serve, write_bytes

bound_resources()
count = int(options().get("count", 2))


def on_request(n, msg):
    lines = [first_legal(msg)]
    for k in range(1, count + 1):
        guess = first_legal(msg)
        guess["id"] = msg["id"] + k
        lines.append(guess)
    write_bytes("".join(json.dumps(x) + "\n" for x in lines).encode())
    return None


serve("reader-early", on_request)
