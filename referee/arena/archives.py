"""An uploaded bot archive, unpacked or refused: every upload is hostile input.

A competitor's archive (zip, tar or tar.gz, told apart by its first bytes,
never by its name) becomes a folder of plain files for the sandbox to build,
or a `SubmissionRefused` whose one line names the member and the reason, fit
for a 4xx answer. Nothing of a refused archive remains: `unpack` writes into
a fresh temporary folder beside `dest`, renames it to `dest` once every
member has passed, and removes it on any refusal or error.

Refused, and why:

- names that could land outside the folder or mislead (archive_names.py);
- anything but regular files and folders: links of both kinds (a bot's
  sources need none, and links are how archives write outside their folder),
  devices, fifos, sparse files; encrypted zip members;
- size: an upload over `max_upload_bytes`; more than `max_files` entries
  (files and folders, those a path implies included: they are inodes too);
  more than `max_unpacked_bytes` unpacked, or more than `max_ratio` times the
  upload (a compression bomb). Sizes are checked against the headers before
  anything is written and counted again while writing, because headers can
  lie and zip members can share their data; writing stops before a cap is
  crossed. A gzip stream is cut off just past what its tar may hold;
- what is damaged, or is no zip, tar or tar.gz at all, or holds no file.

Links and special files are refused by our own checks and again by tarfile's
`data` filter (PEP 706). Files are written with their owner's executable bit
only (0o755 or 0o644), folders 0o755: no setuid, setgid, sticky bit or
group write survives. `pack_folder` is the other side: `arena submit` packs
a competitor's folder into a deterministic tar.gz under the same limits and
checks, so what it sends, `unpack` takes.
"""

from __future__ import annotations

import errno
import gzip
import io
import lzma
import os
import shutil
import stat
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal, Protocol

from referee.arena.archive_names import NameBook, member_parts, shown
from referee.errors import ConfigError, SubmissionRefused
from referee.visible import visible

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = ["ArchiveKind", "ArchiveLimits", "Unpacked", "pack_folder", "unpack"]

KiB = 1 << 10
MiB = 1 << 20
_CHUNK = 64 * KiB
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; the end record of an empty zip
_GZIP_MAGIC = b"\x1f\x8b"
# What a tar stream holds besides its files' bytes: per entry a header, a pax
# or long-name header and padding; then the end blocks and the record padding.
_TAR_BYTES_PER_ENTRY = 4 * KiB
_TAR_BYTES_SPARE = 32 * KiB
_ZIP_ENCRYPTED = 0x01 | 0x40  # general purpose flags: encrypted, strongly encrypted
_ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})
# What a damaged archive makes the readers raise (bz2 raises OSError).
_DAMAGE = (
    tarfile.TarError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    struct.error,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    RuntimeError,
)
PACK_SKIPPED_FOLDERS = frozenset({".git", "__pycache__", ".venv", "node_modules"})
PACK_SKIPPED_SUFFIXES = (".pyc",)

ArchiveKind = Literal["zip", "tar", "tar.gz"]


def _amount(n: float) -> str:
    n = int(n)
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    if n >= KiB and n % KiB == 0:
        return f"{n // KiB} KiB"
    return f"{n:,} bytes"


@dataclass(frozen=True)
class ArchiveLimits:
    """How much one upload may hold; the arena's config keys of the same names."""

    max_upload_bytes: int = 10 * MiB
    max_files: int = 2000  # entries: files and folders
    max_unpacked_bytes: int = 50 * MiB
    max_ratio: float = 100.0  # unpacked bytes / uploaded bytes; beyond it, a bomb

    def __post_init__(self) -> None:
        for key in ("max_upload_bytes", "max_files", "max_unpacked_bytes", "max_ratio"):
            value = getattr(self, key)
            kinds = (int, float) if key == "max_ratio" else (int,)
            if isinstance(value, bool) or not isinstance(value, kinds) or not value > 0:
                raise ConfigError(f"archive limit {key} must be a positive number, not {value!r}")


@dataclass(frozen=True)
class Unpacked:
    """What an accepted archive became: its files, their bytes, the kind it was."""

    files: int
    bytes: int
    kind: ArchiveKind


