"""Taking a submission in: from the first byte of an upload to a committed row.

The order is what makes an answer of `201` mean "kept": the archive arrives
in a temporary file (counted and hashed as it comes, refused the moment it
passes the size cap), is unpacked once into a scratch folder to refuse a
hostile archive before anything is kept, is renamed to `archives/<sha256>`
and fsynced with its folder, and only then is its row committed. A `kill -9`
at any point leaves either nothing or an archive no row names (harmless: the
same bytes find it again); never a row without its archive.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from referee.arena.archives import ArchiveLimits, unpack
from referee.arena.config import Arena
from referee.arena.controls import check_open
from referee.arena.store import ArenaStore, now_text, sync_folder
from referee.arena.submissions import (
    Submission,
    add_submission,
    bot_owner,
    check_bot_name,
    check_not_disqualified,
    check_owner,
    claim_bot,
    find_same,
    kept_bytes,
    recent_count,
)
from referee.errors import SubmissionRefused

HOUR = 3600.0


@dataclass(frozen=True)
class Received:
    """An upload written to disk whole: where, its sha256 and its size."""

    path: Path
    sha256: str
    size: int


class Upload:
    """An archive arriving in chunks, kept in a temporary file of the arena's
    `archives/` folder (same file system: the final rename is atomic)."""

    def __init__(self, arena_folder: Path, limits: ArchiveLimits) -> None:
        self.limits = limits
        fd, name = tempfile.mkstemp(prefix=".incoming-", dir=arena_folder / "archives")
        self.path = Path(name)
        self._file = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limits.max_upload_bytes:
            self.discard()
            mib = self.limits.max_upload_bytes / (1 << 20)
            raise SubmissionRefused(f"the archive is larger than the arena takes ({mib:g} MiB)", status=413)
        self._hash.update(chunk)
        self._file.write(chunk)

    def finish(self) -> Received:
        if self.size == 0:
            self.discard()
            raise SubmissionRefused("the upload is empty: send the bot's archive in the field `archive`")
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
        except BaseException:  # a full disk: nothing half-written is left behind
            self.discard()
            raise
        return Received(self.path, self._hash.hexdigest(), self.size)

    def discard(self) -> None:
        if not self._file.closed:
            self._file.close()
        self.path.unlink(missing_ok=True)


def check_user_limits(store: ArenaStore, arena: Arena, owner: str, now: float, adding: int = 0) -> None:
    """Refuse any submission once submissions have closed (saying since when), and,
    saying when to try again, a user over their hourly submissions or kept bytes."""
    store.read(lambda c: check_open(c, arena.submissions_close, now))
    limits = arena.users
    count, oldest = store.read(lambda c: recent_count(c, owner, now - HOUR))
    if count >= limits.submissions_per_hour:
        again = datetime.fromtimestamp((oldest or now) + HOUR, UTC).strftime("%H:%M:%S UTC")
        raise SubmissionRefused(
            f"{count} submissions in the last hour is this arena's limit: try again after {again}", status=429
        )
    kept = store.read(lambda c: kept_bytes(c, owner))
    if kept + adding > limits.kept_bytes:
        mib = limits.kept_bytes / (1 << 20)
        raise SubmissionRefused(
            f"your archives would take more than the {mib:g} MiB this arena keeps per user: "
            "ask the host to retire old versions",
            status=413,
        )


def accept(store: ArenaStore, arena: Arena, owner: str, bot: str, received: Received) -> tuple[Submission, bool]:
    """Keep a received archive as a new version of `bot` (blocking: call on a
    thread). Returns the submission and whether it is new (False: the same
    archive was submitted to this bot before)."""
    try:
        check_bot_name(bot)
        check_owner(bot, owner, store.read(lambda c: bot_owner(c, bot)))
        store.read(lambda c: check_not_disqualified(c, bot))
        same = store.read(lambda c: find_same(c, bot, received.sha256))
        if same is not None:
            return same, False
        check_user_limits(store, arena, owner, time.time(), received.size)
        scratch = Path(tempfile.mkdtemp(prefix=".check-", dir=arena.folder / "archives"))
        try:
            unpacked = unpack(received.path, scratch / "bot", arena.archives)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        final = arena.folder / "archives" / received.sha256
        os.replace(received.path, final)
        sync_folder(final.parent)
    finally:
        received.path.unlink(missing_ok=True)  # gone already when kept
    with store.transaction() as conn:
        claim_bot(conn, bot, owner, now_text())
        same = find_same(conn, bot, received.sha256)  # a twin request won the race
        if same is not None:
            return same, False
        sub = add_submission(
            conn,
            bot=bot,
            sha256=received.sha256,
            size=received.size,
            kind=unpacked.kind,
            files=unpacked.files,
            unpacked=unpacked.bytes,
            now=now_text(),
            epoch=time.time(),
        )
    return sub, True
