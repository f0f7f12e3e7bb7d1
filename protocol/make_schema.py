"""Generate `protocol/schema.json`, the JSON Schema of the wire protocol.

The schema is derived from the msgspec Structs (the single source of truth)
and committed, so bot writers in any language can read or validate against
it without running Python. A test fails when the committed file drifts from
the Structs.

    python -m protocol.make_schema           # (re)write protocol/schema.json
    python -m protocol.make_schema --check   # exit 1 if it is out of date

The output is deterministic: sorted keys, two-space indent, one trailing
newline, so regenerating an unchanged protocol gives an identical file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from protocol.messages import PROTOCOL_VERSION, BotMessage, RefereeMessage

SCHEMA_PATH = Path(__file__).with_name("schema.json")
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
REGENERATE = "python -m protocol.make_schema"


def build_schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema document (a dict)."""
    (referee_to_bot, bot_to_referee), components = msgspec.json.schema_components(
        [RefereeMessage, BotMessage], ref_template="#/$defs/{name}"
    )
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": f"chicago-referee wire protocol, version {PROTOCOL_VERSION}",
        "description": (
            "Line-delimited JSON between the referee and a bot: one UTF-8 JSON object per "
            "line, tagged by `type`. `referee_to_bot` is every line a bot reads on stdin; "
            "`bot_to_referee` is every line a bot may write on stdout. Every game uses the "
            "same envelope; per-game rules and views are tagged by `game`. Generated from "
            f"the msgspec Structs in protocol/ by `{REGENERATE}`; do not edit by hand. "
            "Explained in docs/protocol.md."
        ),
        "referee_to_bot": referee_to_bot,
        "bot_to_referee": bot_to_referee,
        "$defs": components,
    }


def render() -> str:
    """The exact text of schema.json."""
    return json.dumps(build_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _display(path: Path) -> str:
    """`path` relative to the current directory when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m protocol.make_schema",
        description="Write protocol/schema.json from the protocol Structs.",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the committed schema.json differs from the Structs",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=SCHEMA_PATH,
        help="where to write (default: schema.json next to this script)",
    )
    args = parser.parse_args(argv)
    text = render()
    path: Path = args.output
    shown = _display(path)
    if args.check:
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            print(f"{shown} is missing; run `{REGENERATE}` to create it", file=sys.stderr)
            return 1
        if current != text:
            print(
                f"{shown} is out of date: it no longer matches the Structs in protocol/. "
                f"Run `{REGENERATE}` and commit the result.",
                file=sys.stderr,
            )
            return 1
        print(f"{shown} is up to date")
        return 0
    if path.exists() and path.read_text(encoding="utf-8") == text:
        print(f"{shown} is already up to date")
        return 0
    path.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