class _Budget:
    """The bytes an archive may unpack to, the lower of the unpacked cap and
    the ratio to its size, and the bytes written so far."""

    def __init__(self, limits: ArchiveLimits, upload_bytes: int) -> None:
        by_ratio = limits.max_ratio * upload_bytes
        self._by_ratio = by_ratio < limits.max_unpacked_bytes
        self.limit = int(by_ratio) if self._by_ratio else limits.max_unpacked_bytes
        self.used = 0
        self._limits = limits
        self._upload_bytes = upload_bytes

    @property
    def left(self) -> int:
        return self.limit - self.used

    def refusal(self, name: str | None) -> SubmissionRefused:
        where = f"member {shown(name)}: " if name is not None else ""
        if self._by_ratio:
            ratio, size = self._limits.max_ratio, _amount(self._upload_bytes)
            return SubmissionRefused(
                f"{where}the archive unpacks to more than {ratio:g} times its {size}: refused as a compression bomb"
            )
        return SubmissionRefused(f"{where}the archive unpacks to more than {_amount(self.limit)}")

    def expect(self, name: str, declared: int) -> None:
        """Refuse a member whose header alone already goes past the budget."""
        if declared > self.left:
            raise self.refusal(name)


@contextmanager
def _reading(name: str | None) -> Iterator[None]:
    """Errors of the archive readers, as the refusal of a damaged archive."""
    try:
        yield
    except _DAMAGE as exc:
        where = f"member {shown(name)}: " if name is not None else ""
        detail = visible(str(exc) or type(exc).__name__)[:160]
        raise SubmissionRefused(f"{where}the archive is damaged ({detail})") from exc


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _CappedStream(io.RawIOBase):
    """A decompressed tar stream that refuses to give more than `cap` bytes:
    a gzip bomb stops here, whatever its tar headers claim."""

    def __init__(self, source: _Readable, cap: int, budget: _Budget) -> None:
        super().__init__()
        self._source, self._left, self._budget = source, cap, budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self._source.read(min(len(view), self._left + 1))  # its errors: the reader's, see _reading
        if len(data) > self._left:
            raise self._budget.refusal(None)
        self._left -= len(data)
        view[: len(data)] = data
        return len(data)


class _Folder:
    """The temporary folder an archive is unpacked into, and what it holds."""

    def __init__(self, root: Path, limits: ArchiveLimits, budget: _Budget) -> None:
        self.root = os.path.realpath(root)
        self.book = NameBook(limits.max_files)
        self.budget = budget
        self.files = 0

    def _path(self, name: str, parts: tuple[str, ...]) -> str:
        target = os.path.join(self.root, *parts)
        if os.path.commonpath([self.root, os.path.realpath(target)]) != self.root:
            raise SubmissionRefused(f"member {shown(name)} resolves outside the archive's folder")
        return target

    def _make_folders(self, name: str, folders: list[tuple[str, ...]]) -> None:
        for parts in folders:
            path = self._path(name, parts)
            os.mkdir(path)
            os.chmod(path, 0o755)  # whatever the umask

    def add_folder(self, name: str, parts: tuple[str, ...]) -> None:
        self._make_folders(name, self.book.add(name, parts, is_dir=True))

    def add_file(self, name: str, parts: tuple[str, ...], source: IO[bytes], declared: int, executable: bool) -> None:
        """Copy one member with bounded reads: never more than its header
        declared, never past the budget, refused before the excess is written."""
        self._make_folders(name, self.book.add(name, parts, is_dir=False))
        self.budget.expect(name, declared)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with open(os.open(self._path(name, parts), flags, 0o600), "wb") as out:
            member_left = declared
            while True:
                with _reading(name):
                    chunk = source.read(min(_CHUNK, min(member_left, self.budget.left) + 1))
                if not chunk:
                    break
                if len(chunk) > member_left:
                    raise SubmissionRefused(f"member {shown(name)} holds more than the {declared:,} bytes it declares")
                if len(chunk) > self.budget.left:
                    raise self.budget.refusal(name)
                out.write(chunk)
                member_left -= len(chunk)
                self.budget.used += len(chunk)
            if member_left:
                raise SubmissionRefused(f"member {shown(name)} holds fewer than the {declared:,} bytes it declares")
            os.fchmod(out.fileno(), 0o755 if executable else 0o644)
        self.files += 1


def _tar_type(member: tarfile.TarInfo) -> str:
    """What a member that is no regular file or folder is, in words."""
    if member.issym():
        return f"a symbolic link (to {shown(member.linkname)})"
    if member.islnk():
        return f"a hard link (to {shown(member.linkname)})"
    if member.issparse():
        return "a sparse file"
    if member.ischr():
        return "a character device"
    if member.isblk():
        return "a block device"
    if member.isfifo():
        return "a fifo"
    return f"of tar type {member.type!r}"


def _data_filter(member: tarfile.TarInfo, root: str) -> None:
    """tarfile's own judgement of a member (PEP 706), a second layer behind ours."""
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is None:  # fail closed: Python 3.11 before 3.11.4
        raise RuntimeError("unpacking a tar needs tarfile's data filter (PEP 706): Python 3.11.4 or later")
    try:
        data_filter(member, root)
    except tarfile.FilterError as exc:
        raise SubmissionRefused(f"member {shown(member.name)} fails the data filter ({type(exc).__name__})") from exc


