"""Uploaded bot archives, hostile ones first: every refusal names the member
and leaves nothing behind, neither the destination nor the temporary folder
nor a file outside; good archives keep their files, folders and executable
bits; `pack_folder` packs a folder deterministically into what `unpack` takes.

The archives are real files built here with tarfile and zipfile (patched
byte by byte where zipfile will not write the lie), under small limits so the
bombs stay a few MiB of zeros.
"""

from __future__ import annotations

import gzip
import io
import os
import random
import stat
import struct
import tarfile
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.arena.archives import ArchiveLimits, pack_folder, unpack
from referee.errors import ConfigError, SubmissionRefused

MiB = 1 << 20
TAR_KINDS = ("tar", "tar.gz")
ALL_KINDS = ("tar", "tar.gz", "zip")
SCRIPT = b"#!/bin/sh\necho hello\n"


@dataclass(frozen=True)
class Member:
    """One member to write: a file, a folder, or what an archive must not hold."""

    name: str
    data: bytes = b""
    kind: str = "file"  # file, dir, symlink, hardlink, chr, blk, fifo
    mode: int = 0o644
    link: str = ""


TAR_TYPES = {
    "file": tarfile.REGTYPE,
    "dir": tarfile.DIRTYPE,
    "symlink": tarfile.SYMTYPE,
    "hardlink": tarfile.LNKTYPE,
    "chr": tarfile.CHRTYPE,
    "blk": tarfile.BLKTYPE,
    "fifo": tarfile.FIFOTYPE,
}
ZIP_TYPES = {
    "file": stat.S_IFREG,
    "dir": stat.S_IFDIR,
    "symlink": stat.S_IFLNK,
    "chr": stat.S_IFCHR,
    "fifo": stat.S_IFIFO,
}


def tar_bytes(members: list[Member], kind: str = "tar") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if kind == "tar.gz" else "w", format=tarfile.PAX_FORMAT) as tar:
        for m in members:
            info = tarfile.TarInfo(m.name)
            info.type, info.mode, info.linkname = TAR_TYPES[m.kind], m.mode, m.link
            info.size = len(m.data) if m.kind == "file" else 0
            tar.addfile(info, io.BytesIO(m.data) if m.kind == "file" else None)
    return buffer.getvalue()


def zip_bytes(members: list[Member]) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        warnings.simplefilter("ignore")  # "Duplicate name": written on purpose
        for m in members:
            info = zipfile.ZipInfo(m.name + ("/" if m.kind == "dir" and not m.name.endswith("/") else ""))
            info.external_attr = (ZIP_TYPES[m.kind] | m.mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, m.link.encode() if m.kind == "symlink" else m.data)
    return buffer.getvalue()


def archive_bytes(kind: str, members: list[Member]) -> bytes:
    return zip_bytes(members) if kind == "zip" else tar_bytes(members, kind)


def patch_zip(data: bytes, *, flags: int | None = None, size: int | None = None) -> bytes:
    """Set the general purpose flags or the uncompressed size of every member,
    in its local header and in the central directory alike."""
    out = bytearray(data)
    for signature, flags_at, size_at in ((b"PK\x03\x04", 6, 22), (b"PK\x01\x02", 8, 24)):
        at = out.find(signature)
        while at >= 0:
            if flags is not None:
                out[at + flags_at : at + flags_at + 2] = struct.pack("<H", flags)
            if size is not None:
                out[at + size_at : at + size_at + 4] = struct.pack("<I", size)
            at = out.find(signature, at + 4)
    return bytes(out)


class CountingStream(io.BytesIO):
    """A member's stream that counts the bytes it hands out."""

    given = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.given += len(data)
        return data


