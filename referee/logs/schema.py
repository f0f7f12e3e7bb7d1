"""The JSON Schema of the game log format, made from `referee.logs.records`.

Committed as `referee/logs/schema.json` for people who write their own tools
over logs, in any language; a test fails when it drifts from the records
(`REGENERATE_LOG_SCHEMA=1 python -m pytest tests/logs/test_log_schema.py`
rewrites it). The output is deterministic: sorted keys, two-space indent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from referee.logs.records import LOG_FORMAT, LogHeader, Record

SCHEMA_PATH = Path(__file__).with_name("schema.json")
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def build_schema() -> dict[str, Any]:
    """The log format as one JSON Schema document: `header` is line 1, `record` every later line."""
    (header, record), components = msgspec.json.schema_components([LogHeader, Record], ref_template="#/$defs/{name}")
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": f"chicago-referee game log, format {LOG_FORMAT}",
        "description": (
            "A game log is JSON Lines, UTF-8: `header` is its first line, every later line is a `record`, "
            "tagged by `type`, and the last is the `result`. The games' own payloads (an event's `event`, "
            "an action's `action`, a message's `msg`) are objects tagged by `type` as on the wire "
            "(protocol/schema.json). Generated from referee/logs/records.py; explained in docs/replay.md."
        ),
        "header": header,
        "record": record,
        "$defs": components,
    }


def render() -> str:
    """The exact text of schema.json."""
    return json.dumps(build_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
