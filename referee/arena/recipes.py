"""What a bot folder is, and how it builds and runs: its recipe.

A competitor should not have to learn a build system of ours. A folder
that looks like the usual program of its language builds and runs without
a word (the detection table below, first match wins); anything else says
how in a `bot.toml` at the top of the folder:

    name = "my-bot"                    # optional
    build = "javac -d classes Main.java && jar --create --file bot.jar --main-class Main -C classes ."
    run = "java -jar bot.jar"          # starts the bot; its files named relative to the folder

(`build` is optional: one shell command, run in the folder.)

| the folder holds          | language   | build                             | run                        |
| ------------------------- | ---------- | --------------------------------- | -------------------------- |
| `main.py`                 | python     | none                              | `python3 -u main.py`       |
| `main.js`                 | javascript | none                              | `node main.js`             |
| `Makefile`                | c          | `make`                            | `./bot`                    |
| `go.mod` and `*.go` files | go         | `go build -o bot .`               | `./bot`                    |
| `Cargo.toml`              | rust       | `cargo build --release --offline` | `target/release/<package>` |
| `main.c`                  | c          | `cc -O2 -o bot main.c`            | `./bot`                    |

A `bot.toml` always wins over detection. Pure: this module reads the
folder's few files and never runs anything; a refusal is one
`SubmissionRefused` line that names the file and the key.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import SubmissionRefused
from referee.visible import visible

MANIFEST = "bot.toml"
MANIFEST_KEYS = ("name", "build", "run")
LANGUAGES = ("python", "javascript", "c", "go", "rust", "custom")
MAX_MANIFEST_BYTES = 64 << 10
MAX_COMMAND_CHARS = 4096
MAX_NAME_CHARS = 64
_CRATE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Recipe:
    """How one bot folder builds (a shell command run in it, or none) and runs
    (argv, with the bot's own files named relative to the folder)."""

    language: str  # one of LANGUAGES; "custom" for a bot.toml
    build: str | None
    run: tuple[str, ...]
    source: str  # where it came from: "bot.toml" or "detected main.py"
    name: str | None = None  # bot.toml's `name`, if it gave one

    def as_dict(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "build": self.build,
            "run": list(self.run),
            "source": self.source,
            "name": self.name,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Recipe:
        return cls(
            language=str(data["language"]),
            build=None if data.get("build") is None else str(data["build"]),
            run=tuple(str(word) for word in data["run"]),
            source=str(data["source"]),
            name=None if data.get("name") is None else str(data["name"]),
        )


def find_recipe(folder: Path) -> Recipe:
    """The recipe of the bot in `folder`: its bot.toml, else the first row of
    the detection table that matches. SubmissionRefused (one line) if neither."""
    manifest = folder / MANIFEST
    if manifest.is_file() and not manifest.is_symlink():
        return read_manifest(manifest)
    for detect in DETECTORS:
        recipe = detect(folder)
        if recipe is not None:
            return recipe
    raise SubmissionRefused(
        f"no {MANIFEST}, and nothing the arena knows how to build: looked for {LOOKED_FOR} at the top of the "
        f'folder; add a {MANIFEST} that says how it builds and runs (run = "...", build = "...")'
    )


def read_manifest(path: Path) -> Recipe:
    """A bot.toml read and checked; every refusal names the key."""
    with open(path, "rb") as file:
        data = file.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise SubmissionRefused(f"{MANIFEST} is larger than {MAX_MANIFEST_BYTES >> 10} KiB")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise SubmissionRefused(f"{MANIFEST} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise SubmissionRefused(f"{MANIFEST} is not valid TOML: {visible(str(exc))}") from None
    unknown = [key for key in table if key not in MANIFEST_KEYS]
    if unknown:
        raise SubmissionRefused(
            f"{MANIFEST}: unknown key {visible(unknown[0])!r}; the keys are {', '.join(MANIFEST_KEYS)}"
        )
    if "run" not in table:
        raise SubmissionRefused(
            f"{MANIFEST}: `run` is missing: the command that starts the bot, relative to its folder "
            '(run = "python3 main.py", run = "./bot")'
        )
    return Recipe(
        language="custom",
        build=_build_command(table.get("build")),
        run=run_words(table["run"], f"{MANIFEST}: `run`"),
        source=MANIFEST,
        name=_bot_name(table.get("name")),
    )


def _build_command(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SubmissionRefused(f'{MANIFEST}: `build` must be one shell command as a string (build = "make")')
    if len(value) > MAX_COMMAND_CHARS:
        raise SubmissionRefused(f"{MANIFEST}: `build` is longer than {MAX_COMMAND_CHARS} characters")
    return value


def _bot_name(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SubmissionRefused(f"{MANIFEST}: `name` must be a string")
    if len(value) > MAX_NAME_CHARS or visible(value) != value:
        raise SubmissionRefused(
            f"{MANIFEST}: `name` must be at most {MAX_NAME_CHARS} characters, with no control characters"
        )
    return value


def run_words(value: object, where: str) -> tuple[str, ...]:
    """`run` as argv: a string split like a shell line, or a list of strings;
    refused if it is empty or names a path outside the folder."""
    if isinstance(value, str):
        if len(value) > MAX_COMMAND_CHARS:
            raise SubmissionRefused(f"{where} is longer than {MAX_COMMAND_CHARS} characters")
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise SubmissionRefused(f"{where} cannot be split into words: {exc}; check its quotes") from None
    elif isinstance(value, list) and all(isinstance(word, str) for word in value):
        words = list(value)
    else:
        raise SubmissionRefused(f'{where} must be a command: a string or a list of strings (run = "./bot")')
    if not words or not words[0]:
        raise SubmissionRefused(f"{where} is empty: give the command that starts the bot")
    for word in words:
        if escapes(word):
            raise SubmissionRefused(
                f"{where} names {visible(word)!r}, outside the bot's folder: name its files relative to the "
                "folder, and system programs by their bare name (python3, node, java)"
            )
    return tuple(words)


def escapes(word: str) -> bool:
    """A word that names a path outside the folder: absolute, or with a `..`
    (also after `=`, as in `-Dpath=../x`)."""
    return any(text.startswith("/") or ".." in text.split("/") for text in (word, word.partition("=")[2]))


# The detection table, first match wins (the module docstring and docs/arena.md, "Builds" show it).


def _python(folder: Path) -> Recipe | None:
    if _is_file(folder / "main.py"):
        return Recipe("python", None, ("python3", "-u", "main.py"), "detected main.py")  # -u: as `.py` bots run
    return None


def _javascript(folder: Path) -> Recipe | None:
    if _is_file(folder / "main.js"):
        return Recipe("javascript", None, ("node", "main.js"), "detected main.js")
    return None


def _makefile(folder: Path) -> Recipe | None:
    if _is_file(folder / "Makefile"):
        return Recipe("c", "make", ("./bot",), "detected Makefile")
    return None


def _go(folder: Path) -> Recipe | None:
    if _is_file(folder / "go.mod") and any(_is_file(p) for p in folder.glob("*.go")):
        return Recipe("go", "go build -o bot .", ("./bot",), "detected go.mod")
    return None


def _rust(folder: Path) -> Recipe | None:
    manifest = folder / "Cargo.toml"
    if not _is_file(manifest):
        return None
    name = crate_name(manifest)
    return Recipe("rust", "cargo build --release --offline", (f"target/release/{name}",), "detected Cargo.toml")


def _c(folder: Path) -> Recipe | None:
    if _is_file(folder / "main.c"):
        return Recipe("c", "cc -O2 -o bot main.c", ("./bot",), "detected main.c")
    return None


DETECTORS: tuple[Callable[[Path], Recipe | None], ...] = (_python, _javascript, _makefile, _go, _rust, _c)
LOOKED_FOR = "main.py, main.js, a Makefile, go.mod with .go files, Cargo.toml, main.c"


def crate_name(manifest: Path) -> str:
    """`[package] name` of a Cargo.toml: the binary `cargo build` makes."""
    try:
        with open(manifest, "rb") as file:
            data = file.read(MAX_MANIFEST_BYTES + 1)
        table = tomllib.loads(data[:MAX_MANIFEST_BYTES].decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SubmissionRefused(f"Cargo.toml is not valid TOML: {visible(str(exc))}") from None
    package = table.get("package")
    name = package.get("name") if isinstance(package, dict) else None
    if not isinstance(name, str) or not _CRATE_NAME.match(name):
        raise SubmissionRefused(
            "Cargo.toml: [package] `name` is missing or is not a crate name (letters, digits, - and _); "
            f"or add a {MANIFEST} with the run command"
        )
    return name


def _is_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()
