"""A watchdog that kills bot process groups if the referee itself dies.

Bots live in their own process groups, which the referee kills when a match
ends. If the referee is killed with SIGKILL it cannot do that, so at start-up
it spawns this tiny guardian and tells it, over a pipe, each group it opens
(`+PGID TAG`) and closes (`-PGID`). When the pipe hits end-of-file (the
referee is gone, however it died) the guardian kills every group still
registered, and every process carrying a registered bot's environment tag
(children that left their group; see `bot_process`).
A parent-death signal cannot do this job: trio spawns children from worker
threads, and the signal fires when that thread exits.
"""

from __future__ import annotations

import atexit
import subprocess
import sys
import threading

TAG_VARIABLE = "CHICAGO_REFEREE_BOT"  # names the tag in each bot's environment

_GUARD_SOURCE = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups = {}
for line in sys.stdin:
    words = line.split()
    if words and words[0][:1] == "+":
        groups[int(words[0][1:])] = words[1] if len(words) > 1 else ""
    elif words and words[0][:1] == "-":
        groups.pop(int(words[0][1:]), None)
for g in groups:
    try:
        os.killpg(g, signal.SIGKILL)
    except OSError:
        pass
needles = [("%s=%s\0" % (sys.argv[1], t)).encode() for t in groups.values() if t]
for _ in range(5 if needles else 0):
    left = 0
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as fh:
                env = fh.read()
        except OSError:
            continue
        if any(n in env for n in needles):
            left += 1
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    if not left:
        break
"""


class Guardian:
    """Registers bot process groups with the watchdog process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def _pipe(self) -> subprocess.Popen[bytes] | None:
        if self._proc is None or self._proc.poll() is not None:
            try:
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", _GUARD_SOURCE, TAG_VARIABLE],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    close_fds=True,
                )
            except OSError:
                self._proc = None
        return self._proc

    def _send(self, line: str) -> None:
        with self._lock:
            proc = self._pipe()
            if proc is None or proc.stdin is None:
                return
            try:
                proc.stdin.write(line.encode() + b"\n")
                proc.stdin.flush()
            except OSError:
                self._proc = None

    def watch(self, pgid: int, tag: str = "") -> None:
        self._send(f"+{pgid} {tag}")

    def release(self, pgid: int) -> None:
        self._send(f"-{pgid}")

    def close(self) -> None:
        """Normal exit: nothing is registered any more; let the guardian go."""
        with self._lock:
            if self._proc is not None and self._proc.stdin is not None:
                try:
                    self._proc.stdin.close()
                    self._proc.wait(timeout=2)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._proc = None


GUARDIAN = Guardian()
atexit.register(GUARDIAN.close)
