"""Starts a child in a new session (so outside the bot's process group) that
keeps the bot's stderr open and sleeps; then plays first-legal. The referee
cannot kill such a child by group, but must not hang waiting for its stderr.
The child's pid is appended to `children=PATH`."""

import subprocess
import sys

from _botlib import first_legal, marker, options, serve

opts = options()
child = subprocess.Popen(
    [sys.executable, "-c", "import time\nwhile True: time.sleep(60)", marker(), "escaped-child"],
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    start_new_session=True,
)
if "children" in opts:
    with open(opts["children"], "a") as fh:
        fh.write(f"{child.pid}\n")
serve("escaper", lambda n, msg: first_legal(msg))
