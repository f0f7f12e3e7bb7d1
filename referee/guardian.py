"""A watchdog that kills bot process groups if the referee itself dies.

Bots live in their own process groups, which the referee kills when a match
ends. If the referee is killed with SIGKILL it cannot do that, so at start-up
it spawns this tiny guardian and tells it, over a pipe, each group it opens
(`+PGID`) and closes (`-PGID`). When the pipe hits end-of-file (the referee
is gone, however it died) the guardian kills every group still registered.
A parent-death signal cannot do this job: trio spawns children from worker
threads, and the signal fires when that thread exits.
"""

from __future__ import annotations

import atexit
import subprocess
import sys
import threading

_GUARD_SOURCE = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    line = line.strip()
    if line[:1] == "+":
        groups.add(int(line[1:]))
    elif line[:1] == "-":
        groups.discard(int(line[1:]))
for g in groups:
    try:
        os.killpg(g, signal.SIGKILL)
    except OSError:
        pass
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
                    [sys.executable, "-I", "-S", "-c", _GUARD_SOURCE],
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

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}")

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
