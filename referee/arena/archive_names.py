"""The names inside an uploaded archive, judged before anything is written.

A member's name decides where its bytes land, so a hostile archive attacks
through names first: an absolute path or a `..` climbs out of the folder
("zip slip"), a backslash is a separator to some tools and not to others, a
control or invisible character hides what a name is from the person reading
it, and two names that differ only in case (or Unicode form) overwrite each
other on a filesystem that folds them; a name deeper than 32 folders or
longer than a filesystem takes costs every check per component and serves
no bot. Such names are refused, never rewritten: a refusal says what was
wrong, a quiet repair hides it.

`member_parts` judges one name; `NameBook` judges each name against the
ones before it (duplicates, case clashes, a file where a folder is needed)
and counts the entries an archive makes, the folders its paths imply
included, so that `max_files` bounds what unpacking creates. `pack_folder`
(archives.py) runs a competitor's folder through the same checks, so what
`arena submit` sends, the server takes.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from referee.errors import SubmissionRefused
from referee.visible import visible

__all__ = ["MAX_DEPTH", "MAX_NAME_CHARS", "MAX_PART_BYTES", "NameBook", "member_parts", "shown"]

MAX_NAME_CHARS = 1024  # a whole member name
MAX_PART_BYTES = 255  # one path component, in UTF-8: what Linux filesystems take
MAX_DEPTH = 32  # components of one name: deeper costs every check per component, and no bot needs it
_SHOWN_CHARS = 100  # a longer name is cut in messages, which stay one line


def shown(name: str) -> str:
    """A member's name for a one-line message: quoted, every control or
    invisible character and every backslash escaped, long names cut."""
    text = repr(name) if len(name) <= _SHOWN_CHARS else repr(name[:_SHOWN_CHARS]) + "..."
    return visible(text)


def _refuse(name: str, reason: str) -> SubmissionRefused:
    return SubmissionRefused(f"member {shown(name)} {reason}")


def member_parts(name: str) -> tuple[str, ...]:
    """The path components of a member name, relative to the archive's
    folder; `()` is the folder itself. `.` components (as `tar -C dir .`
    writes them) name the folder they are in; a folder's trailing slash is
    allowed. Anything else odd is refused with SubmissionRefused."""
    if not name:
        raise SubmissionRefused("a member has an empty name")
    if "\x00" in name:
        raise _refuse(name, "holds a NUL character")
    if visible(name) != name:  # visible() escapes exactly the control and invisible characters
        raise _refuse(name, "holds a control or invisible character")
    if "\\" in name:
        raise _refuse(name, "holds a backslash")
    if name.startswith("/"):
        raise _refuse(name, "is an absolute path")
    if len(name) > MAX_NAME_CHARS:
        raise _refuse(name, f"is longer than {MAX_NAME_CHARS} characters")
    parts = name.split("/")
    if parts[-1] == "":
        parts.pop()
    if len(parts) > MAX_DEPTH:
        raise _refuse(name, f"is more than {MAX_DEPTH} folders deep")
    kept = []
    for part in parts:
        if part == "..":
            raise _refuse(name, "climbs out of its folder with '..'")
        if part == "":
            raise _refuse(name, "holds an empty path component ('//')")
        if len(part.encode()) > MAX_PART_BYTES:
            raise _refuse(name, f"has a path component longer than {MAX_PART_BYTES} bytes")
        if part != ".":
            kept.append(part)
    return tuple(kept)


def _folded(parts: tuple[str, ...]) -> tuple[str, ...]:
    """What a case-folding, normalizing filesystem would make of a path."""
    return tuple(unicodedata.normalize("NFKC", part).casefold() for part in parts)


@dataclass
class _Entry:
    parts: tuple[str, ...]  # as spelled by the member that made it
    is_dir: bool
    named: bool  # a member of its own, not only a folder its members' paths imply


class NameBook:
    """The entries an archive has made so far, by folded path: refuses a
    member that repeats or clashes with an earlier one, and the entry that
    takes the archive past `max_entries` files and folders."""

    def __init__(self, max_entries: int) -> None:
        self._max_entries = max_entries
        self._entries: dict[tuple[str, ...], _Entry] = {}
        self._root_named = False

    def add(self, name: str, parts: tuple[str, ...], *, is_dir: bool) -> list[tuple[str, ...]]:
        """Take member `name` (its `member_parts`); return the folders to
        create for it, parents first, the member itself if it is a new folder."""
        if not parts:
            if not is_dir:
                raise _refuse(name, "is a file in place of the archive's folder itself")
            if self._root_named:
                raise _refuse(name, "appears twice in the archive")
            self._root_named = True
            return []
        folded = _folded(parts)
        new: list[tuple[str, ...]] = []
        for depth in range(1, len(parts) + 1):
            path, named = parts[:depth], depth == len(parts)
            entry = self._entries.get(folded[:depth])
            if entry is None:
                self._entries[folded[:depth]] = _Entry(path, is_dir or not named, named)
                if is_dir or not named:
                    new.append(path)
            elif entry.parts != path:
                shown_earlier = shown("/".join(entry.parts))
                raise _refuse(name, f"clashes with {shown_earlier}: names may not differ only in case or Unicode form")
            elif not named and not entry.is_dir:
                raise _refuse(name, f"needs {shown('/'.join(path))} as a folder, and the archive has it as a file")
            elif named and entry.is_dir != is_dir:
                raise _refuse(name, "is both a file and a folder in the archive")
            elif named and entry.named:
                raise _refuse(name, "appears twice in the archive")
            elif named:
                entry.named = True  # a folder named after its contents implied it
        if len(self._entries) > self._max_entries:
            raise _refuse(name, f"takes the archive past {self._max_entries} entries (files and folders)")
        return new
