"""Claims of docs/hosting.md that drift when the code changes: the commands
and options it names exist, the `sandbox` limit keys it names are accepted,
the reason codes it names are documented for bot writers, and its example
`sandbox` table parses into the limits it says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from functools import cache

import pytest
from paths import DOCS, ROOT
from timing import scaled

from referee.errors import ConfigError
from referee.seats.sandbox import SandboxLimits, limits_from_table

GUIDE = (DOCS / "hosting.md").read_text(encoding="utf-8")
PROTOCOL = (DOCS / "protocol.md").read_text(encoding="utf-8")


FENCE = re.compile(r"^[ \t]*```[a-z]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)


def code_texts(markdown: str) -> list[str]:
    """Every inline code span and every line of a fenced code block (list items' indented ones too)."""
    lines = [line.strip() for block in FENCE.findall(markdown) for line in block.splitlines()]
    return lines + re.findall(r"`([^`\n]+)`", FENCE.sub("", markdown))


@cache
def cli_commands() -> frozenset[str]:
    """The commands `chicago-referee --help` lists."""
    return frozenset(re.findall(r"^[│|\s]*([a-z]+)\s{2,}\S", help_text(None), re.MULTILINE))


@cache
def named_commands() -> dict[str, frozenset[str]]:
    """command -> the options the guide writes after it: `chicago-referee CMD ...`,
    or a code span that starts with a command's name (`replay LOG --seat S`)."""
    found: dict[str, set[str]] = {}
    for text in code_texts(GUIDE):
        m = re.match(r"(?:chicago-referee )?([a-z]+)\b(.*)", text)
        if m and (text.startswith("chicago-referee ") or m.group(1) in cli_commands()):
            found.setdefault(m.group(1), set()).update(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", m.group(2)))
    return {command: frozenset(options) for command, options in found.items()}


def markdown_tables(markdown: str) -> list[list[list[str]]]:
    """Each table as rows of cells (the header first, the separator dropped)."""
    tables, current = [], []
    for line in markdown.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def column(name: str) -> list[str]:
    """Every cell of every guide table whose header has a column `name`."""
    cells = []
    for table in markdown_tables(GUIDE):
        if name in table[0]:
            i = table[0].index(name)
            cells += [row[i] for row in table[1:] if i < len(row)]
    return cells


@cache
def help_text(command: str | None) -> str:
    """`chicago-referee [COMMAND] --help`, wide enough that no option is wrapped."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    argv = [sys.executable, "-m", "referee.cli", *([command] if command else []), "--help"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=scaled(60), env=env, cwd=ROOT)
    assert done.returncode == 0, f"`chicago-referee {command or ''} --help` failed: {done.stderr[-500:]}"
    return done.stdout


def documented_reasons() -> set[str]:
    """The reason codes of docs/protocol.md's failure table (§9)."""
    for table in markdown_tables(PROTOCOL):
        if table[0][:2] == ["reason", "when"]:
            return {code for row in table[1:] for code in re.findall(r"`([a-z_]+)`", row[0])}
    raise AssertionError("docs/protocol.md has no failure table with columns reason | when")


def test_the_guide_names_the_commands_a_host_needs():
    assert {"doctor", "tournament", "standings", "replay", "verify"} <= set(named_commands())
    unknown = sorted(set(named_commands()) - cli_commands())
    assert not unknown, f"docs/hosting.md names commands the CLI does not have: {unknown}"


@pytest.mark.parametrize("command", sorted(named_commands()))
def test_every_named_command_and_option_exists(command):
    text = help_text(command)
    for option in sorted(named_commands()[command]):
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text), (
            f"docs/hosting.md names `chicago-referee {command} {option}`, which its --help does not list"
        )


def test_every_limit_key_is_accepted():
    keys = [re.fullmatch(r"`([a-z_]+)`", cell).group(1) for cell in column("key")]
    assert {"memory", "processes", "cpu", "file_size", "open_files", "scratch", "env"} <= set(keys)
    for key in keys:
        value = [] if key == "env" else True if key == "freeze_idle" else "2"
        limits_from_table({key: value})  # raises ConfigError for a key the code does not know


def test_an_unknown_limit_key_is_refused():
    # The check above means something only if an unknown key fails.
    with pytest.raises(ConfigError):
        limits_from_table({"scratch_space": "2"})


def test_every_reason_code_is_documented_for_bot_writers():
    documented = documented_reasons()
    named = {code for cell in column("reason") for code in re.findall(r"`([a-z_]+)`", cell)}
    named |= set(re.findall(r"`([a-z]+(?:_[a-z]+)*_limit)`", GUIDE))
    assert {
        "memory_limit",
        "process_limit",
        "cpu_limit",
        "file_size_limit",
        "open_files_limit",
        "line_too_long",
        "unsolicited_flood",
    } <= named
    missing = sorted(named - documented)
    assert not missing, f"docs/hosting.md names reason codes docs/protocol.md does not document: {missing}"


def test_the_example_sandbox_table_parses_into_its_limits():
    blocks = [b for b in re.findall(r"^```toml\n(.*?)^```", GUIDE, re.DOTALL | re.MULTILINE) if "[sandbox]" in b]
    assert len(blocks) == 1, "docs/hosting.md should hold one example config with a [sandbox] table"
    config = tomllib.loads(blocks[0])
    table = config["sandbox"]
    limits = limits_from_table(table)
    # Every key written in the example changed something, and each value is the one written.
    assert limits == SandboxLimits(
        memory_mb=512, processes=32, cpu_s=180, file_size_mb=8, open_files=64, scratch_mb=32, env=()
    )
    assert set(table) == {"memory", "processes", "cpu", "file_size", "open_files", "scratch", "env"}
    # The example's arithmetic: concurrency x table_size bots at their memory limit.
    bots = config["concurrency"] * config["table_size"]
    assert f"{bots} bots alive" in " ".join(GUIDE.split())
    assert f"{bots * limits.memory_mb // 1024} GiB" in GUIDE


def test_the_doctor_lines_quoted_are_the_ones_doctor_prints():
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "doctor"],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        env=env,
        cwd=ROOT,
    )
    assert done.returncode in (0, 1), done.stderr[-500:]
    subjects = {
        m.group(1) for m in re.finditer(r"^(?:ok|warn|fail)\s+([a-z][a-z ]*?)(?: \(\w+\))?:", done.stdout, re.MULTILINE)
    }
    rows = {re.sub(r" \([A-Z]+\)$", "", s) for cell in column("line") for s in re.findall(r"`([^`]+)`", cell)}
    rows = {r.split(":")[0] for r in rows}
    unexplained = sorted(subjects - rows)
    assert not unexplained, f"doctor prints lines docs/hosting.md does not explain: {unexplained}"
    assert "for a host" in done.stdout
