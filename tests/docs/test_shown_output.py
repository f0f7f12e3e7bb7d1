"""Every block of program output shown in README.md and docs/ is either run
and compared with what the program prints now, or marked as abridged, so a
page cannot go on showing a line the program no longer prints.

In a page's source, the line before such a block says which:

- `<!-- output -->` before a ```console block whose first line is
  `$ chicago-referee ARGS`: the command is run (from a folder holding the
  checkout's sample_bots/, tests/ and a copy of tournaments/, at 80 columns)
  and its stdout and stderr, in the order written, must match the rest of the
  block;
- `<!-- output: transcript of seat 0 -->` before a block of `R:` / `B:`
  lines: the ```sh block above it holds a `match` command, which is run with
  a tap on the first bot; every line the referee wrote to it (`R:`) and it
  wrote back (`B:`) must match;
- `<!-- output: abridged -->`: output edited for the page (cut, or from a
  machine or a moment the tests cannot make); not compared.

Comparing allows for what changes from run to run: durations (`12 ms`,
`0.3 s`) and shares of a clock (`(1%)`) are not compared, trailing spaces
are dropped, `...` in a line stands for any text and a line of just `...`
for any lines. A block that looks like program output but carries none of
the markers fails the test.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from paths import DOCS, ROOT
from timing import scaled

from referee.bots import BUILTIN_BOTS

PAGES = [
    ROOT / "README.md",
    *sorted((DOCS).glob("*.md")),
    ROOT / "tournaments" / "README.md",
    ROOT / "sample_bots" / "README.md",
    ROOT / "protocol" / "README.md",
]
TAP = ROOT / "tests" / "docs" / "tap_bot.py"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
LOOKS_LIKE_OUTPUT = [
    re.compile(p, re.M)
    for p in (
        r"^(ok|FAIL|note|warning)\s{2,}\S",
        r"^error: ",
        r"^MISMATCH ",
        r"^DIFFERS ",
        r"^\[\d+/\d+\] ",
        r"^checking \S+ on ",
        r"^\$ chicago-referee ",
        r"^[RB]: \{",
        r"^seed \d+",
        r"^worker \S+: ",
        r"\d+ verified, \d+ failed",
        r"^Score of ",
    )
]
DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|s)\b")
SHARE = re.compile(r"\(\d+%\)")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str
    marker: str  # the HTML comment on the line before the fence, or ""
    before: str  # the page up to the block

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        source = page.read_text()
        for m in FENCE.finditer(source):
            before = source[: m.start()]
            previous = next((ln.strip() for ln in reversed(before.splitlines()) if ln.strip()), "")
            marker = previous if previous.startswith("<!--") else ""
            found.append(Block(page, before.count("\n") + 1, m.group(1), m.group(2), marker, before))
    return found


BLOCKS = blocks()
COMPARED = [b for b in BLOCKS if b.marker == "<!-- output -->"]
TRANSCRIPTS = [b for b in BLOCKS if b.marker.startswith("<!-- output: transcript")]


def normalize(text: str) -> list[str]:
    lines = [SHARE.sub("(N%)", DURATION.sub("<time>", line)).rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def pattern(expected: list[str]) -> re.Pattern[str]:
    """The shown lines as one pattern: `...` any text within a line, a line of `...` any lines."""
    parts = []
    for line in expected:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts), re.S)


def assert_matches(block: Block, shown: list[str], actual: str) -> None:
    got = normalize(actual)
    if not pattern(shown).fullmatch("".join(line + "\n" for line in got)):
        diff = "\n".join(f"  page: {a}\n  now:  {b}" for a, b in zip(shown, got, strict=False) if a != b)
        pytest.fail(
            f"{block.where}: the block no longer shows what the program prints; first differences:\n"
            f"{diff[:3000]}\n--- the program now prints:\n" + "\n".join(got)
        )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the shown commands' relative paths resolve and what they write goes nowhere else."""
    work = tmp_path_factory.mktemp("shown-output")
    for name in ("sample_bots", "tests", "protocol"):
        (work / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "tournaments", work / "tournaments", ignore=shutil.ignore_patterns("results"))
    return work


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb", "NO_COLOR": "1", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=scaled(600),
    )
    return done.stdout.replace(str(cwd) + os.sep, "")


def needs(command: list[str]) -> None:
    if any(a.endswith(".js") for a in command) and shutil.which("node") is None:
        pytest.skip("the command runs a JavaScript bot and node is not installed")


@pytest.mark.parametrize("block", COMPARED, ids=[b.where for b in COMPARED])
def test_shown_output_is_what_the_command_prints(block: Block, workdir: Path) -> None:
    assert block.lang == "console", f"{block.where}: compared output goes in a ```console block"
    first, *shown = block.text.splitlines()
    assert first.startswith("$ chicago-referee "), f"{block.where}: the block must start with `$ chicago-referee ...`"
    command = shlex.split(first.removeprefix("$ chicago-referee "))
    needs(command)
    assert_matches(block, normalize("\n".join(shown)), run(command, workdir))


@pytest.mark.parametrize("block", TRANSCRIPTS, ids=[b.where for b in TRANSCRIPTS])
def test_shown_transcripts_are_what_the_referee_and_the_bot_wrote(block: Block, workdir: Path, tmp_path: Path) -> None:
    commands = re.findall(r"```sh\n(chicago-referee match .*?)\n```", block.before)
    assert commands, f"{block.where}: a transcript follows the ```sh block of its `match` command"
    command = shlex.split(commands[-1].removeprefix("chicago-referee "))
    bot = command[1]
    builtin = bot in BUILTIN_BOTS
    # The same file name (a built-in bot: its name as a .py): the same bot name in every message.
    tap = tmp_path / (f"{bot}.py" if builtin else Path(bot).name)
    shutil.copy(TAP, tap)
    transcript = tmp_path / "transcript.txt"
    run(
        [str(tap) if arg == bot else arg for arg in command],
        workdir,
        env={"TAP_BOT": bot if builtin else str(workdir / bot), "TAP_TRANSCRIPT": str(transcript), "TAP_SEAT": "0"},
    )
    assert_matches(block, normalize(block.text), transcript.read_text())


def test_a_block_that_looks_like_output_is_compared_or_marked_abridged() -> None:
    unmarked = [
        b.where
        for b in BLOCKS
        if not b.marker.startswith("<!-- output")
        and not b.marker.startswith("<!-- worked-example")
        and any(p.search(b.text) for p in LOOKS_LIKE_OUTPUT)
    ]
    assert not unmarked, f"program output that is neither compared nor marked <!-- output: abridged -->: {unmarked}"


def test_the_pages_compare_the_front_door_and_the_check_example() -> None:
    pages = {b.page.relative_to(ROOT).as_posix() for b in COMPARED + TRANSCRIPTS}
    assert {"README.md", "docs/protocol.md"} <= pages


def test_the_comparison_catches_a_changed_line() -> None:
    block = Block(ROOT / "README.md", 1, "console", "", "", "")
    shown = normalize("ok    handshake: answered hello with a valid reply\n...\nbot: passed")
    assert_matches(block, shown, "ok    handshake: answered hello with a valid reply\nok    x\nok    y\nbot: passed\n")
    with pytest.raises(pytest.fail.Exception):
        assert_matches(block, shown, "ok    handshake: answered hello\nbot: passed\n")
    timed = normalize("bot: 0.29 ms wall, 12 ms CPU (1%)")
    assert_matches(block, timed, "bot: 3.10 ms wall, 7 ms CPU (40%)\n")
