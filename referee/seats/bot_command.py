"""A bot as the user names it, made into the command that starts it.

`resolve_command` reads what a user types (`mybot.py`, `node bot.js`,
`./bot`, `java -jar bot.jar`, or a built-in bot's name such as `pimc`) into
a `BotSpec`: the argv, the name the bot is shown under, and whether it runs
sandboxed. `check_runnable` refuses a command that cannot start, before the
first game, in one line that names the bot.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from referee.bots import BUILTIN_BOTS, BuiltinBot
from referee.errors import BotStartError
from referee.seats.sandbox import SandboxLimits


@dataclass(frozen=True)
class BotSpec:
    """A bot as the user names it: a label and the argv that starts it; with
    `sandbox` limits it runs isolated, and `hidden` names paths of the run
    (logs, config, results) its visible folder must not contain."""

    name: str
    argv: tuple[str, ...]
    cwd: str | None = None
    sandbox: SandboxLimits | None = None
    hidden: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] | None = None  # unsandboxed: this environment instead of the referee's


def resolve_command(
    command: str | Sequence[str], name: str | None = None, cwd: str | None = None, sandbox: SandboxLimits | None = None
) -> BotSpec:
    """Split like a shell; run `.py` with this Python (in a sandbox: the system
    Python of the same version) and `.js` with node. A first word that is a
    built-in bot's name (`pimc`, `greedy`, ...: `referee.bots`) runs that bot,
    its options after it (`pimc --budget-ms 100`); a word with a `/` is always
    a path, so a file of the same name is `./pimc`."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError as exc:  # an unbalanced quote
        raise BotStartError(f"bot command {command!r} cannot be split into words: {exc}; check its quotes") from None
    if not argv:
        raise BotStartError("empty bot command")
    first = argv[0]
    builtin = BUILTIN_BOTS.get(first)
    if builtin is not None:
        return BotSpec(name=name or builtin.name, argv=_builtin_argv(builtin, argv[1:]), cwd=cwd, sandbox=sandbox)
    base = Path(cwd) if cwd else Path.cwd()
    path = Path(first) if Path(first).is_absolute() else base / first
    words = list(argv)  # as written: the name comes from these
    if first.endswith(".py"):
        argv = [sys.executable, "-u", first, *argv[1:]]
    elif first.endswith(".js"):
        node = shutil.which("node") or shutil.which("nodejs")
        if node is None:
            raise BotStartError(f"cannot run {first}: node (Node.js) is not installed")
        argv = [node, first, *argv[1:]]
    elif path.is_dir():
        raise BotStartError(f"bot {first!r} is a directory; give the program to run")
    named = _named_after(words)
    label = name or Path(named).stem or named
    return BotSpec(name=label, argv=tuple(argv), cwd=cwd, sandbox=sandbox)


def _builtin_argv(bot: BuiltinBot, options: Sequence[str] = ()) -> tuple[str, ...]:
    """This Python running the bot's module. `-P`: the working folder is not
    put on the module path, so a `referee/` folder there cannot stand in for
    the installed one."""
    return (sys.executable, "-u", "-P", "-m", bot.module, *options)


# Interpreter options whose value is the next word, and the option after
# which the next word is the program (`java -jar my.jar`, `python -m pkg.bot`).
_OPTIONS_WITH_VALUE = {"-W", "-X", "-cp", "-classpath", "--class-path", "-r", "--require"}
_PROGRAM_OPTIONS = {"-jar", "-m"}
_INLINE_PROGRAM = {"-c", "-e", "--eval"}  # the program is text on the command line: named after the interpreter


def _named_after(words: Sequence[str]) -> str:
    """The word a command is named after: the script, jar or module an
    interpreter runs (`python3 -u mybot.py` is `mybot`, `java -jar my.jar`
    is `my`, `python -m pkg.bot` is `bot`), else the program itself."""
    first = words[0]
    if not _is_interpreter(first):
        return first
    i = 1
    while i < len(words):
        word = words[i]
        if word in _PROGRAM_OPTIONS and i + 1 < len(words):
            following = words[i + 1]
            return following.rsplit(".", 1)[-1] if word == "-m" else following
        if word in _INLINE_PROGRAM:
            return first
        if word == "--":
            return words[i + 1] if i + 1 < len(words) else first
        if not word.startswith("-"):
            return word
        i += 2 if word in _OPTIONS_WITH_VALUE else 1
    return first


def _is_interpreter(word: str) -> bool:
    name = Path(word).name
    return name in ("node", "nodejs", "ruby", "perl", "java") or re.fullmatch(r"python[0-9.]*", name) is not None


def _program_of(argv: list[str]) -> tuple[str, bool]:
    """(the file or program a command runs, whether it is a script an
    interpreter reads rather than an executable)."""
    if len(argv) > 2 and argv[1] == "-u" and argv[2].endswith(".py") and "python" in Path(argv[0]).name:
        return argv[2], True  # a .py script run with a Python
    if len(argv) > 1 and Path(argv[0]).name.startswith("node") and argv[1].endswith(".js"):
        return argv[1], True
    return argv[0], False


def check_runnable(spec: BotSpec, label: str | None = None) -> None:
    """Fail before the first game, naming the bot, when its program cannot run:
    a missing script or program, a file without its exec bit, a folder.
    (A typo would otherwise lose every game of the match.)"""
    who = label or spec.name
    target, script = _program_of(list(spec.argv))
    if not script and "/" not in target:
        if shutil.which(target) is None:
            raise BotStartError(f"{who}: {target!r} is not a program on the PATH")
        return
    cwd = Path(spec.cwd) if spec.cwd else Path.cwd()
    path = Path(target) if Path(target).is_absolute() else cwd / target
    if not path.exists():
        near = [p.name for p in (path.with_suffix(s) for s in (".py", ".js")) if p.exists() and p != path]
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise BotStartError(f"{who}: {target} does not exist{hint} (looked in {path.parent})")
    if path.is_dir():
        raise BotStartError(f"{who}: {target} is a folder; give the program to run")
    if not script and not os.access(path, os.X_OK):
        raise BotStartError(
            f'{who}: {target} is not executable: chmod +x {target}, or name its interpreter (e.g. "python3 {target}")'
        )
