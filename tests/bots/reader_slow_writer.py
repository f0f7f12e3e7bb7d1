"""Writes its replies slowly. `mode=pieces`: every reply in `pieces` parts
(default 4) with `pause` seconds (default 0.05) between them, well within the
limit. `mode=drip`: request `on` (default 1) gets its reply one byte every
`pause` seconds (default 0.1), far past any limit."""

import json
import time

from _botlib import bound_resources, first_legal, options, serve, write_bytes

bound_resources()
opts = options()
mode = opts.get("mode", "pieces")
pieces = int(opts.get("pieces", 4))
on = int(opts.get("on", 1))
pause = float(opts.get("pause", 0.05 if mode == "pieces" else 0.1))


def on_request(n, msg):
    data = (json.dumps(first_legal(msg)) + "\n").encode()
    if mode == "pieces":
        size = -(-len(data) // pieces)
        parts = [data[i : i + size] for i in range(0, len(data), size)]
    elif n == on:
        parts = [data[i : i + 1] for i in range(len(data))]
    else:
        parts = [data]
    for i, part in enumerate(parts):
        if i:
            time.sleep(pause)
        write_bytes(part)
    return None


serve("reader-slow-writer", on_request)