@dataclass
class Place:
    """An upload and where it is unpacked: `dest` inside `store`, the
    temporary folder beside it; the escapes tried aim at `tmp` and above."""

    tmp: Path
    archive: Path
    dest: Path

    def write(self, data: bytes) -> Path:
        self.archive.write_bytes(data)
        return self.archive

    def nothing_left(self) -> None:
        left = sorted(str(p.relative_to(self.tmp)) for p in self.tmp.rglob("*"))
        assert left == ["store", "upload"], left
        assert not (self.tmp.parent / f"{self.tmp.name}-escaped").exists()

    def refused(self, limits: ArchiveLimits | None = None) -> str:
        with pytest.raises(SubmissionRefused) as caught:
            unpack(self.archive, self.dest, limits or ArchiveLimits())
        message = str(caught.value)
        assert "\n" not in message and "\r" not in message
        self.nothing_left()
        return message


@pytest.fixture
def place(tmp_path: Path) -> Place:
    (tmp_path / "store").mkdir()
    return Place(tmp_path, tmp_path / "upload", tmp_path / "store" / "bot")  # no suffix: kinds are read, not named


def refused_member(place: Place, kind: str, members: list[Member], limits: ArchiveLimits | None = None) -> str:
    place.write(archive_bytes(kind, members))
    return place.refused(limits)


GOOD = [Member("main.py", b"print('hi')\n"), Member("lib", kind="dir")]


# -- names ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_an_absolute_path_is_refused(place: Place, kind: str) -> None:
    target = place.tmp / "escaped-absolute.txt"
    message = refused_member(place, kind, [*GOOD, Member(str(target), b"pwned")])
    assert message == f"member {str(target)!r} is an absolute path"
    assert not target.exists()


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("climb", ["../../../{tmp}-escaped", "lib/../../../../{tmp}-escaped", "../escaped.py"])
def test_a_name_that_climbs_out_is_refused(place: Place, kind: str, climb: str) -> None:
    name = climb.format(tmp=place.tmp.name)
    message = refused_member(place, kind, [*GOOD, Member(name, b"pwned")])
    assert message == f"member {name!r} climbs out of its folder with '..'"


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("clear\x1b[2Jscreen.py", "'clear\\x1b[2Jscreen.py'"),
        ("two\nlines.py", "'two\\nlines.py'"),
        ("evil\u202eyp.txt", "'evil\\u202eyp.txt'"),
        ("zero\u200bwidth.py", "'zero\\u200bwidth.py'"),
    ],
)
def test_a_control_or_invisible_character_is_refused_and_shown_escaped(
    place: Place, kind: str, name: str, shown: str
) -> None:
    message = refused_member(place, kind, [*GOOD, Member(name, b"x")])
    assert message == f"member {shown} holds a control or invisible character"


def test_a_nul_in_a_zip_name_is_refused_though_zipfile_cuts_the_name_there(place: Place) -> None:
    data = zip_bytes([Member("evil.py#.txt", b"x")]).replace(b"evil.py#.txt", b"evil.py\x00.txt")
    place.write(data)
    assert place.refused() == "member 'evil.py\\x00.txt' holds a NUL character"


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_a_backslash_is_refused(place: Place, kind: str) -> None:
    message = refused_member(place, kind, [*GOOD, Member("..\\evil.py", b"x")])
    assert message == "member '..\\\\evil.py' holds a backslash"


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("a//b.py", "holds an empty path component ('//')"),
        ("a/" * 32 + "deep.py", "is more than 32 folders deep"),
        ("x" * 256 + ".py", "has a path component longer than 255 bytes"),
        (".", "is a file in place of the archive's folder itself"),
    ],
    ids=["empty component", "too deep", "long component", "the folder itself"],
)
def test_odd_names_are_refused(place: Place, kind: str, name: str, reason: str) -> None:
    message = refused_member(place, kind, [*GOOD, Member(name, b"x")])
    assert message.endswith(reason) and message.startswith("member '")


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_an_exact_duplicate_is_refused(place: Place, kind: str) -> None:
    message = refused_member(place, kind, [Member("main.py", b"one"), Member("main.py", b"two")])
    assert message == "member 'main.py' appears twice in the archive"


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize(
    ("first", "second", "earlier"),
    [
        ("Main.py", "main.py", "Main.py"),
        ("Src/a.py", "src/b.py", "Src"),
        ("caf\u00e9.py", "cafe\u0301.py", "caf\u00e9.py"),
    ],
)
def test_names_that_differ_only_in_case_or_unicode_form_are_refused(
    place: Place, kind: str, first: str, second: str, earlier: str
) -> None:
    message = refused_member(place, kind, [Member(first, b"one"), Member(second, b"two")])
    assert message.startswith(f"member {second!r} clashes with {earlier!r}")


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ([Member("lib", b"a file"), Member("lib/x.py", b"x")], "member 'lib/x.py' needs 'lib' as a folder"),
        ([Member("lib/x.py", b"x"), Member("lib", b"a file")], "member 'lib' is both a file and a folder"),
        ([Member("lib", kind="dir"), Member("lib", b"a file")], "member 'lib' is both a file and a folder"),
    ],
)
def test_a_file_and_a_folder_of_one_name_are_refused(
    place: Place, kind: str, members: list[Member], expected: str
) -> None:
    assert refused_member(place, kind, members).startswith(expected)


