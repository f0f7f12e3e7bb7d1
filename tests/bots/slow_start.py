"""Spends `sleep` seconds (default 2.5) of work before it can play: before its
`hello` reply (`at=hello`, inside the startup limit) or on its first
`game_start` (`at=game_start`, when no clock runs but the first request may
already be waiting). Then it answers every request with the first legal action."""

import json
import sys
import time

from _botlib import first_legal, hello, marker, options, send

opts = options()
delay = float(opts.get("sleep", 2.5))
at = opts.get("at", "game_start")
marker()
started = False
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        if at == "hello":
            time.sleep(delay)
        hello("slow_start")
    elif kind == "game_start" and at == "game_start" and not started:
        started = True
        sys.stderr.write(f"slow_start: working {delay}s on game_start\n")
        sys.stderr.flush()
        time.sleep(delay)
    elif kind == "request":
        send(first_legal(msg))
    elif kind == "bye":
        break
