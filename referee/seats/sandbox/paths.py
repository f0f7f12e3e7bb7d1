"""Which file of a bot's command is its own program, and what its folder
must not hold: a bot sees its folder, so the referee's source, its
virtualenv and the run's logs and results must not be in it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import referee
from referee.errors import SandboxUnavailable
from referee.seats.sandbox.files import SYSTEM_DIRS
from referee.seats.sandbox.folder import check_folder


def under(path: Path, folder: Path) -> bool:
    """`path` is `folder` or inside it (both absolute; compared as text, which
    is what a start can afford: it runs for every bot start)."""
    text, base = str(path), str(folder)
    return text == base or text.startswith(os.path.join(base, ""))


def _is_system(path: Path) -> bool:
    return any(under(path, Path(d)) for d in SYSTEM_DIRS)


def bot_program(argv: tuple[str, ...], cwd: str | None) -> tuple[int, Path] | None:
    """(index in argv, resolved path) of the bot's own program file: the
    script after an interpreter, or the executable itself; None for a command
    that only uses the system (`sh -c ...`)."""
    base = Path(cwd) if cwd else Path.cwd()
    for i, arg in enumerate(argv):
        if arg.startswith("-") or (i == 0 and "/" not in arg) or (i == 0 and arg == sys.executable):
            continue
        path = Path(arg) if os.path.isabs(arg) else base / arg
        if path.is_file():
            resolved = path.resolve()
            if not _is_system(resolved):
                return i, resolved
    return None


def forbidden_paths(extra: list[Path] | tuple[Path, ...] = ()) -> list[Path]:
    """What no bot's folder may contain: the referee's source and virtualenv,
    and the run's logs, config and results."""
    found = [Path(referee.__file__).resolve().parent, Path(sys.prefix).resolve()]
    return found + [Path(p).resolve() for p in extra]


def check_bot(argv: tuple[str, ...], cwd: str | None, name: str, forbidden: list[Path]) -> str:
    """Refuse (SandboxUnavailable) a bot whose folder would expose what must
    stay hidden, or that cannot be shown to it; '' if all is as usual, else
    one line for the user (its folder will be shown as a copy)."""
    found = bot_program(argv, cwd)
    if found is None:
        return ""
    folder = found[1].parent
    for hidden in forbidden:
        if under(hidden, folder):
            raise SandboxUnavailable(
                f"bot {name!r}: its folder {folder} would be visible to it and holds {hidden}; "
                "put the bot in a folder of its own"
            )
    return check_folder(found[1], name)
