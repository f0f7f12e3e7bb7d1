"""What a test needs of the machine, as skip markers that say what is missing.

The host is probed once per test session, here, so every sandbox test skips
for the same reason, the one `chicago-referee doctor` gives.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.seats.sandbox import probe_host

HAS_PROC = Path("/proc/self/fd").is_dir()
needs_proc = pytest.mark.skipif(not HAS_PROC, reason="needs Linux /proc")

SANDBOX_PROBLEMS: list[str] = (
    list(probe_host().problems()) if Path("/proc/self/ns/pid").exists() else ["needs Linux /proc"]
)
needs_sandbox = pytest.mark.skipif(bool(SANDBOX_PROBLEMS), reason="cannot sandbox here: " + "; ".join(SANDBOX_PROBLEMS))
