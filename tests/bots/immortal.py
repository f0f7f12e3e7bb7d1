"""Ignores SIGTERM, SIGINT and SIGHUP; plays first-legal (`play=0`: never
answers anything), and after `bye` or end of input keeps sleeping forever.
`child=1` also starts a child that does the same (sleeps forever)."""

import signal
import subprocess
import sys
import time

from _botlib import first_legal, marker, options, serve

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
opts = options()
if opts.get("child") == "1":
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: time.sleep(60)"
    subprocess.Popen(
        [sys.executable, "-c", code, marker(), "child-of-immortal"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
if opts.get("play", "1") == "1":
    serve("immortal", lambda n, msg: first_legal(msg))
else:
    for _line in sys.stdin:
        pass
while True:
    time.sleep(60)
