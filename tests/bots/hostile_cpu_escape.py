"""Hostile: starts a child that leaves for a session of its own, clears its
environment and sleeps; then burns CPU in its first decision until the CPU
limit stops it (`cpu_limit`). The escaped child must not survive the match."""

import subprocess
import sys
import time

from _botlib import marker, options, serve

options()
child = subprocess.Popen(
    [sys.executable, "-c", "import os, time\nos.environ.clear()\ntime.sleep(120)", marker(), "escaped"],
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    start_new_session=True,
    env={},
)
print(f"REPORT child={child.pid}", file=sys.stderr, flush=True)


def burn(n: int, msg: dict) -> None:
    end = time.time() + 120  # bounded even if no limit stopped it
    while time.time() < end:
        pass


serve(f"cpu-escape {marker()}", burn)
