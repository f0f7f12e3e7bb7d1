"""The README is a front door of one screen, docs/README.md the map of the
rest: every page is on the map, every link resolves, the README's bot is a
real bot, and what the README used to say at length is still said on a page
the map reaches."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from paths import DOCS, ROOT
from timing import scaled

README = ROOT / "README.md"
MAP = DOCS / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")

# Distinctive sentences of the sections the README once held; each must stay
# on a page the map links to (the README's length went to the pages, not away).
KEPT = [
    "Games come in *deal sets*: one seed, so one deck sequence",
    "Bots that misbehave",
    "a small guardian process does the\nsame even if the referee itself is killed",
    "its own PID namespace",
    "`memory_limit`",
    "`referee_overhead_us_per_decision`",
    "Every bot command is checked before the first",
    "130 Ctrl-C",
    "**Explicit deals.**",
    "**From a position.**",
    "A match keeps each bot process for all its games",
    "Piped input works",
    "keyboard shortcuts",
    "re-runs every\nlogged action through the same rules engine",
    "`--workers N` spreads the games over N worker processes",
    "prints a\ncommitment to it (a sha256) before the first game",
    "`--reveal-delay 60s` shows a hidden card once it is that old",
    "tournaments/euchre.toml",
    "run_bot(lambda view, legal: random.choice(legal)",
    "from referee.games import Deal, hand_value, new_game",
    "`seat_knowledge(view, events).sample(rng)`",
    "`chicago-referee bench` starts a trivial bot",
    "What a sandboxed start costs, and what was cut",
    "`tests/benchmarks/bench_scale.py throughput`",
    "The load test played\n256 games at once",
]


def links(page: Path) -> list[Path]:
    return [
        (page.parent / target).resolve()
        for target in LINK.findall(page.read_text())
        if not target.startswith(("http://", "https://", "mailto:"))
    ]


def test_the_readme_is_one_screen_with_the_front_door_parts() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 170
    assert "docs/images/replay.png" in text and (DOCS / "images" / "replay.png").stat().st_size > 10_000
    assert "## Quickstart" in text and "## The commands" in text
    assert "docs/README.md" in text


def test_every_page_is_on_the_map_and_every_link_resolves() -> None:
    mapped = set(links(MAP))
    pages = {p.resolve() for p in (DOCS).glob("*.md")} - {MAP.resolve()}
    assert not sorted(str(p) for p in pages - mapped), "pages the map of docs/README.md leaves out"
    for page in [README, MAP, *pages]:
        broken = [str(p) for p in links(page) if not p.exists()]
        assert not broken, f"{page.relative_to(ROOT)} links to what does not exist: {broken}"


def test_what_the_readme_used_to_say_is_on_a_page_the_map_reaches() -> None:
    reachable = [README, MAP, *links(MAP)]
    text = "\n".join(p.read_text() for p in reachable if p.suffix == ".md" and p.exists())
    flat = " ".join(text.split())
    lost = [phrase for phrase in KEPT if " ".join(phrase.split()) not in flat]
    assert not lost, f"no longer said on any page of the map: {lost}"


def test_the_readme_bot_passes_check(tmp_path: Path) -> None:
    code = README.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.splitlines()) <= 20
    bot = tmp_path / "my_bot.py"
    bot.write_text(code)
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "check", "my_bot.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(300),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "my_bot: passed" in done.stdout


@pytest.mark.parametrize("command", re.findall(r"^\| `(\w+)", README.read_text().split("## The commands", 1)[1], re.M))
def test_every_command_in_the_readme_table_exists(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", command, "--help"], capture_output=True, text=True, timeout=scaled(60)
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("config", sorted((ROOT / "tournaments").glob("*.toml")), ids=lambda p: p.name)
def test_a_sample_configs_comment_states_its_own_clock(config: Path) -> None:
    from referee.tournament.config import load_config

    said = re.search(r"^#.*?(\d+) ms per decision, (\d+) s to start", config.read_text(), re.M)
    if said is None:
        pytest.skip("its comments state no clock")
    clock = load_config(config).time_control
    assert (clock.decision_ms, clock.startup_ms) == (int(said[1]), 1000 * int(said[2])), said[0]
