"""The built-in bots as a bot command names them: a name resolves to this
Python running the bot's module, a word with a `/` is always a path, an
interpreter's command is named after its script, every command that takes
a bot lists the names, and a sandboxed match of built-in bots plays."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from logfiles import read_json_log
from needs import needs_sandbox
from timing import scaled
from typer.testing import CliRunner

from referee.bots import BUILTIN_BOTS
from referee.cli import app
from referee.seats.bot_command import check_runnable, resolve_command
from referee.seats.sandbox.files import stage

HELLO = b'{"type":"hello","referee":"test","games":["chicago","ghost_euchre"],"protocol":1}\n'
runner = CliRunner()


@pytest.mark.parametrize("name", sorted(BUILTIN_BOTS))
def test_a_name_is_this_python_running_the_bots_module(name: str) -> None:
    spec = resolve_command(name)
    assert spec.name == name
    assert spec.argv == (sys.executable, "-u", "-P", "-m", BUILTIN_BOTS[name].module)
    check_runnable(spec)
    with_options = resolve_command(f"{name} --budget-ms 50")
    assert with_options.name == name and with_options.argv[-3:] == (BUILTIN_BOTS[name].module, "--budget-ms", "50")
    assert resolve_command(name, name="mine").name == "mine"  # a tournament's own name wins


@pytest.mark.parametrize("name", sorted(BUILTIN_BOTS))
def test_every_built_in_bot_answers_hello_from_any_folder(name: str, tmp_path: Path) -> None:
    (tmp_path / "referee").mkdir()  # a folder of that name where it runs stands in for nothing (-P)
    proc = subprocess.run(
        resolve_command(name).argv, input=HELLO, capture_output=True, cwd=tmp_path, timeout=scaled(60)
    )
    assert proc.returncode == 0, proc.stderr.decode()
    hello = json.loads(proc.stdout.decode().splitlines()[0])
    assert hello["type"] == "hello" and hello["name"] == name


def test_a_word_with_a_slash_is_a_path_even_with_a_built_in_name(tmp_path: Path) -> None:
    own = tmp_path / "pimc"
    own.write_text("#!/bin/sh\nexit 0\n")
    own.chmod(own.stat().st_mode | stat.S_IXUSR)
    mine = resolve_command("./pimc", cwd=str(tmp_path))
    assert mine.argv == ("./pimc",) and mine.name == "pimc"
    check_runnable(mine)
    assert resolve_command("pimc", cwd=str(tmp_path)).argv[-2:] == ("-m", "referee.bots.pimc")
    assert resolve_command("pimc.py", cwd=str(tmp_path)).argv == (sys.executable, "-u", "pimc.py")
    assert resolve_command(str(own)).argv == (str(own),)


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("/usr/bin/python3 -u mybot.py", "mybot"),
        ("python3 mybot.py --level 2", "mybot"),
        ("python -X dev -W error bot.py", "bot"),
        ("python3 -m mypackage.mybot", "mybot"),
        ("java -jar my.jar", "my"),
        ("java -cp lib.jar Main", "Main"),
        ("node --max-old-space-size=64 bot.js", "bot"),
        ("python3 -c 'print(1)'", "python3"),
        ("./bots/fast --depth 3", "fast"),
    ],
)
def test_an_interpreters_command_is_named_after_its_script(command: str, name: str) -> None:
    assert resolve_command(command).name == name


def test_two_settings_of_one_built_in_bot_are_told_apart() -> None:
    res = runner.invoke(
        app,
        [
            "match",
            "pimc --iterations 4",
            "pimc --iterations 6",
            "--games",
            "2",
            "--seed",
            "3",
            "--rule",
            "max_deals=1",
            "--json",
            "--time-control",
            "decision=60s,startup=60s",
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert [b["name"] for b in summary["bots"]] == ["pimc", "pimc#2"]
    assert all(not b["failures"] for b in summary["bots"])


@pytest.mark.parametrize("command", ["match", "check", "play", "bench"])
def test_every_command_that_takes_a_bot_lists_the_names(command: str) -> None:
    res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    words = " ".join(res.output.replace("│", " ").split())
    assert ", ".join(BUILTIN_BOTS) in words, words


def test_doctor_lists_the_names() -> None:
    res = runner.invoke(app, ["doctor", "--json"])
    report = json.loads(res.stdout)
    assert report["builtin_bots"] == {b.name: b.module for b in BUILTIN_BOTS.values()}
    res = runner.invoke(app, ["doctor"], env={"COLUMNS": "300"})
    assert "built-in bots: " + ", ".join(BUILTIN_BOTS) in res.output


def test_the_sandbox_library_holds_the_built_in_bots() -> None:
    lib = stage() / "lib" / "referee"
    for bot in BUILTIN_BOTS.values():
        module = lib.joinpath(*bot.module.split(".")[1:]).with_suffix(".py")
        assert module.is_file(), module
        assert os.access(module, os.R_OK)
    assert (lib / "bots" / "__init__.py").is_file() and (lib / "games" / "__init__.py").is_file()
    assert not (lib / "seats").exists()  # the runtime stays out


@needs_sandbox
def test_a_sandboxed_match_of_built_in_bots_plays(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    res = runner.invoke(
        app,
        [
            "match",
            "--sandbox",
            "greedy",
            "pimc",
            "--games",
            "2",
            "--seed",
            "5",
            "--rule",
            "max_deals=2",
            "--json",
            "--log-dir",
            str(logs),
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert [b["name"] for b in summary["bots"]] == ["greedy", "pimc"]
    assert all(not b["failures"] for b in summary["bots"]), summary["bots"]
    assert len(summary["results"]) == 2 and all(r["decisions"] > 10 for r in summary["results"])
    header, _ = read_json_log(logs / "game-00001.jsonl")
    assert header.isolation is not None and header.isolation["sandbox"] == "bubblewrap"
    assert [p.argv[-2:] for p in header.players] in (
        [["-m", "referee.bots.greedy"], ["-m", "referee.bots.pimc"]],
        [["-m", "referee.bots.pimc"], ["-m", "referee.bots.greedy"]],
    )