def _open_tar(upload: IO[bytes], kind: ArchiveKind, cap: int, budget: _Budget) -> tarfile.TarFile:
    """The upload as a tar stream, read once, front to back, at most `cap` bytes of it."""
    raw: _Readable = upload if kind == "tar" else gzip.GzipFile(fileobj=upload, mode="rb")
    stream = io.BufferedReader(_CappedStream(raw, cap, budget), _CHUNK)
    with _reading(None):
        try:
            return tarfile.open(fileobj=stream, mode="r|")
        except tarfile.ReadError as exc:
            held = "holds no tar archive" if kind == "tar.gz" else "is not a zip, tar or tar.gz archive"
            raise SubmissionRefused(f"the upload {held} ({visible(str(exc))[:80]})") from exc


def _unpack_tar(upload: IO[bytes], kind: ArchiveKind, folder: _Folder, limits: ArchiveLimits) -> None:
    cap = folder.budget.limit + _TAR_BYTES_PER_ENTRY * limits.max_files + _TAR_BYTES_SPARE
    with _open_tar(upload, kind, cap, folder.budget) as tar:
        while True:
            with _reading(None):
                member = tar.next()
            if member is None:
                return
            name = member.name
            parts = member_parts(name)
            if not (member.isdir() or (member.isreg() and not member.issparse())):
                raise SubmissionRefused(f"member {shown(name)} is {_tar_type(member)}: only files and folders may be")
            _data_filter(member, folder.root)
            if member.isdir():
                folder.add_folder(name, parts)
                continue
            with _reading(name):
                source = tar.extractfile(member)
            if source is None:
                raise SubmissionRefused(f"member {shown(name)} cannot be read as a file")
            folder.add_file(name, parts, source, member.size, executable=bool(member.mode & stat.S_IXUSR))


def _zip_is_dir(info: zipfile.ZipInfo) -> bool:
    """A member is a folder or a file; anything else its Unix mode says it is
    (a link, a device, a fifo) is refused."""
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise SubmissionRefused(f"member {shown(info.orig_filename)} is a symbolic link: only files and folders may be")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        what = stat.filemode(mode)[0]  # c, b, p, s, ...
        raise SubmissionRefused(
            f"member {shown(info.orig_filename)} is a special file (mode {what!r}): only files and folders may be"
        )
    return info.orig_filename.endswith("/") or kind == stat.S_IFDIR


def _unpack_zip(upload: IO[bytes], folder: _Folder, limits: ArchiveLimits) -> None:
    with _reading(None):
        archive = zipfile.ZipFile(upload)
    with archive:
        members = archive.infolist()
        if len(members) > limits.max_files:
            raise SubmissionRefused(f"the archive holds more than {limits.max_files} entries (files and folders)")
        declared = 0
        for info in members:  # the central directory's sizes, before any write
            declared += info.file_size
            if declared > folder.budget.limit:
                raise folder.budget.refusal(info.orig_filename)
        for info in members:
            name = info.orig_filename  # `filename` is cut at a NUL: the name as stored is judged
            parts = member_parts(name)
            if info.flag_bits & _ZIP_ENCRYPTED:
                raise SubmissionRefused(f"member {shown(name)} is encrypted")
            if _zip_is_dir(info):
                folder.add_folder(name, parts)
                continue
            if info.compress_type not in _ZIP_METHODS:
                raise SubmissionRefused(f"member {shown(name)} uses compression method {info.compress_type}")
            with _reading(name):
                source = archive.open(info)
            with source:
                executable = bool((info.external_attr >> 16) & stat.S_IXUSR)
                folder.add_file(name, parts, source, info.file_size, executable=executable)


def _kind(head: bytes) -> ArchiveKind:
    if head.startswith(_ZIP_MAGIC):
        return "zip"
    if head.startswith(_GZIP_MAGIC):
        return "tar.gz"
    return "tar"  # or nothing: tarfile says so when it reads the first header


