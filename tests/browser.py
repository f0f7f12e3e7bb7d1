"""Headless Chromium for the browser tests: Debian's chromium and
chromium-driver, no network, HOME and TMPDIR in a throwaway folder."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def artifacts_dir() -> Path:
    """Where screenshots go for people to look at ($ARTIFACTS_DIR, else artifacts/)."""
    env = os.environ.get("ARTIFACTS_DIR")
    path = Path(env) if env else ROOT / "artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def chromium(prefix: str) -> Iterator[Any]:
    """A Selenium driver, or a skip that says what to install."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.skip(
            f"needs Debian's chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER}): "
            "apt-get install chromium chromium-driver"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    # Chromium writes ~/.config and leaves $TMPDIR litter: both go to a throwaway dir, with a short
    # path (pytest's tmp_path can be too long for Chromium's singleton socket, which then won't start).
    home = Path(tempfile.mkdtemp(prefix=prefix))
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1400,950",
    ):
        opts.add_argument(arg)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("TMPDIR", str(home))
        # The explicit driver path keeps Selenium Manager from going online.
        drv = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=opts)
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(home, ignore_errors=True)
