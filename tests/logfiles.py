"""Game logs as plain JSON, for tests that look into them the way a person
or another program would: the header and every record as dicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def log_lines(path: Path | str) -> list[dict[str, Any]]:
    """Every line of a game log, the header first, as decoded JSON."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def log_records(path: Path | str) -> list[dict[str, Any]]:
    """Every record after the header, as decoded JSON."""
    return log_lines(path)[1:]


def read_json_log(path: Path | str) -> tuple[Any, list[tuple[int, dict[str, Any]]]]:
    """As `read_log`, the header typed, but the records as (line number, dict) pairs."""
    from referee.logs.gamelog import read_log

    header, _ = read_log(Path(path))
    return header, list(enumerate(log_records(path), start=2))