# -- what is not a file or a folder --------------------------------------------


@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("target", ["main.py", "../../../etc/passwd", "/etc/passwd"])
def test_a_symbolic_link_is_refused_inside_or_out(place: Place, kind: str, target: str) -> None:
    message = refused_member(place, kind, [*GOOD, Member("link.py", kind="symlink", link=target)])
    assert message.startswith("member 'link.py' is a symbolic link")


@pytest.mark.parametrize("kind", TAR_KINDS)
def test_a_hard_link_is_refused(place: Place, kind: str) -> None:
    message = refused_member(place, kind, [*GOOD, Member("again.py", kind="hardlink", link="main.py")])
    assert message == "member 'again.py' is a hard link (to 'main.py'): only files and folders may be"


@pytest.mark.parametrize("kind", TAR_KINDS)
@pytest.mark.parametrize(
    ("special", "words"), [("chr", "a character device"), ("blk", "a block device"), ("fifo", "a fifo")]
)
def test_a_device_or_fifo_in_a_tar_is_refused(place: Place, kind: str, special: str, words: str) -> None:
    message = refused_member(place, kind, [*GOOD, Member("dev", kind=special)])
    assert message == f"member 'dev' is {words}: only files and folders may be"


@pytest.mark.parametrize("special", ["chr", "fifo"])
def test_a_device_or_fifo_in_a_zip_is_refused(place: Place, special: str) -> None:
    message = refused_member(place, "zip", [*GOOD, Member("dev", kind=special)])
    assert message.startswith("member 'dev' is a special file")


def test_an_encrypted_zip_member_is_refused(place: Place) -> None:
    place.write(patch_zip(zip_bytes([Member("secret.py", b"x" * 100)]), flags=0x1))
    assert place.refused() == "member 'secret.py' is encrypted"


# -- sizes ------------------------------------------------------------------


def test_an_upload_over_its_limit_is_refused(place: Place) -> None:
    place.write(tar_bytes([Member("big.py", bytes(8000))]))
    message = place.refused(ArchiveLimits(max_upload_bytes=4096))
    assert message == "the archive is 10 KiB: more than the 4 KiB an upload may be"


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_too_many_files_are_refused(place: Place, kind: str) -> None:
    members = [Member(f"f{i}.py", b"x") for i in range(6)]
    message = refused_member(place, kind, members, ArchiveLimits(max_files=5))
    assert "takes the archive past 5 entries" in message or "more than 5 entries" in message


@pytest.mark.parametrize("kind", TAR_KINDS)
def test_the_folders_a_path_implies_count_as_entries(place: Place, kind: str) -> None:
    message = refused_member(place, kind, [Member("a/b/c/d.py", b"x")], ArchiveLimits(max_files=3))
    assert message == "member 'a/b/c/d.py' takes the archive past 3 entries (files and folders)"


