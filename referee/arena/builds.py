"""Builds: a submitted archive becomes a built, read-only bot folder and the
command that runs it, or one line that says why it could not.

The steps: unpack the archive (`archives.unpack`, hostile input) into a
writable working copy, find its recipe (`recipes`), run its build command
in the sandbox (`build_sandbox`: no network, the system's toolchains only,
the arena's `[builds]` limits), then copy what it left into the arena's
`builds/` for every later game, and record the outcome.

Keyed by the archive's sha256, in the arena's `builds/`: `<sha256>/` the
built folder, `<sha256>.log` the build's output (for its owner), and
`<sha256>.json` the recipe and the outcome, written last, atomically, once
the folder is on disk. So a game is never rebuilt to be replayed: a sha256
with a record is never built again (a failure neither), and one without (a
build killed midway, a referee killed) is cleaned and built again. The
built folder holds folders (0o755) and regular files (0o644, or 0o755 if
executable) of the referee's own user and nothing else: links the build
made are left out (the game sandbox must never be pointed at a host file),
so `run_spec` hands the game sandbox a folder it copies and shows at `/bot`
read-only, as any bot's.

The working copy lives in the referee's staging folder (`files.stage`,
which every build uid can reach, removed when the referee exits or by its
guardian if it is killed), owned by the build's uid as root. `build`
blocks: call it on a thread. It raises SandboxUnavailable or OSError for
what is the machine's fault rather than the bot's (no sandbox, no cgroup,
a full disk), and records nothing then: call it again once that is fixed.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.arena.archives import ArchiveLimits, unpack
from referee.arena.build_sandbox import DISK_FLOOR_BYTES, amount, free_bytes, run_build
from referee.arena.config import BuildLimits
from referee.arena.recipes import Recipe, find_recipe
from referee.arena.store import sync_folder
from referee.errors import BotStartError, SubmissionRefused
from referee.seats.bot_command import BotSpec
from referee.seats.sandbox import SANDBOX_PATH, SandboxLimits, require_sandbox
from referee.seats.sandbox.command import MiB
from referee.seats.sandbox.files import stage
from referee.seats.sandbox.running import SEAT_UIDS
from referee.tournament.bot_files import files_digest
from referee.visible import visible

RECORD_FORMAT = 1
MAX_BUILT_BYTES = 1 << 30  # what a build may leave in its folder
MAX_BUILT_ENTRIES = 100_000
_COPY_CHUNK = 1 << 20
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class BuildResult:
    """What became of one archive: a built folder and its recipe, or a reason."""

    ok: bool
    reason: str | None  # one line, when not ok
    recipe: Recipe | None
    folder: Path | None  # the built folder, when ok
    log_path: Path | None  # the build's output, when a build command ran
    seconds: float
    files_sha256: str | None = None  # the built folder's files (`files_digest`), checked by cluster workers


def build(
    archive: Path, sha256: str, arena_folder: Path, limits: BuildLimits, archive_limits: ArchiveLimits
) -> BuildResult:
    """Build the bot in `archive` (whose sha256 is `sha256`) into the arena's
    `builds/`, or return the result recorded for it. Blocking."""
    if not _SHA256.match(sha256):
        raise ValueError(f"not a sha256 in hex: {sha256!r}")
    builds = arena_folder / "builds"
    builds.mkdir(exist_ok=True)
    with open(archive, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # one build of an archive at a time, across threads and processes
        recorded = recorded_build(arena_folder, sha256)
        if recorded is not None:
            return recorded
        _clear(builds, sha256)
        result = _build(archive, sha256, builds, limits, archive_limits, time.monotonic())
        _record(builds, sha256, result)
        return result


def recorded_build(arena_folder: Path, sha256: str) -> BuildResult | None:
    """The result recorded for `sha256`, or None if there is none (or it is
    unreadable, or its built folder is gone: it will be built again)."""
    builds = arena_folder / "builds"
    try:
        data = json.loads((builds / f"{sha256}.json").read_text(encoding="utf-8"))
        if data.get("format") != RECORD_FORMAT:
            return None
        recipe = Recipe.from_dict(data["recipe"]) if data["recipe"] is not None else None
        folder = builds / sha256 if data["ok"] else None
        if folder is not None and not folder.is_dir():
            return None
        return BuildResult(
            ok=bool(data["ok"]),
            reason=data["reason"],
            recipe=recipe,
            folder=folder,
            log_path=builds / f"{sha256}.log" if data["log"] else None,
            seconds=float(data["seconds"]),
            files_sha256=data.get("files") or (_files_sha256(folder) if folder is not None else None),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def run_spec(result: BuildResult, name: str, sandbox: SandboxLimits) -> BotSpec:
    """The `BotSpec` that plays a built bot in the game sandbox: the recipe's
    argv with its program (the first word naming a file of the built folder)
    made absolute, the built folder as cwd."""
    if not result.ok or result.folder is None or result.recipe is None:
        raise BotStartError(f"bot {name!r} has no build to run: {result.reason or 'it was not built'}")
    argv = list(result.recipe.run)
    for i, word in enumerate(argv):
        if not word.startswith("-") and _regular(result.folder / word):
            argv[i] = str(result.folder / word)
            break
    return BotSpec(name=name, argv=tuple(argv), cwd=str(result.folder), sandbox=sandbox)


def _build(
    archive: Path, sha256: str, builds: Path, limits: BuildLimits, archive_limits: ArchiveLimits, started: float
) -> BuildResult:
    host = require_sandbox()
    _require_disk(builds)
    uid = SEAT_UIDS.acquire() if host.root else None
    work = _work_folder()
    recipe: Recipe | None = None
    log_path: Path | None = None

    def failed(reason: str) -> BuildResult:
        return BuildResult(False, reason, recipe, None, log_path, _since(started))

    try:
        try:
            unpack(archive, work / "src", archive_limits)
            folder = _bot_folder(work / "src")
            recipe = find_recipe(folder)
        except SubmissionRefused as exc:
            return failed(str(exc))
        if recipe.build is not None:
            log_path = builds / f"{sha256}.log"
            _hand_over(work, uid)
            reason = run_build(recipe.build, folder, log_path, limits, host, uid)
            if reason is not None:
                return failed(reason)
        built = builds / sha256
        reason = _install(folder, built, log_path) or _runnable(recipe, built)  # judged as games will see it
        if reason is not None:
            shutil.rmtree(built, ignore_errors=True)
            return failed(reason)
        return BuildResult(True, None, recipe, built, log_path, _since(started), _files_sha256(built))
    finally:
        _remove(work)
        if uid is not None:
            SEAT_UIDS.release(uid)


def _work_folder() -> Path:
    """A fresh folder for one working copy, in the staging folder (which every
    build uid can reach, and which goes when the referee goes)."""
    base = stage() / "builds"
    base.mkdir(exist_ok=True)
    os.chmod(base, 0o711)  # each build reaches its own folder, lists none
    return Path(tempfile.mkdtemp(prefix="build-", dir=base))


def _bot_folder(unpacked: Path) -> Path:
    """The bot's folder: the archive's top, or the one folder it holds alone."""
    entries = list(unpacked.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return unpacked


def _hand_over(work: Path, uid: int | None) -> None:
    """The working copy becomes the build uid's (as root; as a user it is ours already)."""
    if uid is None:
        return
    os.chown(work, uid, uid)
    for root, dirs, files in os.walk(work):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)