def unpack(archive: Path, dest: Path, limits: ArchiveLimits) -> Unpacked:
    """Unpack the uploaded `archive` into the new folder `dest`, or refuse it
    with SubmissionRefused (one line: the member and the reason) and leave
    nothing behind. `dest` must not exist (FileExistsError: the caller's
    mistake, not the competitor's); its parent must, on the same filesystem
    as the temporary folder made beside it. Errors that are not the upload's
    (a full disk) are raised as they are, after the same clean-up."""
    if os.path.lexists(dest):
        raise FileExistsError(errno.EEXIST, "an archive is unpacked into a new folder", str(dest))
    with open(archive, "rb") as upload:
        size = os.fstat(upload.fileno()).st_size
        if size > limits.max_upload_bytes:
            raise SubmissionRefused(
                f"the archive is {_amount(size)}: more than the {_amount(limits.max_upload_bytes)} an upload may be",
                status=413,
            )
        kind = _kind(upload.read(4))
        upload.seek(0)
        root = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".unpacking", dir=dest.parent))
        try:
            folder = _Folder(root, limits, _Budget(limits, size))
            if kind == "zip":
                _unpack_zip(upload, folder, limits)
            else:
                _unpack_tar(upload, kind, folder, limits)
            if not folder.files:
                raise SubmissionRefused("the archive holds no files")
            os.chmod(root, 0o755)
            if os.path.lexists(dest):
                raise FileExistsError(errno.EEXIST, "the folder appeared while the archive was unpacked", str(dest))
            os.rename(root, dest)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
    return Unpacked(files=folder.files, bytes=folder.budget.used, kind=kind)


def _bot_entries(folder: Path, parts: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Path, os.stat_result]]:
    """The entries `pack_folder` packs, depth first, in code point order."""
    with os.scandir(folder.joinpath(*parts)) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        path = (*parts, entry.name)
        hidden_at_top = not parts and entry.name.startswith(".")
        if hidden_at_top or (entry.name in PACK_SKIPPED_FOLDERS and entry.is_dir(follow_symlinks=False)):
            continue
        if entry.is_symlink():
            raise SubmissionRefused(f"{shown('/'.join(path))} is a symbolic link: a bot's folder may hold none")
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            yield path, Path(entry.path), info
            yield from _bot_entries(folder, path)
        elif not stat.S_ISREG(info.st_mode):
            raise SubmissionRefused(f"{shown('/'.join(path))} is neither a file nor a folder")
        elif not entry.name.endswith(PACK_SKIPPED_SUFFIXES):
            yield path, Path(entry.path), info


def _read_file(path: Path, name: str, most: int) -> bytes:
    """A file's bytes, at most `most` + 1 of them, never through a link."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb") as file:
            return file.read(most + 1)
    except OSError as exc:
        raise SubmissionRefused(f"{shown(name)} cannot be read: {exc.strerror}") from exc


def pack_folder(folder: Path, limits: ArchiveLimits) -> bytes:
    """A competitor's bot folder as a tar.gz, in memory, for `arena submit`.

    Packed: the folder's files and folders, named relative to it. Skipped:
    the folders `.git`, `__pycache__`, `.venv` and `node_modules` wherever
    they are, `*.pyc` files, and every hidden entry at the top level (a name
    that starts with a dot: `.env`, `.idea`, `.gitignore`). Refused
    (SubmissionRefused): a symbolic link or special file inside, a name or an
    amount `unpack` would refuse under `limits`, no file at all.
    Deterministic: sorted names, mtime 0, uid and gid 0, no user names,
    modes 0o755 or 0o644, a gzip header without time or name; the same files
    pack to the same bytes, hence the same sha256.
    """
    if not folder.is_dir():
        raise SubmissionRefused(f"{visible(str(folder))} is not a folder")
    book = NameBook(limits.max_files)
    unpacked = files = 0
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for parts, path, info in _bot_entries(folder):
            name = "/".join(parts)
            is_dir = stat.S_ISDIR(info.st_mode)
            book.add(name, member_parts(name), is_dir=is_dir)
            member = tarfile.TarInfo(name)
            member.mtime, member.uid, member.gid, member.uname, member.gname = 0, 0, 0, "", ""
            if is_dir:
                member.type, member.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(member)
                continue
            data = _read_file(path, name, limits.max_unpacked_bytes - unpacked)
            unpacked += len(data)
            if unpacked > limits.max_unpacked_bytes:
                raise SubmissionRefused(f"the folder holds more than {_amount(limits.max_unpacked_bytes)} of files")
            member.size, member.mode = len(data), 0o755 if info.st_mode & stat.S_IXUSR else 0o644
            tar.addfile(member, io.BytesIO(data))
            files += 1
    packed = buffer.getvalue()
    if not files:
        raise SubmissionRefused(f"{visible(str(folder))} holds no files to submit")
    if len(packed) > limits.max_upload_bytes:
        raise SubmissionRefused(
            f"the folder packs to {_amount(len(packed))}: more than the {_amount(limits.max_upload_bytes)} "
            "an upload may be"
        )
    if unpacked > limits.max_ratio * len(packed):
        raise SubmissionRefused(
            f"the folder's {_amount(unpacked)} of files pack more than {limits.max_ratio:g} times smaller: "
            "the arena would refuse them as a compression bomb"
        )
    return packed
