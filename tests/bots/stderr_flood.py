"""Plays first-legal while writing megabytes to stderr (never reads it back)."""

import sys

from _botlib import first_legal, options, serve

opts = options()
per_request = int(opts.get("bytes", 256 * 1024))
chunk = ("stderr-flood " * 80 + "\n").encode()
total = 0


def flood(n_bytes: int) -> None:
    global total
    written = 0
    while written < n_bytes:
        sys.stderr.buffer.write(chunk)
        written += len(chunk)
    sys.stderr.buffer.flush()
    total += written


flood(4 * 1024 * 1024)


def on_request(n, msg):
    flood(per_request)
    return first_legal(msg)


serve("stderr-flood", on_request)
sys.stderr.write(f"stderr_flood: wrote {total} bytes in all\n")
