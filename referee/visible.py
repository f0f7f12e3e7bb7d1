"""Text a bot controls, made safe to show on a terminal.

A bot chooses its file name, its `hello` fields, its replies and its stderr;
all of them reach a person's terminal through `match`, `check`, `replay`,
`play`, `standings` and `tournament`. A terminal obeys what it is sent:
`ESC ] 0 ; title BEL` retitles the window, `ESC [ 2 J` clears it, a carriage
return overwrites a line, a right-to-left override (U+202E) turns the text
after it around, a zero-width space makes two names look the same. So every
control character (C0, DEL, C1), every invisible format character (bidi
controls, zero-width characters, the byte order mark, tags) and the line and
paragraph separators are shown as an escape (`\\x1b`, `\\u202e`) instead of
being written. Everything else, backslashes and non-Latin letters included,
is shown as it is. Logs and `--json` keep the bot's text as data; only what
is printed for people goes through here.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["visible", "visible_lines"]

# Categories a terminal may act on or that show nothing: controls, format
# characters, surrogates, private use, unassigned, line/paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_PLAIN = re.compile(r"[ -~]*")  # printable ASCII: nothing to do


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _shown(ch: str) -> str:
    return _escape(ch) if unicodedata.category(ch) in _HIDDEN else ch


def visible(text: str) -> str:
    """`text` on one line with every control or invisible character escaped
    (newlines and tabs too)."""
    if _PLAIN.fullmatch(text):
        return text
    return "".join(_shown(ch) for ch in text)


def visible_lines(text: str) -> str:
    """As `visible`, but newlines stay line breaks (a stderr tail, a traceback)."""
    if _PLAIN.fullmatch(text.replace("\n", "")):
        return text
    return "\n".join(visible(line) for line in text.split("\n"))