def _runnable(recipe: Recipe, folder: Path) -> str | None:
    """Why the recipe's `run` could not start the bot of the built folder
    (which holds no links) in the game sandbox; None if it can."""
    program = recipe.run[0]
    path = folder / program
    if "/" in program or os.path.lexists(path):
        if not _regular(path):
            return f"the build did not leave {visible(program)}, which `run` starts, as a file in the bot's folder"
        if not os.stat(path).st_mode & stat.S_IXUSR:
            return f"{visible(program)}, which `run` starts, is not executable"
    elif shutil.which(program, path=SANDBOX_PATH) is None:
        return f"{visible(program)} not found in the sandbox: `run` cannot start the bot there"
    for word in recipe.run[1:]:
        if word.endswith((".py", ".js", ".jar")) and not word.startswith("-") and not _regular(folder / word):
            return f"{visible(word)}, which `run` names, is not a file in the bot's folder"
    return None


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


class _TooLarge(Exception):
    pass


def _install(folder: Path, dest: Path, log_path: Path | None) -> str | None:
    """Copy the working copy to `dest`, read-only for games: folders and
    regular files only (links and special files are left out), modes 0o755
    and 0o644, owned by the referee, on disk before the record is written."""
    part = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent))
    try:
        counts = [0, 0, 0]  # entries, bytes, left out
        _copy_folder(folder, part, counts)
        os.chmod(part, 0o755)
        _sync_tree(part)
        os.rename(part, dest)
        sync_folder(dest.parent)
    except _TooLarge:
        shutil.rmtree(part, ignore_errors=True)
        return (
            f"the build left more than {amount(MAX_BUILT_BYTES)} or {MAX_BUILT_ENTRIES:,} files and folders "
            "in the bot's folder"
        )
    except BaseException:
        shutil.rmtree(part, ignore_errors=True)
        raise
    if counts[2] and log_path is not None:
        with open(log_path, "ab") as log:
            log.write(f"[left out of the built folder: {counts[2]} links or special files]\n".encode())
    return None


