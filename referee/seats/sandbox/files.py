"""What a sandbox shows of the host's files, prepared once per referee.

A bot sees the system folders read-only (`/usr` and the `/bin`, `/lib`
links), a few files of `/etc` that programs need to start (the dynamic
linker's cache, time zone, user names, CA certificates, a JDK's
configuration: what other users may read of it), and, for Python
bots, a library folder with the `protocol` SDK, `msgspec`, the pure rules
engine and the built-in bots: `referee/__init__.py`, `referee/errors.py`,
`referee/games/` and `referee/bots/` (which import only those). Nothing else
of `referee/` (no tournament, logs, seeding or sandbox code), and nothing of
the virtual environment beyond msgspec.

The `/etc` files and the library are copied once per referee into a
folder of its own (readable by all, writable by the referee only) and each
is shown with one read-only bind: every bind costs bubblewrap a mount and a
read of the mount table, and eleven of them were a good part of a sandbox's
start-up. A copy is also a snapshot: a bot sees the engine the referee runs,
even if the source changes during a tournament. The folder is removed when
the referee exits (and, if it was killed, by its guardian, or else by the
next referee).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec

import protocol
import referee
from referee.errors import SandboxUnavailable

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "alternatives",
    "nsswitch.conf",
    "passwd",
    "group",
    "ssl",
)  # under /etc
SYSTEM_GLOBS = ("java-*-openjdk",)  # under /etc: a JDK's configuration (Debian's JDKs read it there)
ENGINE_FILES = ("__init__.py", "errors.py", "games", "bots")  # of referee/: the rules, the built-in bots, their imports
STAGE_PREFIX = "chicago-referee-files-"
_SKIP = shutil.ignore_patterns("private", "*.pyc.*")  # /etc/ssl/private holds keys; half-written bytecode


def system_binds() -> list[str]:
    """bwrap arguments for the system folders (binds, or links as the host has them)."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def _world_readable(folder: str, names: list[str]) -> set[str]:
    """copytree's ignore: what other users may not read on the host (a password file) is not copied."""
    skipped = set(_SKIP(folder, names))
    for name in names:
        try:
            if not os.lstat(os.path.join(folder, name)).st_mode & 0o004:
                skipped.add(name)
        except OSError:
            skipped.add(name)
    return skipped


def _copy(source: Path, dest: Path, ignore: Callable[[str, list[str]], set[str]] = _SKIP) -> None:
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, dest, symlinks=True, ignore=ignore)
    else:
        shutil.copy2(source, dest, follow_symlinks=False)


def _open_up(folder: Path) -> None:
    """Readable by every seat's uid, writable by the referee alone."""
    for root, _dirs, files in os.walk(folder):
        os.chmod(root, 0o755)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o644 | (os.stat(path).st_mode & 0o111))


def remove_stale_stages() -> None:
    """Remove the folders of referees that were killed (named by their pid)."""
    base = Path(tempfile.gettempdir())
    for path in base.glob(f"{STAGE_PREFIX}*"):
        pid = path.name.removeprefix(STAGE_PREFIX).split("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(path, ignore_errors=True)


@functools.cache
def stage() -> Path:
    """The folder with `etc/` and `lib/`, made on first use."""
    remove_stale_stages()
    folder = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, True)
    try:
        etc = folder / "etc"
        etc.mkdir()
        for name in SYSTEM_FILES:
            source = Path("/etc") / name
            if source.exists() or source.is_symlink():
                _copy(source, etc / name)
        for pattern in SYSTEM_GLOBS:
            for source in sorted(Path("/etc").glob(pattern)):
                _copy(source, etc / source.name, _world_readable)
        lib = folder / "lib"
        (lib / "referee").mkdir(parents=True)
        for module in (protocol, msgspec):
            _copy(Path(module.__file__ or "").resolve().parent, lib / module.__name__)
        engine = Path(referee.__file__).resolve().parent
        for name in ENGINE_FILES:
            _copy(engine / name, lib / "referee" / name)
        _open_up(folder)
    except OSError as exc:
        raise SandboxUnavailable(
            f"cannot prepare the files a sandbox shows in {folder}: {exc.strerror or exc}"
        ) from exc
    return folder


def etc_binds() -> list[str]:
    return ["--ro-bind", str(stage() / "etc"), "/etc"]


def lib_binds(lib_dir: str) -> list[str]:
    """The library folder for Python bots: protocol, msgspec, the pure engine, the built-in bots."""
    return ["--ro-bind", str(stage() / "lib"), lib_dir]
