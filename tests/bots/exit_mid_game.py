"""Plays first-legal, then exits with status 7 on request `after` (default 3)."""

import os
import sys

from _botlib import first_legal, options, serve

opts = options()
after = int(opts.get("after", 3))


def on_request(n, msg):
    if n >= after:
        sys.stderr.write(f"exit_mid_game: crashing on request {msg['id']}\n")
        sys.stderr.flush()
        os._exit(7)
    return first_legal(msg)


serve("exit-mid-game", on_request)
