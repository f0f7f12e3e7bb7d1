"""At its very first instructions, before any protocol: how many processes it
can start, and which cgroups it is in, reported as one JSON line on stdout;
then it waits for stdin to close.

It forks until a fork is refused (at most 40 children). Each child waits on a
pipe whose writer only the bot holds, so the children leave when the bot
does. argv[1] is a marker the tests look for in /proc/*/cmdline.
"""

import os

reader, writer = os.pipe()
children, refused = 0, ""
for _ in range(40):
    try:
        pid = os.fork()
    except OSError as exc:
        refused = type(exc).__name__
        break
    if pid == 0:
        os.close(writer)
        os.read(reader, 1)  # end-of-file once the bot is gone
        os._exit(0)
    children += 1

import json  # noqa: E402 - after the forks: they come first
import sys  # noqa: E402

with open("/proc/self/cgroup") as fh:
    groups = fh.read().splitlines()
print(json.dumps({"children": children, "refused": refused, "cgroup": groups}), flush=True)
sys.stdin.read()
