"""The compilers and interpreters this machine offers a bot's build and run.

An arena builds bots with the machine's own toolchains (no network in the
sandbox, nothing downloaded), so the languages a competition takes are the
ones found here; `doctor` lists them so a host can say so up front.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Collection
from dataclasses import dataclass

# (name, command that prints its version); the first line mentioning a version is kept.
PROBES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("python3", ("python3", "--version")),
    ("node", ("node", "--version")),
    ("cc", ("cc", "--version")),
    ("c++", ("c++", "--version")),
    ("go", ("go", "version")),
    ("rustc", ("rustc", "--version")),
    ("cargo", ("cargo", "--version")),
    ("java", ("java", "-version")),
    ("javac", ("javac", "-version")),
)
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")


@dataclass(frozen=True)
class Toolchain:
    name: str
    path: str | None  # None: not installed
    version: str | None  # the line that says which, when it ran

    @property
    def found(self) -> bool:
        return self.path is not None and self.version is not None


def _version_line(argv: tuple[str, ...]) -> str | None:
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=20, errors="replace", check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (run.stdout + "\n" + run.stderr).splitlines()
    return next((ln.strip() for ln in lines if _VERSION.search(ln)), None)


def probe_toolchains(names: Collection[str] | None = None, path: str | None = None) -> list[Toolchain]:
    """Each known toolchain (or those of `names`): where it is and the version
    it reports (None when absent or broken). `path` searches another PATH than
    this process's: the sandbox's, where a build finds its tools."""
    found = []
    for name, argv in PROBES:
        if names is not None and name not in names:
            continue
        program = shutil.which(argv[0], path=path)
        version = _version_line((program, *argv[1:])) if program else None
        found.append(Toolchain(name=name, path=program, version=version))
    return found


def summary(chains: list[Toolchain]) -> str:
    """One line: what is there (with versions) and what is not."""
    have = [f"{t.name} {_short(t.version)}" for t in chains if t.found]
    missing = [t.name for t in chains if not t.found]
    text = ", ".join(have) if have else "none"
    return text + (f"; not found: {', '.join(missing)}" if missing else "")


def _short(line: str | None) -> str:
    m = _VERSION.search(line or "")
    return m.group(0) if m else "?"
