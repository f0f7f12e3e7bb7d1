"""Hostile: on its first request it forks children that sleep, until a fork
is refused; the refusal is not caught, so it dies. The sandbox's process
limit must stop it, the bot must be charged `process_limit`, and no child
may outlive the match."""

import os
import time

from _botlib import marker, options, serve

options()


def bomb(n: int, msg: dict) -> None:
    while True:
        if os.fork() == 0:
            time.sleep(120)
            os._exit(0)


serve(f"fork-bomb {marker()}", bomb)
