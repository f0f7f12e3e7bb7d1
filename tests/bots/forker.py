"""Starts a child that sleeps forever, then plays first-legal.

mode=child: a direct child (python -c sleep MARKER).
mode=shell: `sh -c "python ... &"`: the shell exits at once, so the sleeper
is an orphaned grandchild (re-parented away from the bot).
The sleeper's pid is appended to `children=PATH` when given.
"""

import shlex
import subprocess
import sys
import time

from _botlib import first_legal, marker, options, serve

opts = options()
mode = opts.get("mode", "child")
sleeper = [sys.executable, "-c", "import time\nwhile True: time.sleep(60)", marker(), "child-of-forker"]
if mode == "child":
    child = subprocess.Popen(sleeper, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    pid = child.pid
else:
    out = subprocess.run(
        ["/bin/sh", "-c", shlex.join(sleeper) + " >/dev/null </dev/null 2>&1 & echo $!"],
        stdout=subprocess.PIPE,
        check=True,
        text=True,
    )
    pid = int(out.stdout.strip())
if "children" in opts:
    with open(opts["children"], "a") as fh:
        fh.write(f"{pid}\n")
time.sleep(0.05)
serve("forker", lambda n, msg: first_legal(msg))
