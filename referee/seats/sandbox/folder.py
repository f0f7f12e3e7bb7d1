"""A bot's folder as its sandbox shows it: a read-only copy, made once per digest.

A sandbox shows the bot's folder at `/bot`, and a bot can read where each
of its mounts comes from (`/proc/self/mountinfo` names the host folder
behind every bind). So the folder shown is a copy in the referee's staging
folder (`files.stage`, removed when the referee exits), and the
bot's real folder, which may name a user, a home or the referee's own
checkout, stays off everything the bot can read. A copy is:

- made once per digest of the folder's files: a match or a tournament that
  starts the bot many times copies it once; an edited folder is copied
  again. It is a snapshot, as the engine's copy is;
- readable by the seats and by nobody else. As root each running seat is a
  uid of its own; the copy belongs to root and a group every seat carries
  (`SEAT_GROUP`, far above any account) and is closed to others, so a bot
  that was private on the host (a bot in `/home/ann/mybot`, `/home/ann` mode 700,
  which a seat's uid could not read at all) stays private from the host's
  other users. As a user, it is that user's alone (the sandbox maps the bot
  to that user);
- bounded: a folder of more than `MAX_COPY_BYTES` or `MAX_COPY_ENTRIES` is
  not copied. A folder the seats can read is then shown as it is; one they
  cannot is refused with one line, before anything runs.

Only folders, regular files and links are copied (links as links: inside
the sandbox they resolve among the sandbox's own files).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from referee.errors import SandboxUnavailable
from referee.seats.sandbox.files import stage

SEAT_GROUP = 2_099_999_999  # a gid of no account: every seat's, and the copies' group
MAX_COPY_BYTES = 64 << 20
MAX_COPY_ENTRIES = 10_000
_CHUNK = 1 << 20


def blocked_for_seats(path: Path) -> str:
    """'' if a uid of no group can reach `path`, else the first folder (or the
    file) that stops it."""
    for folder in [*reversed(path.parents), path]:
        try:
            mode = folder.stat().st_mode
        except OSError:
            return str(folder)
        if folder == path:
            need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        else:
            need = stat.S_IXOTH
        if mode & need != need:
            return str(folder)
    return ""


def needs_copy(program: Path) -> str:
    """Why the seats cannot read the folder of `program` as it is ('' if they can)."""
    if os.geteuid() != 0:
        return ""  # as a user, the user namespace maps the bot to the referee's own user
    return blocked_for_seats(program) or blocked_for_seats(program.parent)


@dataclass(frozen=True)
class _Entry:
    relative: str
    kind: str  # "dir", "file" or "link"
    mode: int
    size: int
    mtime_ns: int
    inode: int


def _entries(folder: Path) -> list[_Entry] | None:
    """Every folder, file and link below `folder`, parents before children;
    None as soon as it holds more than the copy's bounds."""
    found: list[_Entry] = []
    size = 0
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue  # gone meanwhile
            kind = (
                "dir"
                if stat.S_ISDIR(st.st_mode)
                else "file"
                if stat.S_ISREG(st.st_mode)
                else "link"
                if stat.S_ISLNK(st.st_mode)
                else ""
            )
            if not kind:
                continue  # sockets, pipes, devices: nothing a bot reads as a file
            size += st.st_size if kind == "file" else 0
            found.append(_Entry(os.path.relpath(path, folder), kind, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino))
            if len(found) > MAX_COPY_ENTRIES or size > MAX_COPY_BYTES:
                return None
    return found


def too_large(folder: Path, name: str, why: str) -> SandboxUnavailable:
    size = f"{MAX_COPY_BYTES >> 20} MiB" if MAX_COPY_BYTES >= 1 << 20 else f"{MAX_COPY_BYTES >> 10} KiB"
    return SandboxUnavailable(
        f"bot {name!r}: {why} cannot be read by other users (a sandboxed seat's uid), and its folder {folder} "
        f"is too large to copy (more than {size} or "
        f"{MAX_COPY_ENTRIES:,} files and folders); make the folder readable by all (chmod o+rx) or give the bot "
        "a smaller folder of its own"
    )


