"""The one command that installs a system package on this machine.

A sandboxed run that refuses to start because bubblewrap (or prlimit, or the
system Python) is missing should say how to get it in the same line, in the
words of the machine's own package manager, read from `/etc/os-release`.
"""

from __future__ import annotations

import functools
from pathlib import Path

# By distribution family (os-release's ID and ID_LIKE): the install command.
MANAGERS = (
    (("debian", "ubuntu"), "apt-get install"),
    (("fedora", "rhel", "centos", "rocky", "almalinux"), "dnf install"),
    (("arch",), "pacman -S"),
    (("alpine",), "apk add"),
    (("opensuse", "suse", "sles"), "zypper install"),
)
# Where a package's name differs from Debian's.
NAMES = {("util-linux", "alpine"): "util-linux-misc"}


def os_release(path: Path = Path("/etc/os-release")) -> dict[str, str]:
    """The fields of os-release(5) (empty when the file is missing or unreadable)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    fields = {}
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip():
            fields[key.strip()] = value.strip().strip("\"'")
    return fields


@functools.cache
def _family() -> tuple[str, str] | None:
    """(family, install command) of this machine, or None for one we do not know."""
    return family_of(os_release())


def family_of(release: dict[str, str]) -> tuple[str, str] | None:
    ids = [release.get("ID", "").lower(), *release.get("ID_LIKE", "").lower().split()]
    for family, command in MANAGERS:
        for known in ids:
            if any(known == name or known.startswith(name + "-") for name in family):
                return family[0], command
    return None


def install_hint(package: str, release: dict[str, str] | None = None) -> str:
    """`install bubblewrap: apt-get install bubblewrap` (this machine's package
    manager), or the package name alone where the manager is unknown."""
    found = family_of(release) if release is not None else _family()
    if found is None:
        return f"install {package} with this system's package manager"
    family, command = found
    return f"install {package}: {command} {NAMES.get((package, family), package)}"
