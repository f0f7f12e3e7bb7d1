"""The package as a user installs it: a wheel built from this checkout,
installed into a fresh virtual environment outside it, plays with the
built-in bots by name from a folder that holds no checkout (`match greedy
pimc`, `play` with no bot named, `bench` with none, a sandboxed match).

Offline, as every test: the wheel is built without build isolation (so
setuptools>=77 must be installed here: the `test` extra brings it), from a
copy of the sources so the build leaves nothing in the checkout, and
installed with `--no-deps --no-index`. The fresh environment borrows its
dependencies (trio, msgspec, typer, ...) from this one through a `.pth` file
naming this environment's site-packages: a plain path line, whose own
`.pth` files are not read, so the editable install of this checkout (a
finder that a `.pth` file there loads) stays out, and `referee` and
`protocol` come from the wheel alone, as the test checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from needs import needs_sandbox
from paths import ROOT
from timing import scaled

from referee.arena.kits import KITS, kit_files
from referee.bots import BUILTIN_BOTS

SOURCES = ("pyproject.toml", "README.md", "referee", "protocol")
STEP_LIMIT_S = scaled(300)  # each command; the whole test takes well under a minute on an idle machine
pytestmark = pytest.mark.slow


def _setuptools_version() -> tuple[int, ...] | None:
    try:
        import setuptools
    except ImportError:
        return None
    return tuple(int(part) for part in setuptools.__version__.split(".")[:2] if part.isdigit())


def _run(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(COLUMNS="120", NO_COLOR="1", TERM="dumb")
    return subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=STEP_LIMIT_S)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A venv outside the checkout with the wheel installed, and an empty folder to run in."""
    version = _setuptools_version()
    if version is None or version < (77,):
        pytest.skip(
            "building the wheel offline needs setuptools>=77 here: pip install 'setuptools>=77' "
            "(the `test` extra and .ci/run install it)"
        )
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    source.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(path, source / name)
    dist = base / "dist"
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(dist),
            str(source),
        ],
        cwd=base,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next(dist.glob("chicago_referee-*.whl"))
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base).stdout.strip()
    )
    ours = sysconfig.get_paths()
    site.mkdir(parents=True, exist_ok=True)
    (site / "borrowed-dependencies.pth").write_text(
        "".join(f"{p}\n" for p in dict.fromkeys([ours["purelib"], ours["platlib"]]))
    )
    done = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        cwd=base,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return {"wheel": wheel, "venv": venv, "python": python, "cli": venv / "bin" / "chicago-referee", "cwd": elsewhere}


def test_the_wheel_holds_the_built_in_bots_and_no_checkout_folders(installed: dict[str, Path]) -> None:
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    for bot in BUILTIN_BOTS.values():
        assert bot.module.replace(".", "/") + ".py" in names, bot.module
    assert {"referee/py.typed", "protocol/py.typed"} <= set(names)  # typed packages, for a bot writer's mypy
    assert not [n for n in names if n.startswith(("sample_bots/", "tests/", "docs/"))]


def test_the_wheel_holds_every_starter_kit_and_arena_kit_writes_one(installed: dict[str, Path]) -> None:
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    for kit in KITS.values():
        for name, _content in kit_files(kit):
            assert f"referee/arena/kits/{kit.language}/{name}" in names, (kit.language, name)
    done = _run([str(installed["cli"]), "arena", "kit", "rust", "rusty"], cwd=installed["cwd"])
    assert done.returncode == 0, done.stderr
    written = installed["cwd"] / "rusty"
    assert (written / "src" / "main.rs").read_bytes() == dict(kit_files(KITS["rust"]))["src/main.rs"]


def test_referee_and_protocol_come_from_the_wheel(installed: dict[str, Path]) -> None:
    done = _run(
        [
            str(installed["python"]),
            "-c",
            "import protocol, referee, referee.bots.pimc; print(referee.__file__); print(protocol.__file__)",
        ],
        cwd=installed["cwd"],
    )
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        assert Path(line).is_relative_to(installed["venv"]), line


def test_a_match_of_built_in_bots_by_name(installed: dict[str, Path]) -> None:
    cwd = installed["cwd"]
    # pimc searches a share of its clock: a clock that never binds, and a fixed number of
    # iterations, keep a busy machine from turning its thinking into a timeout.
    cmd = [str(installed["cli"]), "match", "greedy", "pimc --iterations 40", "--games", "4", "--json"]
    done = _run([*cmd, "--log-dir", "match", "--time-control", "decision=60s,startup=60s"], cwd=cwd)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [b["name"] for b in summary["bots"]] == ["greedy", "pimc"]
    assert len(summary["results"]) == 4
    assert all(not b["failures"] for b in summary["bots"]) and all(not r["failures"] for r in summary["results"])
    header = json.loads((cwd / "match" / "game-00001.jsonl").read_text().splitlines()[0])
    argvs = {p["name"]: p["argv"] for p in header["players"]}
    assert argvs["pimc"] == [str(installed["python"]), "-u", "-P", "-m", "referee.bots.pimc", "--iterations", "40"]


def test_play_with_no_bot_named_seats_pimc(installed: dict[str, Path]) -> None:
    cwd = installed["cwd"]
    done = _run(
        [str(installed["cli"]), "play", "--seed", "3", "--rule", "target_score=12", "--log-dir", "play"],
        cwd=cwd,
        stdin="1\n" * 3000,
    )
    assert done.returncode == 0, done.stderr
    assert "against pimc" in " ".join(done.stderr.split())
    assert "winner: " in done.stdout and "final scores: human " in done.stdout
    lines = [json.loads(line) for line in (cwd / "play" / "game-00001.jsonl").read_text().splitlines()]
    assert [p["name"] for p in lines[0]["players"]] == ["human", "pimc"]
    result = next(r for r in lines if r["type"] == "result")
    assert result["failures"] == [] and result["forfeited"] == []


def test_bench_with_no_bot_named_measures_first_legal(installed: dict[str, Path]) -> None:
    done = _run([str(installed["cli"]), "bench", "--rounds", "1", "--games", "1"], cwd=installed["cwd"])
    assert done.returncode == 0, done.stderr
    assert "through the referee" in done.stdout


@needs_sandbox
def test_a_sandboxed_match_of_built_in_bots(installed: dict[str, Path]) -> None:
    done = _run(
        [
            str(installed["cli"]),
            "match",
            "--sandbox",
            "greedy",
            "random",
            "--games",
            "2",
            "--json",
            "--rule",
            "max_deals=3",
        ],
        cwd=installed["cwd"],
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [b["name"] for b in summary["bots"]] == ["greedy", "random"]
    assert all(not b["failures"] for b in summary["bots"]) and len(summary["results"]) == 2
