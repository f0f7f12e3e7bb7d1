"""Starter kits: one small, complete bot per language the arena can build.

A competitor's first question is how to start. `arena kit LANG FOLDER`
writes a kit: a bot that answers the referee, keeps a typed view of what it
is shown, plays a legal move in every game the arena hosts, logs to stderr,
and builds offline in the build sandbox with nothing but its language's
standard toolchain; its `bot.toml` says how, and its README how to check
and submit it. Submitted unchanged it passes the gate; then it is theirs
to improve.

The kits live beside this module as package data (`kits/<language>/`), so
an installed referee writes the same files a checkout holds. Every kit
draws its random choices from the same generator (SplitMix64, seeded with
the game's `seed`) and makes the same move from the same request, which
lets the tests hold all of them to one expected transcript.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from referee.arena.recipes import MANIFEST, Recipe, read_manifest
from referee.arena.toolchains import Toolchain
from referee.errors import ConfigError


@dataclass(frozen=True)
class Kit:
    """One language's kit: what it is called and what it needs to build and run."""

    language: str  # the name `arena kit` takes, and the kit's folder
    title: str
    toolchains: tuple[str, ...]  # names of `toolchains.PROBES` it builds and runs with
    install: str  # the Debian packages that bring them


KITS: dict[str, Kit] = {
    kit.language: kit
    for kit in (
        Kit("python", "Python", ("python3",), "python3"),
        Kit("javascript", "JavaScript (Node.js)", ("node",), "nodejs"),
        Kit("c", "C", ("cc",), "gcc"),
        Kit("cpp", "C++", ("c++",), "g++"),
        Kit("go", "Go", ("go",), "golang-go"),
        Kit("rust", "Rust", ("rustc",), "rustc"),
        Kit("java", "Java", ("javac", "java"), "default-jdk-headless"),
    )
}
KIT_LANGUAGES = tuple(KITS)
_LEFT_OUT = frozenset({"__pycache__"})  # what running a kit in place may leave beside it


def get_kit(language: str) -> Kit:
    """The kit of `language`; ConfigError (one line) naming the languages if there is none."""
    kit = KITS.get(language)
    if kit is None:
        raise ConfigError(f"no starter kit for {language!r}: the languages are {', '.join(KIT_LANGUAGES)}")
    return kit


def kit_files(kit: Kit) -> list[tuple[str, bytes]]:
    """The kit's files: (name relative to the kit's folder, with `/`, and content), sorted by name."""
    files: list[tuple[str, bytes]] = []
    _collect(resources.files("referee.arena") / "kits" / kit.language, "", files)
    if not files:
        raise ConfigError(f"the {kit.title} starter kit is missing from this installation of the referee")
    return sorted(files)


def _collect(folder: Traversable, prefix: str, files: list[tuple[str, bytes]]) -> None:
    for entry in folder.iterdir():
        if entry.name in _LEFT_OUT or entry.name.endswith(".pyc"):
            continue
        name = prefix + entry.name
        if entry.is_dir():
            _collect(entry, name + "/", files)
        else:
            files.append((name, entry.read_bytes()))


def write_kit(kit: Kit, target: Path) -> list[Path]:
    """Write the kit's files into `target`, a new or empty folder (made if
    need be); the files written. A file or a folder that holds anything is
    refused with one line, and nothing is written."""
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} is a file: give a new or empty folder for the {kit.title} kit")
    if target.is_dir() and any(target.iterdir()):
        raise ConfigError(f"{target} is not empty: give a new or empty folder for the {kit.title} kit")
    files = kit_files(kit)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in files:
        path = target.joinpath(*name.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb") as out:  # never over a file that appeared meanwhile
            out.write(content)
        written.append(path)
    return written


def kit_recipe(folder: Path) -> Recipe:
    """How a written kit builds and runs: its bot.toml, as the arena reads it."""
    return read_manifest(folder / MANIFEST)


def local_steps(recipe: Recipe, folder: Path) -> list[str]:
    """The shell lines that build the kit in `folder` and check it with the
    referee, here, as the arena would (its `build`, then `check` on its `run`)."""
    steps = [f"cd {shlex.quote(os.fspath(folder))}"]
    if recipe.build is not None:
        steps.append(recipe.build)
    steps.append(f"chicago-referee check {shlex.quote(shlex.join(recipe.run))}")
    return steps


def missing_toolchains(kit: Kit, chains: list[Toolchain]) -> list[str]:
    """The kit's toolchains that `chains` (a `probe_toolchains` result) did not find working."""
    found = {chain.name for chain in chains if chain.found}
    return [name for name in kit.toolchains if name not in found]
