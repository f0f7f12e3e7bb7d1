"""Answers its first request with 10 MB of 'x' and no newline, then waits."""

import sys
import time

from _botlib import options, serve

options()


def on_request(n, msg):
    sys.stdout.write("LONGLINE" + "x" * (10 * 1024 * 1024))
    sys.stdout.flush()  # blocks once the referee stops reading: fine
    time.sleep(600)


serve("long-line", on_request)
