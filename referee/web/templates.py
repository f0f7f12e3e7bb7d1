"""Pages from templates that escape by default.

Jinja2 with autoescape on for every template: a value put into a page is
text, never markup, in an element or an attribute, whoever chose it. Text a
competitor controls (user and bot names, build logs, stderr) goes through
the `visible` filter as well, which shows control, bidi and zero-width
characters as escapes, so a right-to-left override cannot turn the score
beside a name around; templates put names in `<bdi>` too. Jinja2 is used
rather than a helper of our own because its escaping is tested by many
users and applies to every template without anyone remembering to call it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from starlette.responses import HTMLResponse

from referee.visible import visible, visible_lines

TEMPLATES = Path(__file__).resolve().parents[1] / "assets" / "templates"

_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=jinja2.StrictUndefined,  # a name missing from a page's context is a bug, not a blank
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["visible"] = visible
_env.filters["visible_lines"] = visible_lines


def _when(iso: str | None) -> str:
    """An ISO time as people read it: `2026-12-06 09:31:28 UTC`."""
    if not iso:
        return ""
    try:
        return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return iso


_env.filters["when"] = _when


def render(name: str, /, **context: Any) -> str:
    return _env.get_template(name).render(**context)


def page(name: str, /, *, status: int = 200, headers: dict[str, str] | None = None, **context: Any) -> HTMLResponse:
    """A whole page, never cached by a browser or a proxy (it may hold a form's CSRF token)."""
    return HTMLResponse(
        render(name, **context), status_code=status, headers={"Cache-Control": "no-store", **(headers or {})}
    )
