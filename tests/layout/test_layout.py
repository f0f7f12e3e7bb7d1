"""The layout of the house (docs/architecture.md): which wing may import which,
no import circles, pure rules engines, and a standalone `protocol/`.

The imports are read from the source with `ast`, function-level (lazy) imports
included, so a circle hidden inside a function still fails here.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from paths import DOCS, ROOT
from timing import scaled

PACKAGES = ("referee", "protocol")

# What each wing may import. "core" is referee/__init__ (the version), the
# error family and `visible` (bot text made safe to show); "protocol" is the
# wire contract. A wing never imports one above it.
# "bot_names" is `referee.bots` itself, the listing of the built-in bots' names (it imports nothing), which the
# seats resolve bot commands with; "bots" are the bots' modules, run as processes, which no wing imports.
ALLOWED: dict[str, set[str]] = {
    "protocol": {"protocol"},
    "core": {"core"},
    "bot_names": {"bot_names"},
    "games": {"protocol", "core", "games"},
    "bots": {"protocol", "core", "games", "bot_names", "bots"},
    "stats": {"core", "stats"},
    "seats": {"protocol", "core", "games", "seats", "bot_names"},
    "logs": {"protocol", "core", "logs"},
    "play": {"protocol", "core", "games", "stats", "seats", "logs", "play", "bot_names"},
    "replay": {"protocol", "core", "games", "stats", "logs", "play", "replay", "bot_names"},
    "tournament": {"protocol", "core", "games", "stats", "seats", "logs", "play", "replay", "tournament", "bot_names"},
    "human": {"protocol", "core", "games", "seats", "logs", "play", "replay", "human", "bot_names"},
    # The web wing: the shared stack (guard, sessions, templates), the browser seat, and the arena's pages
    # over the arena and its replays.
    "web": {
        "protocol",
        "core",
        "games",
        "stats",
        "seats",
        "logs",
        "play",
        "replay",
        "tournament",
        "arena",
        "web",
        "bot_names",
    },
    "live": {
        "protocol",
        "core",
        "games",
        "stats",
        "seats",
        "logs",
        "play",
        "replay",
        "tournament",
        "web",
        "live",
        "bot_names",
    },
    # The arena composes the wings below it; its pages for people are the web wing's, above it.
    "arena": {
        "protocol",
        "core",
        "games",
        "stats",
        "seats",
        "logs",
        "play",
        "replay",
        "tournament",
        "arena",
        "bot_names",
    },
    "cli": {
        "protocol",
        "core",
        "games",
        "stats",
        "seats",
        "logs",
        "play",
        "replay",
        "tournament",
        "human",
        "web",
        "live",
        "arena",
        "cli",
        "bot_names",
    },
}
# Libraries that mean I/O, concurrency or a terminal: never in a rules engine.
IMPURE = {"trio", "typer", "rich", "subprocess", "sqlite3", "socket", "asyncio", "threading", "signal"}
MAX_FLAT_MODULES = 4


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every module (ours or third-party top-level) that `name` imports."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import submodule` is an import of the submodule itself
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
            found.update(subs if len(subs) == len(node.names) else [target, *subs])
    return found


def wing(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "protocol":
        return "protocol"
    if parts[0] != "referee":
        return None
    if len(parts) == 1 or parts[1] in ("errors", "visible"):
        return "core"
    if parts[1:] == ["bots"]:
        return "bot_names"
    return parts[1]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_every_module_belongs_to_a_known_wing(graph: dict[str, set[str]]) -> None:
    unknown = sorted(m for m in graph if wing(m) not in ALLOWED)
    assert not unknown, f"modules outside the wings of docs/architecture.md: {unknown}"


def test_referee_keeps_at_most_four_flat_modules() -> None:
    flat = sorted(p.name for p in (ROOT / "referee").glob("*.py"))
    assert len(flat) <= MAX_FLAT_MODULES, flat


def test_imports_run_one_way(graph: dict[str, set[str]]) -> None:
    broken = []
    for module, targets in graph.items():
        for target in targets:
            w = wing(target)
            if w is not None and w not in ALLOWED[wing(module)]:
                broken.append(f"{module} imports {target} ({wing(module)} may not import {w})")
    assert not broken, "\n".join(sorted(broken))


def test_rules_engines_and_protocol_are_pure(graph: dict[str, set[str]]) -> None:
    impure = [
        f"{module} imports {target}"
        for module, targets in graph.items()
        if wing(module) in ("games", "protocol")
        for target in targets
        if target.split(".")[0] in IMPURE
    ]
    assert not impure, impure


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle among our modules, or None (iterative DFS)."""
    ours = {m: {t for t in ts if t in graph and t != m} for m, ts in graph.items()}
    state: dict[str, int] = {}
    for start in sorted(ours):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(ours[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child) :] + [child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(ours[child]))))
    return None


def test_no_import_circles(graph: dict[str, set[str]]) -> None:
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_planted_circle() -> None:
    planted = {"referee.a": {"referee.b"}, "referee.b": {"referee.c"}, "referee.c": {"referee.a"}, "referee.d": set()}
    assert find_cycle(planted) == ["referee.a", "referee.b", "referee.c", "referee.a"]
    assert find_cycle({"referee.a": {"referee.b"}, "referee.b": set()}) is None


def test_every_package_says_what_lives_there() -> None:
    for init in sorted((ROOT / "referee").rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert "import" in doc.lower(), f"{init.relative_to(ROOT)}: the docstring must say what the package may import"


def test_the_architecture_map_names_every_wing() -> None:
    text = (DOCS / "architecture.md").read_text()
    wings = {p.parent.name for p in (ROOT / "referee").glob("*/__init__.py")}
    missing = sorted(w for w in wings if f"referee/{w}/" not in text)
    assert not missing, f"docs/architecture.md does not describe: {missing}"


def test_the_documented_public_names_import_in_a_fresh_interpreter() -> None:
    names = "new_game, play_game, random_policy, Deal, parse_cards, hand_value, GAMES, get_game"
    done = subprocess.run(
        [sys.executable, "-c", f"from referee.games import {names}; print(hand_value('As Ks Qs Js Ts').describe())"],
        capture_output=True,
        text=True,
        cwd=DOCS,
        timeout=scaled(60),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "royal flush"


def test_the_library_example_runs() -> None:
    readme = (DOCS / "library.md").read_text()
    block = next(b.split("\n", 1)[1] for b in readme.split("```python")[1:] if "from referee.games import" in b)
    code = block.split("```", 1)[0]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=DOCS, timeout=scaled(60))
    assert done.returncode == 0, done.stderr
    assert "two pair, kings and fours" in done.stdout
