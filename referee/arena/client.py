"""A competitor's side of the arena's API, with the standard library alone:
submit a bot folder, follow it, read the leaderboard.

The token is read from a file or the environment, never from the command
line (where `ps` would show it), and is sent only in the Authorization
header. Every failure is one line: what the arena answered, or why it could
not be reached.
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from referee.errors import RefereeError

TOKEN_VARIABLE = "CHICAGO_REFEREE_ARENA_TOKEN"
TIMEOUT_S = 60.0


class ArenaUnreachable(RefereeError):
    """The arena did not answer, or answered with an error; the message says which."""


def read_token(token_file: Path | None) -> str:
    if token_file is not None:
        try:
            text = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise RefereeError(f"{token_file}: cannot read the token: {exc.strerror or exc}") from None
        if not text:
            raise RefereeError(f"{token_file} is empty: put the token `arena user add` printed in it")
        return text.split()[0]
    text = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not text:
        raise RefereeError(f"no token: give --token-file FILE, or set {TOKEN_VARIABLE}")
    return text


def _url(base: str, path: str) -> str:
    if not base.startswith(("http://", "https://")):
        raise RefereeError(f"{base!r} is not an arena's address: give it as http://HOST:PORT")
    return base.rstrip("/") + path


def request(
    base: str, path: str, *, token: str | None = None, body: bytes | None = None, content_type: str | None = None
) -> tuple[int, Any]:
    """One API call: (status, decoded JSON). An error answer raises with the arena's own line."""
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if content_type is not None:
        headers["Content-Type"] = content_type
    req = urllib.request.Request(_url(base, path), data=body, headers=headers, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise ArenaUnreachable(f"the arena answered {exc.code}: {_said(exc.read())}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ArenaUnreachable(f"cannot reach the arena at {base}: {reason}") from None
    except json.JSONDecodeError:
        raise ArenaUnreachable(f"{base} answered something that is not the arena's JSON: is it an arena?") from None


def _said(body: bytes) -> str:
    try:
        said = json.loads(body)
    except json.JSONDecodeError:
        said = None
    if isinstance(said, dict) and isinstance(said.get("error"), str):
        return str(said["error"])
    return body[:200].decode("utf-8", "replace").strip() or "no explanation"


def multipart(archive: bytes, name: str | None) -> tuple[bytes, str]:
    """The form `POST /api/submissions` takes: the archive, and the bot's name if given."""
    boundary = "chicago-referee-" + secrets.token_hex(16)
    parts = []
    if name is not None:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n{name}\r\n'.encode())
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="archive"; filename="bot.tar.gz"\r\n'
        "Content-Type: application/gzip\r\n\r\n".encode()
        + archive
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
