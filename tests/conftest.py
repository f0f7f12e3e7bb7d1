"""What every folder of the suite shares.

Subprocesses (the CLI, built-in bots started as `python -P -m`, scripts
written to a temporary folder) import this checkout's packages, as pytest
does through pyproject's `pythonpath`, not those of whichever checkout is
installed. `driver` is the one way a test gets a browser: Debian's chromium
and chromium-driver, headless, one per test module (starting Chromium is
the slow part), or a skip that says what to install (tests/browser.py).
`dask_cluster` is the one way a test gets a real Dask cluster on 127.0.0.1
(tests/dask_cluster.py).

Ctrl-C tests send SIGINT to the processes they start. A suite started in
the background by a shell without job control inherits SIGINT ignored, and
so would every process it starts; the suite restores the default first, so
those processes hear SIGINT as they do at a terminal.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from browser import chromium
from paths import ROOT
from timing import SCALE, SCALE_VARIABLE

pytest_plugins = ["dask_cluster"]

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


def pytest_report_header() -> list[str]:
    return [f"time scale: {SCALE:g} ({SCALE_VARIABLE}; safety bounds on wall time are multiplied by it)"]


@pytest.fixture(scope="module")
def driver(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A headless Chromium shared by the tests of one module."""
    name = request.module.__name__.rpartition(".")[2].removeprefix("test_")
    with chromium(f"{name}-") as drv:
        yield drv
