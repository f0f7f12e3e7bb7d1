"""Writes replies before their requests: every reply comes with `count`
(default 2) guessed replies for the next request ids, in the same write, so
they are in the pipe before those requests are sent. `pad=N` pads each guess
with N spaces (still valid JSON)."""

import json

from _botlib import bound_resources, first_legal, options, serve, write_bytes

bound_resources()
opts = options()
count = int(opts.get("count", 2))
pad = " " * int(opts.get("pad", 0))


def on_request(n, msg):
    lines = [first_legal(msg)]
    for k in range(1, count + 1):
        guess = first_legal(msg)
        guess["id"] = msg["id"] + k
        lines.append(guess)
    text = json.dumps(lines[0]) + "\n" + "".join(json.dumps(x) + pad + "\n" for x in lines[1:])
    write_bytes(text.encode())
    return None


serve("reader-early", on_request)
