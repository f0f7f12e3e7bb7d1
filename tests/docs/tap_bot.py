"""A tap between the referee and a bot: runs the bot in $TAP_BOT (a file, or
a built-in bot's name) and passes
every line through unchanged, writing each to $TAP_TRANSCRIPT as `R: line`
(referee to bot) or `B: line` (bot to referee), in the order they passed.
Where a match seats the same bot twice, every copy is a tap (so the names
stay those of the shown command); only the one the first `game_start` puts
in seat $TAP_SEAT (default 0) records. The documentation's transcripts are
checked against what it records."""

import json
import os
import subprocess
import sys
import threading

from referee.bots import BUILTIN_BOTS

bot = os.environ["TAP_BOT"]
if bot in BUILTIN_BOTS:
    argv = [sys.executable, "-u", "-m", BUILTIN_BOTS[bot].module]
else:
    argv = ["node", bot] if bot.endswith(".js") else [sys.executable, "-u", bot]
child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
record = open(os.environ["TAP_TRANSCRIPT"], "a", buffering=1)  # noqa: SIM115 - open for the process's life
lock = threading.Lock()
seat = int(os.environ.get("TAP_SEAT", "0"))
held: list[str] = []  # lines before the first game_start
state = {"decided": False, "records": False}


def write(prefix: str, line: str) -> None:
    text = f"{prefix}: {line.rstrip(chr(10))}\n"
    with lock:
        if state["decided"]:
            if state["records"]:
                record.write(text)
            return
        held.append(text)
        if prefix == "R" and '"game_start"' in line and json.loads(line).get("type") == "game_start":
            state["decided"], state["records"] = True, json.loads(line)["seat"] == seat
            if state["records"]:
                record.writelines(held)


def to_bot() -> None:
    for line in sys.stdin:
        write("R", line)
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except BrokenPipeError:
            return
    child.stdin.close()


threading.Thread(target=to_bot, daemon=True).start()
for line in child.stdout:
    write("B", line)
    sys.stdout.write(line)
    sys.stdout.flush()
sys.exit(child.wait())