def _copy_folder(source: Path, dest: Path, counts: list[int]) -> None:
    if os.geteuid() != 0:  # what the build made unreadable is still ours to open
        os.chmod(source, os.lstat(source).st_mode | 0o700)
    with os.scandir(source) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        counts[0] += 1
        if counts[0] > MAX_BUILT_ENTRIES:
            raise _TooLarge
        info = entry.stat(follow_symlinks=False)
        target = dest / entry.name
        if stat.S_ISDIR(info.st_mode):
            target.mkdir()
            _copy_folder(Path(entry.path), target, counts)
            os.chmod(target, 0o755)
        elif stat.S_ISREG(info.st_mode):
            _copy_file(Path(entry.path), target, info, counts)
        else:
            counts[2] += 1


def _copy_file(source: Path, target: Path, info: os.stat_result, counts: list[int]) -> None:
    if os.geteuid() != 0:
        os.chmod(source, info.st_mode | 0o400)
    with (
        open(os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb", buffering=0) as src,
        open(target, "xb") as out,
    ):
        while chunk := src.read(_COPY_CHUNK):
            counts[1] += len(chunk)
            if counts[1] > MAX_BUILT_BYTES:
                raise _TooLarge
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(target, 0o755 if info.st_mode & stat.S_IXUSR else 0o644)


def _sync_tree(folder: Path) -> None:
    """fsync every folder below `folder` and itself (its files were, as they were written)."""
    for root, _dirs, _files in os.walk(folder, topdown=False):
        sync_folder(Path(root))


def _record(builds: Path, sha256: str, result: BuildResult) -> None:
    """builds/<sha256>.json, written to a temporary file, fsynced, renamed."""
    data: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "sha256": sha256,
        "ok": result.ok,
        "reason": result.reason,
        "recipe": result.recipe.as_dict() if result.recipe is not None else None,
        "log": result.log_path is not None,
        "seconds": result.seconds,
        "files": result.files_sha256,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    fd, name = tempfile.mkstemp(prefix=f".{sha256}.", suffix=".json", dir=builds)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(name, 0o644)
        os.rename(name, builds / f"{sha256}.json")
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    sync_folder(builds)


def _files_sha256(folder: Path) -> str:
    """The digest a cluster worker compares its copy of the built folder with."""
    return files_digest((), None, str(folder))


def _clear(builds: Path, sha256: str) -> None:
    """What a build of `sha256` killed midway left: its folder, log, parts."""
    for path in [builds / sha256, *builds.glob(f".{sha256}.*")]:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif os.path.lexists(path):
            path.unlink()
    (builds / f"{sha256}.log").unlink(missing_ok=True)


def _remove(path: Path) -> None:
    """Remove a working copy, whatever modes the build left in it."""

    def opened_up(func: Any, failed: str, _exc: Any) -> None:
        try:
            for folder in (os.path.dirname(failed), failed):
                if os.path.isdir(folder) and not os.path.islink(folder):
                    os.chmod(folder, 0o700)
            func(failed)
        except OSError:
            pass

    shutil.rmtree(path, onerror=opened_up)


def _require_disk(path: Path) -> None:
    for where in (path, stage()):
        if free_bytes(where) < 2 * DISK_FLOOR_BYTES:
            raise OSError(errno.ENOSPC, f"less than {2 * DISK_FLOOR_BYTES // MiB} MiB free for a build", str(where))


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)  # as recorded: a recorded result equals the one returned
