"""Works in a background thread all the time, its turn or not, and reports at
`game_over` how much work it got done while it was NOT its turn (between its
reply and its next request) and over how much wall time: a bot that computes
on the opponent's time. With `burn=MS` it also burns MS ms of CPU on each
request before answering (its own time).

Report on stderr: `REPORT {"off_turn_work": N, "off_turn_s": S, "on_turn_work": M, "requests": R}`.
"""

import json
import sys
import threading
import time

from _botlib import bound_resources, first_legal, hello, send

bound_resources(cpu_s=60)
opts = dict(arg.partition("=")[::2] for arg in sys.argv[2:])
burn_s = float(opts.get("burn", 0)) / 1000
work = 0


def worker() -> None:
    global work
    while True:
        for _ in range(1000):
            pass
        work += 1
        if work % 20 == 0:
            time.sleep(0)  # let the main thread take the GIL when a line arrives


threading.Thread(target=worker, daemon=True).start()
off_work = on_work = requests = 0
off_s = 0.0
replied_at: tuple[int, float] | None = None
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        hello("idle_worker")
    elif kind == "request":
        now_work, now = work, time.monotonic()
        if replied_at is not None:
            off_work += now_work - replied_at[0]
            off_s += now - replied_at[1]
        requests += 1
        end = time.monotonic() + burn_s
        while time.monotonic() < end:
            pass
        on_work += work - now_work
        send(first_legal(msg))
        replied_at = (work, time.monotonic())
    elif kind == "game_over":
        report = {
            "off_turn_work": off_work,
            "off_turn_s": round(off_s, 4),
            "on_turn_work": on_work,
            "requests": requests,
        }
        sys.stderr.write("REPORT " + json.dumps(report) + "\n")
        sys.stderr.flush()
        off_work = on_work = requests = 0
        off_s = 0.0
        replied_at = None
    elif kind == "bye":
        break
