"""Spends each decision in one way, for `ms` milliseconds (default 40), then
answers with the first legal action: `how=burn` computes, `how=sleep` waits,
`how=child` starts a child process that computes and waits for it (CPU of a
child, not of the bot's own process). Computing is counted in CPU time, so a
busy machine makes it take longer, not cost less."""

import subprocess
import sys
import time

from _botlib import bound_resources, first_legal, options, serve

bound_resources(cpu_s=60)
opts = options()
how = opts.get("how", "burn")
seconds = float(opts.get("ms", 40)) / 1000
BURN = "import time\nend = time.process_time() + {s}\nwhile time.process_time() < end: pass\n"


def on_request(n, msg):
    if how == "sleep":
        time.sleep(seconds)
    elif how == "child":
        subprocess.run([sys.executable, "-S", "-c", BURN.format(s=seconds)], check=True)
    else:
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
    return first_legal(msg)


serve("cpu_user", on_request)