class _Copies:
    """The copies this referee made, by digest, and which folder state made which."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_state: dict[tuple[str, tuple[_Entry, ...]], Path] = {}
        self.too_large: set[str] = set()  # folders past the bounds (walked once, not at every start)
        self.made = 0  # copies made (a second start of an unchanged folder makes none)

    def shown(self, folder: Path, name: str) -> Path | None:
        """The copy of `folder` as it is now, made if this state of it has
        none; None if the folder is too large to copy."""
        with self.lock:
            if str(folder) in self.too_large:
                return None
            entries = _entries(folder)
            if entries is None:
                self.too_large.add(str(folder))
                return None
            key = (str(folder), tuple(entries))
            copy = self.by_state.get(key)
            if copy is None or not copy.is_dir():
                copy = self._copy(folder, entries, name)
                self.by_state[key] = copy
            return copy

    def _copy(self, folder: Path, entries: list[_Entry], name: str) -> Path:
        base = stage() / "bots"
        try:
            if not base.is_dir():
                base.mkdir()
                _restrict(base, 0o710)
            part = Path(tempfile.mkdtemp(prefix=".part-", dir=base))
            digest = _copy_tree(folder, part, entries)
            final = base / digest
            if final.is_dir():  # the same files under another state (a touched file): one copy per digest
                shutil.rmtree(part, ignore_errors=True)
            else:
                _restrict(part, 0o750)
                part.rename(final)
                self.made += 1
        except OSError as exc:
            raise SandboxUnavailable(
                f"bot {name!r}: cannot copy its folder {folder} for its sandbox: {exc.strerror or exc}"
            ) from exc
        return final


def _copy_tree(folder: Path, dest: Path, entries: list[_Entry]) -> str:
    """Copy the entries into `dest`, readable by the seats alone; the digest of what was copied."""
    digest = hashlib.sha256()
    budget = MAX_COPY_BYTES
    for entry in entries:
        source, target = folder / entry.relative, dest / entry.relative
        digest.update(f"{entry.kind}\0{entry.relative}\0{entry.mode & 0o111:o}\0".encode())
        if entry.kind == "dir":
            target.mkdir(mode=0o700)
        elif entry.kind == "link":
            link = os.readlink(source)
            digest.update(link.encode(errors="surrogateescape"))
            os.symlink(link, target)
        else:
            content = hashlib.sha256()
            with open(source, "rb", buffering=0) as src, open(target, "xb") as out:
                while chunk := src.read(min(_CHUNK, budget + 1)):
                    budget -= len(chunk)
                    if budget < 0:  # it grew while being copied
                        raise OSError(f"{source} grew past the copy's limit while it was copied")
                    content.update(chunk)
                    out.write(chunk)
            digest.update(content.digest())
        if entry.kind != "link":
            _restrict(target, 0o750 if entry.kind == "dir" or entry.mode & stat.S_IXUSR else 0o640)
    return digest.hexdigest()[:32]


def _restrict(path: Path, mode: int) -> None:
    """Root and the seats' group may read it (as root); the referee's user alone (as a user)."""
    if os.geteuid() == 0:
        os.chown(path, 0, SEAT_GROUP)
        os.chmod(path, mode)
    else:
        os.chmod(path, mode & 0o700)


COPIES = _Copies()


def shown_folder(program: Path, name: str) -> tuple[Path, bool]:
    """(the folder to show at /bot, whether it is a copy) for the bot whose program is `program`."""
    copy = COPIES.shown(program.parent, name)
    if copy is not None:
        return copy, True
    why = needs_copy(program)
    if why:  # fail closed: never a folder the seat cannot read, never a partial copy
        raise too_large(program.parent, name, why)
    return program.parent, False


def check_folder(program: Path, name: str) -> str:
    """Before any start: '' if nothing is worth saying about the bot's folder,
    else the one line that says a copy is all its uid can read.
    SandboxUnavailable if that folder is too large to copy."""
    why = needs_copy(program)
    if not why:
        return ""
    folder = program.parent
    if _entries(folder) is None:
        raise too_large(folder, name, why)
    return (
        f"bot {name!r}: {why} cannot be read by other users, so its sandbox shows it a read-only copy of "
        f"{folder} (made once, removed when the referee exits)"
    )