@pytest.mark.parametrize("kind", ("tar.gz", "zip"))
def test_a_compression_bomb_is_refused_by_its_ratio(place: Place, kind: str) -> None:
    message = refused_member(place, kind, [*GOOD, Member("zeros.bin", bytes(2 * MiB))])
    assert message.startswith("member 'zeros.bin': the archive unpacks to more than 100 times its ")
    assert message.endswith("refused as a compression bomb")
    assert place.archive.stat().st_size < 20_000


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_more_than_the_unpacked_cap_is_refused(place: Place, kind: str) -> None:
    limits = ArchiveLimits(max_unpacked_bytes=MiB, max_ratio=1e9)
    message = refused_member(place, kind, [*GOOD, Member("zeros.bin", bytes(2 * MiB))], limits)
    assert message == "member 'zeros.bin': the archive unpacks to more than 1 MiB"


def test_the_cap_counts_the_sum_of_the_files(place: Place) -> None:
    members = [Member(f"part{i}.bin", bytes(300_000)) for i in range(4)]
    message = refused_member(place, "tar.gz", members, ArchiveLimits(max_unpacked_bytes=MiB, max_ratio=1e9))
    assert message == "member 'part3.bin': the archive unpacks to more than 1 MiB"


def test_a_gzip_stream_is_cut_off_past_what_its_tar_may_hold(place: Place) -> None:
    # A pax header is read whole into memory before any member is seen: the
    # stream stops at the budget plus a few KiB per entry, whatever it claims.
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("main.py")
        info.pax_headers = {"comment": "x" * (2 * MiB)}
        tar.addfile(info, io.BytesIO())
    place.write(buffer.getvalue())
    limits = ArchiveLimits(max_files=2, max_unpacked_bytes=64 * 1024, max_ratio=1e9)
    assert place.refused(limits) == "the archive unpacks to more than 64 KiB"


def test_a_zip_that_declares_a_huge_size_is_refused_before_anything_is_written(place: Place) -> None:
    place.write(patch_zip(zip_bytes([Member("huge.bin", b"tiny")]), size=3_000_000_000))
    assert place.refused().startswith("member 'huge.bin': the archive unpacks to more than 100 times its")


def test_a_zip_that_declares_less_than_it_holds_is_refused(place: Place) -> None:
    place.write(patch_zip(zip_bytes([Member("liar.bin", bytes(100_000))]), size=10))
    message = place.refused()
    assert message.startswith("member 'liar.bin': the archive is damaged (Bad CRC-32")


