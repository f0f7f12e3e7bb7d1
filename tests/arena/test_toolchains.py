"""What `doctor` says of the toolchains an arena can build bots with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.arena.toolchains import PROBES, probe_toolchains, summary
from referee.cli import app


def fake(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def test_found_broken_and_missing_toolchains_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake(tmp_path, "python3", "echo 'Python 3.99.1'")
    fake(tmp_path, "java", "echo 'openjdk version \"21.0.2\" 2024-01-16' >&2")  # java says it on stderr
    fake(tmp_path, "go", "exit 1")  # installed but broken: no version
    monkeypatch.setenv("PATH", str(tmp_path))
    chains = {t.name: t for t in probe_toolchains()}
    assert list(chains) == [name for name, _argv in PROBES]
    assert chains["python3"].found and chains["python3"].version == "Python 3.99.1"
    assert chains["java"].found and "21.0.2" in (chains["java"].version or "")
    assert chains["go"].path == str(tmp_path / "go") and not chains["go"].found
    assert chains["rustc"].path is None and not chains["rustc"].found
    line = summary(list(chains.values()))
    assert line.startswith("python3 3.99.1, java 21.0.2; not found: ")
    assert "go" in line.split("not found: ")[1] and "rustc" in line


def test_some_toolchains_are_probed_on_another_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fake(elsewhere, "rustc", "echo 'rustc 1.63.0'")
    fake(tmp_path, "node", "echo v20.1.0")  # on this process's PATH only
    monkeypatch.setenv("PATH", str(tmp_path))
    chains = probe_toolchains(["node", "rustc"], path=str(elsewhere))  # as the sandbox's PATH sees them
    assert [(t.name, t.found) for t in chains] == [("node", False), ("rustc", True)]
    assert chains[1].path == str(elsewhere / "rustc") and chains[1].version == "rustc 1.63.0"
    assert [t.name for t in probe_toolchains(["node"])] == ["node"] and probe_toolchains(["node"])[0].found


def test_doctor_lists_the_toolchains_in_both_forms() -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["doctor", "--json"])
    report = json.loads(res.stdout)
    assert set(report["toolchains"]) == {name for name, _argv in PROBES}
    python = report["toolchains"]["python3"]
    if python["path"] is not None:  # the machine's python3, as the sandbox runs .py bots with it
        assert python["version"].startswith("Python 3.")
    text = " ".join(runner.invoke(app, ["doctor"]).stdout.split())  # as one line, however wrapped
    assert "toolchains:" in text and "what an arena can build bots with" in text
