"""Where things are in the checkout, named once for every test.

Module constants rather than fixtures: parametrize lists and module-level
bot commands are built from them at import time. `tests/` is on the path
(pyproject's `pythonpath`), so `from paths import ROOT` works from any test.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout: README.md, referee/, tests/
TEST_BOTS = ROOT / "tests" / "bots"  # the tiny misbehaving bots
GOLDEN = ROOT / "tests" / "golden"  # expected logs and replay text
SAMPLE_BOTS = ROOT / "sample_bots" / "python"  # the copyable Python bots
RANDOM_BOT = SAMPLE_BOTS / "random_bot.py"
FIRST_LEGAL_BOT = SAMPLE_BOTS / "first_legal_bot.py"
DOCS = ROOT / "docs"