def test_bytes_beyond_a_declared_size_are_refused_as_they_are_read(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Should a reader ever hand out more than a header declares (zip members can
    # share data, headers can lie), the copy stops at the declared size.
    place.write(zip_bytes([Member("liar.bin", bytes(10))]))
    stream = CountingStream(bytes(2 * MiB))
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *args, **kwargs: stream)
    assert place.refused() == "member 'liar.bin' holds more than the 10 bytes it declares"
    assert stream.given == 11  # one byte past the declaration shows the lie; no more is read


# -- what is no archive -------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"", b"hello, I am a text file\n" * 40, random.Random(7).randbytes(4096), b"BZh91AY&SY" + bytes(600)],
    ids=["empty", "text", "noise", "bzip2"],
)
def test_what_is_no_archive_is_refused(place: Place, data: bytes) -> None:
    place.write(data)
    assert place.refused().startswith("the upload is not a zip, tar or tar.gz archive")


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_a_cut_archive_is_refused_as_damaged(place: Place, kind: str) -> None:
    whole = archive_bytes(kind, [Member("main.py", random.Random(3).randbytes(50_000))])
    place.write(whole[: len(whole) // 2])
    message = place.refused()
    assert "the archive is damaged" in message
    if kind == "tar":  # a cut gzip stream or zip directory shows before its members are read
        assert message.startswith("member 'main.py': ")


def test_a_gzip_stream_that_holds_no_tar_is_refused(place: Place) -> None:
    place.write(gzip.compress(b"just some text, no tar headers at all\n" * 20))
    assert place.refused().startswith("the upload holds no tar archive")


@pytest.mark.parametrize(
    "data",
    [
        tar_bytes([]),
        tar_bytes([Member("a", kind="dir")], "tar.gz"),
        zip_bytes([]),
        zip_bytes([Member("a", kind="dir")]),
    ],
    ids=["tar", "tar.gz of a folder", "zip", "zip of a folder"],
)
def test_an_archive_without_files_is_refused(place: Place, data: bytes) -> None:
    place.write(data)
    assert place.refused() == "the archive holds no files"


# -- good archives ------------------------------------------------------------

BOT = [
    Member("./", kind="dir", mode=0o755),
    Member("./bot", kind="dir", mode=0o775),
    Member("./bot/run.sh", SCRIPT, mode=0o4775),  # setuid and group write: dropped
    Member("./bot/lib/util.py", b"VALUE = 1\n", mode=0o666),
    Member("./README.md", b"# my bot\n", mode=0o600),
    Member("./bot/empty/", kind="dir", mode=0o700),
]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_a_good_archive_keeps_its_files_folders_and_executable_bits(place: Place, kind: str) -> None:
    place.write(archive_bytes(kind, BOT))
    done = unpack(place.archive, place.dest, ArchiveLimits())
    assert (done.files, done.bytes, done.kind) == (3, len(SCRIPT) + 10 + 9, kind)
    bot = place.dest / "bot"
    assert (bot / "run.sh").read_bytes() == SCRIPT
    assert (bot / "lib" / "util.py").read_text() == "VALUE = 1\n"
    assert (place.dest / "README.md").read_text() == "# my bot\n"
    assert mode(bot / "run.sh") == 0o755
    assert mode(bot / "lib" / "util.py") == mode(place.dest / "README.md") == 0o644
    assert mode(place.dest) == mode(bot) == mode(bot / "lib") == mode(bot / "empty") == 0o755
    assert sorted(p.name for p in (place.tmp / "store").iterdir()) == ["bot"]  # no temporary folder left


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_folders_a_path_implies_are_made(place: Place, kind: str) -> None:
    place.write(archive_bytes(kind, [Member("src/deep/bot.py", b"x"), Member("src/deep/more.py", b"y")]))
    assert unpack(place.archive, place.dest, ArchiveLimits()).files == 2
    assert (place.dest / "src" / "deep" / "more.py").read_bytes() == b"y"
    assert mode(place.dest / "src") == mode(place.dest / "src" / "deep") == 0o755


def test_the_destination_must_be_new(place: Place) -> None:
    place.write(archive_bytes("tar", BOT))
    place.dest.mkdir()
    with pytest.raises(FileExistsError):
        unpack(place.archive, place.dest, ArchiveLimits())
    assert list(place.dest.iterdir()) == []
    assert sorted(p.name for p in (place.tmp / "store").iterdir()) == ["bot"]


def test_limits_are_positive_numbers() -> None:
    for bad in ({"max_files": 0}, {"max_ratio": -1.0}, {"max_upload_bytes": 1.5}, {"max_unpacked_bytes": True}):
        with pytest.raises(ConfigError):
            ArchiveLimits(**bad)


# -- pack_folder --------------------------------------------------------------


def make_bot_folder(folder: Path) -> None:
    (folder / "bot" / "lib").mkdir(parents=True)
    (folder / "bot" / "run.sh").write_bytes(SCRIPT)
    (folder / "bot" / "run.sh").chmod(0o755)
    (folder / "bot" / "lib" / "util.py").write_text("VALUE = 1\n")
    (folder / "main.py").write_text("print('hi')\n")
    (folder / "data").mkdir()
    (folder / "data" / ".keep").write_text("")  # hidden below the top level: kept
    for skipped in [".git/HEAD", ".venv/bin/python", "__pycache__/main.cpython-311.pyc", "bot/lib/__pycache__/x.pyc"]:
        (folder / skipped).parent.mkdir(parents=True, exist_ok=True)
        (folder / skipped).write_text("skipped")
    (folder / "node_modules" / "left-pad").mkdir(parents=True)
    (folder / "node_modules" / "left-pad" / "index.js").write_text("skipped")
    (folder / "stale.pyc").write_bytes(b"skipped")
    (folder / ".env").write_text("TOKEN=secret")


def files_of(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), mode(p) & 0o100) for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_packed_folder_unpacks_to_its_files(place: Place) -> None:
    source = place.tmp / "src"
    make_bot_folder(source)
    place.write(pack_folder(source, ArchiveLimits()))
    done = unpack(place.archive, place.dest, ArchiveLimits())
    assert done.kind == "tar.gz" and done.files == 4
    assert files_of(place.dest) == {
        "bot/run.sh": (SCRIPT, 0o100),
        "bot/lib/util.py": (b"VALUE = 1\n", 0),
        "data/.keep": (b"", 0),
        "main.py": (b"print('hi')\n", 0),
    }
    assert (place.dest / "bot" / "lib").is_dir()


def test_packing_is_deterministic(tmp_path: Path) -> None:
    source = tmp_path / "src"
    make_bot_folder(source)
    first = pack_folder(source, ArchiveLimits())
    assert pack_folder(source, ArchiveLimits()) == first
    for path in source.rglob("*"):
        os.utime(path, (1_000_000_000, 1_000_000_000), follow_symlinks=False)
    (source / "main.py").chmod(0o600)  # a mode other than the executable bit does not count
    assert pack_folder(source, ArchiveLimits()) == first
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == [
        "bot",
        "bot/lib",
        "bot/lib/util.py",
        "bot/run.sh",
        "data",
        "data/.keep",
        "main.py",
    ]
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}


