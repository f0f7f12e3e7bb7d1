"""The files a bot is made of, by digest: the same bot on every worker.

On a cluster the coordinator does not ship programs; the workers reach the
bots by a shared path (a network folder, or the same checkout on every
machine). A stale or edited copy on one worker would quietly play another
bot under the same name, so the coordinator hashes each bot's files before
the tournament and every worker hashes its own copy before it plays a game
of that bot, refusing the game when the two differ.

What is hashed: the bot's folder (`dir` in the config) when it has one,
every file in it (hidden files and `__pycache__` aside); otherwise the files
its command names (the script; the program itself only when it lies in the
bot's working folder, so an interpreter is the machine's, not the bot's).
Digests are cached per process by the files' identities, sizes and times, and a
worker's check of a bot (the same command, folder and digest, game after
game) by the identity, size and times of every file and folder it looked
at: one `stat` each, not a walk and a path resolution per game. A changed,
added, removed or replaced file changes one of those (an added or removed
file its folder's), so the next game of that bot hashes again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from referee.errors import ClusterError, ConfigError

MAX_BOT_BYTES = 1 << 30  # a bot folder larger than 1 GiB is surely the wrong folder
_SKIP = {"__pycache__", "node_modules/.cache"}

_cache: dict[tuple[str, tuple[tuple[str, int, int, int, int], ...]], str] = {}
Looked = tuple[tuple[int, int, int, int, int] | None, ...]  # per path: device, inode, size, mtime, ctime
_checked: dict[tuple[tuple[str, ...], str, str | None, str], tuple[tuple[Path, ...], Looked]] = {}


def _folder_files(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP)
        for name in sorted(files):
            if not name.startswith("."):
                yield Path(root) / name


def bot_files(argv: Sequence[str], cwd: str | None, folder: str | None) -> list[Path]:
    """The files that make up a bot, in a fixed order."""
    if folder is not None:
        return list(_folder_files(Path(folder)))
    base = Path(cwd) if cwd else Path.cwd()
    out = []
    for i, word in enumerate(argv):
        path = (base / word).resolve()
        if i == 0 and base.resolve() not in path.parents:
            continue  # an interpreter (python3, node): the machine's, not the bot's
        if path.is_file():
            out.append(path)
    return out


def files_digest(argv: Sequence[str], cwd: str | None, folder: str | None) -> str:
    """sha256 over the bot's files: their names (relative to the folder) and contents."""
    files = bot_files(argv, cwd, folder)
    try:
        stats = tuple((str(p), (st := p.stat()).st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) for p in files)
    except OSError as exc:
        raise ConfigError(f"cannot read the bot's file {exc.filename}: {exc.strerror}") from None
    if sum(s[2] for s in stats) > MAX_BOT_BYTES:
        raise ConfigError(f"the bot's files in {folder or cwd} hold more than 1 GiB: is `dir` the right folder?")
    key = (folder or "", stats)
    cached = _cache.get(key)
    if cached is not None:
        return cached
    h = hashlib.sha256()
    for path in files:
        name = os.path.relpath(path, folder) if folder is not None else path.name
        h.update(name.encode() + b"\0")
        try:
            h.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError as exc:
            raise ConfigError(f"cannot read the bot's file {path}: {exc.strerror}") from None
    digest = h.hexdigest()
    _cache[key] = digest
    return digest


def _watched(argv: Sequence[str], cwd: str | None, folder: str | None) -> tuple[Path, ...]:
    """What a bot's digest depends on: its folder's folders and files, or its
    command's words as written (a word that is no file yet counts too: it may become one)."""
    if folder is not None:
        dirs = []
        for root, subdirs, _files in os.walk(folder):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and d not in _SKIP)
            dirs.append(Path(root))
        return (*dirs, *_folder_files(Path(folder)))
    base = Path(cwd) if cwd else Path.cwd()
    return (base, *(base / word for word in argv))


def _look(paths: Sequence[Path]) -> Looked:
    out: list[tuple[int, int, int, int, int] | None] = []
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            out.append(None)
        else:
            out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def check_same_files(
    name: str, argv: Sequence[str], cwd: str | None, folder: str | None, want: str, worker: str
) -> None:
    """Refuse to play a bot whose files on this worker differ from the coordinator's."""
    key = (tuple(argv), cwd or os.getcwd(), folder, want)
    seen = _checked.get(key)
    if seen is not None and _look(seen[0]) == seen[1]:
        return  # nothing it is made of changed since its files matched
    try:
        watched = _watched(argv, cwd, folder)
        looked = _look(watched)
        got = files_digest(argv, cwd, folder)
    except ConfigError as exc:
        raise ClusterError(
            f"worker {worker}: bot {name!r}: {exc}; every worker needs the bots at the same paths as the coordinator"
        ) from None
    if got != want:
        where = folder or " ".join(argv)
        raise ClusterError(
            f"worker {worker}: bot {name!r} at {where} differs from the coordinator's copy (sha256 {got[:12]} "
            f"here, {want[:12]} there): give every worker the same files (a shared folder, or the same checkout)"
        )
    if _look(watched) == looked:  # not changed while it was hashed
        _checked[key] = (watched, looked)
