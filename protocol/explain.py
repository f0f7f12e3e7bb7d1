"""msgspec's decode errors in the words of docs/protocol.md.

msgspec says `JSON is malformed: invalid character (byte 0)` for a debug
`print` on stdout, and ``Expected `str` matching regex '^[2-9TJQKA][shdc]$'
- at `$.action.card` `` for the card `"10h"`. A bot writer needs to hear what
was wrong in their terms: which field, what it held, what it must hold. These
functions turn msgspec's text into that, quoting the bot's own value where
the line is JSON; a message they do not know is passed on as msgspec wrote
it, so nothing is ever hidden.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

STDOUT_IS_THE_PROTOCOL = "log to stderr (protocol.md §1)"
CARD_PATTERN = "^[2-9TJQKA][shdc]$"
CARD_WORDS = "a card is a rank 2-9 T J Q K A and a suit s h d c, e.g. `Th`"
_PATTERNS = {CARD_PATTERN: CARD_WORDS}
_TYPES = {
    "str": "a string",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
    "bytes": "a string",
}
_LIMITS = {"<=": "at most", ">=": "at least", "<": "below", ">": "above"}
_AT = re.compile(r"^(?P<body>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_OFFSET = re.compile(r"^JSON is malformed: (?P<what>.*?) \(byte (?P<at>\d+)\)$")
_JSON_START = (b"{", b"[", b'"', b"-", *(str(d).encode() for d in range(10)), b"true", b"false", b"null")
_MAX_VALUE = 60  # characters of the bot's own value quoted in a message


def json_error(exc: msgspec.DecodeError, line: bytes | str, what: str, *, from_a_bot: bool = True) -> str:
    """Why `line` is not JSON: a bad byte, plain text (from a bot: printed to
    stdout, where only the protocol belongs), or where the JSON breaks."""
    data = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else line
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"{what} is not UTF-8: byte 0x{data[bad.start]:02x} at offset {bad.start}"
    text = data.lstrip()
    if text and (text[0] < 0x20 or text[0] == 0x7F):
        return f"{what} is not JSON: it starts with the control byte 0x{text[0]:02x}"
    if text and not text.startswith(_JSON_START):
        if not from_a_bot:
            return f"{what} is not JSON; it looks like plain text"
        return f"{what} is not JSON; it looks like text printed to stdout: {STDOUT_IS_THE_PROTOCOL}"
    message = str(exc)
    if message == "Input data was truncated":
        return f"{what} is not valid JSON: it ends before the JSON does (at offset {len(data)}); one message, one line"
    m = _OFFSET.match(message)
    if m is None:
        return f"{what} is not valid JSON: {message}"
    hint = ""
    if "keys must be strings" in m["what"] and b"'" in data:
        hint = " (JSON strings take double quotes)"
    elif m["what"] == "trailing characters":
        hint = " (one message per line)"
    return f"{what} is not valid JSON: {m['what']} at offset {m['at']}{hint}"


def schema_error(exc: msgspec.ValidationError, line: bytes | str, what: str) -> str:
    """Why the JSON object `line` is not the message: which field, what it held, what it must hold."""
    m = _AT.match(str(exc))
    assert m is not None  # the pattern matches any text
    body, path = m["body"], m["path"]
    field = f"`{path.lstrip('.')}`" if path else f"the {what}"
    value = _shown(_value_at(line, path)) if path else ""
    held = f" is {value}" if value else ""
    if found := re.fullmatch(r"Expected `(\w+)`, got `(\w+)`", body):
        return f"{what}: {field} must be {_TYPES.get(found[1], found[1])}, not {_TYPES.get(found[2], found[2])}"
    if found := re.fullmatch(r"Expected `str` matching regex '(.+)'", body):
        rule = _PATTERNS.get(found[1], f"it must match the pattern {found[1]}")
        return f"{what}: {field}{held}: {rule}"
    if found := re.fullmatch(r"Expected `(\w+)` (<=|>=|<|>) (\S+)", body):
        return f"{what}: {field}{held}: it must be {_LIMITS[found[2]]} {found[3]}"
    if found := re.fullmatch(r"Expected `(\w+)` of length (<=|>=|<|>) (\d+)", body):
        unit = "characters" if found[1] == "str" else "items"
        return f"{what}: {field}{held}: it must hold {_LIMITS[found[2]]} {found[3]} {unit}"
    if found := re.fullmatch(r"Object missing required field `(.+)`", body):
        return f"{what}: {field if path else 'the message'} lacks the field `{found[1]}`"
    if found := re.fullmatch(r"Object contains unknown field `(.+)`", body):
        return (
            f"{what}: {field if path else 'the message'} has an unknown field `{found[1]}` "
            "(a reply holds only the fields docs/protocol.md names)"
        )
    if found := re.fullmatch(r"Invalid (?:enum )?value (.+)", body):
        shown = value or found[1]
        if path == ".type":
            return f'{what}: {field} is {shown}, which is not a message a bot sends (a reply\'s type is "action")'
        if path.endswith(".type"):
            return (
                f"{what}: {field} is {shown}, which is not an action of this game (choose from the request's legal "
                "list)"
            )
        return f"{what}: {field} is {shown}, which is not one of the values it may take (see the request's legal list)"
    if body == "Number out of range":
        return f"{what}: {field}{held}: a number out of range"
    return f"{what} does not match the protocol: {body}" + (f" (at {field})" if path else "")


def _value_at(line: bytes | str, path: str) -> Any:
    """The value the bot sent at msgspec's path `.a.b[0]` (None where it is not there)."""
    try:
        node = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError, ValueError):
        return None
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        if key and isinstance(node, dict) and key in node:
            node = node[key]
        elif index and isinstance(node, list) and int(index) < len(node):
            node = node[int(index)]
        else:
            return None
    return node


def _shown(value: Any) -> str:
    """The bot's own value, as JSON, cut to a length a message can carry."""
    if value is None:
        return ""
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."