def test_packing_refuses_a_symbolic_link(tmp_path: Path) -> None:
    make_bot_folder(tmp_path)
    (tmp_path / "bot" / "lib" / "secrets.py").symlink_to("/etc/passwd")
    with pytest.raises(SubmissionRefused, match=r"^'bot/lib/secrets\.py' is a symbolic link"):
        pack_folder(tmp_path, ArchiveLimits())


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["Main.py", "main.py"], "member 'main.py' clashes with 'Main.py'"),
        (["bad\x1bname.py"], "member 'bad\\x1bname.py' holds a control or invisible character"),
    ],
)
def test_packing_refuses_names_the_arena_would_refuse(tmp_path: Path, names: list[str], expected: str) -> None:
    for name in names:
        (tmp_path / name).write_text("x")
    with pytest.raises(SubmissionRefused) as caught:
        pack_folder(tmp_path, ArchiveLimits())
    assert str(caught.value).startswith(expected)


def test_packing_refuses_what_is_too_much(tmp_path: Path) -> None:
    make_bot_folder(tmp_path)
    with pytest.raises(SubmissionRefused, match="past 5 entries"):
        pack_folder(tmp_path, ArchiveLimits(max_files=5))
    (tmp_path / "noise.bin").write_bytes(random.Random(5).randbytes(20_000))
    with pytest.raises(SubmissionRefused, match="more than the 16 KiB an upload may be"):
        pack_folder(tmp_path, ArchiveLimits(max_upload_bytes=16 * 1024))
    with pytest.raises(SubmissionRefused, match="more than 16 KiB of files"):
        pack_folder(tmp_path, ArchiveLimits(max_unpacked_bytes=16 * 1024))
    (tmp_path / "noise.bin").write_bytes(bytes(2 * MiB))
    with pytest.raises(SubmissionRefused, match="compression bomb"):
        pack_folder(tmp_path, ArchiveLimits())


def test_packing_refuses_a_folder_without_files(tmp_path: Path) -> None:
    (tmp_path / "empty" / "__pycache__").mkdir(parents=True)
    with pytest.raises(SubmissionRefused, match="holds no files"):
        pack_folder(tmp_path / "empty", ArchiveLimits())
