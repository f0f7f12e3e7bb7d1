"""Process helpers for the tests that count what a match leaves running."""

from __future__ import annotations

from pathlib import Path

from timing import wait_until


def proc_state(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) from /proc, or None if the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    st = proc_state(pid)
    return st is not None and st[0] not in ("Z", "X")  # a zombie has stopped running


def procs_with(marker: str) -> list[int]:
    """Live processes whose command line contains `marker` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_no_procs(marker: str, within: float = 5.0) -> list[int]:
    """Wait until no live process carries `marker` (`within` is scaled:
    tests/timing.py); returns those left."""
    wait_until(lambda: not procs_with(marker), within)
    return procs_with(marker)
