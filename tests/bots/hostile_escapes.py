"""Hostile: plays first-legal while leaving processes behind that try to
outlive the match: `mode=pidhop` a child that moves to a new pid every
millisecond (fork, parent exits); `mode=daemon` a double-forked daemon in
its own session with its standard streams closed. Each is bounded (60 s)."""

import os
import time

from _botlib import first_legal, marker, options, serve

opts = options()
mode = opts.get("mode", "pidhop")
if os.fork() == 0:
    end = time.time() + 60
    if mode == "daemon":
        os.setsid()
        if os.fork():
            os._exit(0)
        for fd in (0, 1, 2):
            os.close(fd)
        while time.time() < end:
            time.sleep(0.1)
    else:
        while time.time() < end:
            if os.fork():
                os._exit(0)
            time.sleep(0.001)
    os._exit(0)
serve(f"escapes {marker()}", lambda n, msg: first_legal(msg))
