"""The README's two Quickstart commands are what a newcomer types and what CI
runs: the first installs only what playing needs and plays a match, the
second adds the test tools and runs the suite, word for word as `.ci/run` does."""

from __future__ import annotations

import re

from paths import ROOT


def quickstart_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def test_the_quickstart_has_two_commands() -> None:
    play, test = quickstart_commands()[:2]
    assert "chicago-referee match greedy random" in play  # built-in bots: nothing else to fetch
    assert "[test]" not in play  # playing needs no test tools
    assert "pytest" in test


def test_ci_runs_the_readme_test_command_word_for_word() -> None:
    test = quickstart_commands()[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test in ci_lines


def test_the_play_extras_hold_no_test_tools() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    deps = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    for tool in ("pytest", "hypothesis", "selenium", "jsonschema"):
        assert tool not in deps
