"""Sessions of people in browsers: a cookie instead of a token in a URL.

A person proves who they are once (a token pasted into a sign-in form, or
the token in the first URL `play --web` and the dashboard print, which is
good once); from then on their browser holds a session cookie: `HttpOnly`
(no script reads it), `SameSite=Strict` (no other site's page sends it),
`Secure` when the server sits behind TLS. The server keeps only the
sha256 of each session key, so signing out, or a restart, ends the session
for good. Every state-changing form carries the session's CSRF token, which
`csrf_ok` checks in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

COOKIE = "chicago_referee_session"
MAX_SESSIONS = 10_000  # the oldest go first beyond this
TTL_S = 7 * 24 * 3600.0


@dataclass(frozen=True)
class Session:
    """Who a browser is, and the token its forms must carry."""

    user: str
    admin: bool
    csrf: str
    expires: float


def _key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class Sessions:
    """Sessions held in memory, bounded in number and age."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, ttl_s: float = TTL_S, cookie: str = COOKIE) -> None:
        self.max_sessions = max_sessions
        self.ttl_s = ttl_s
        self.cookie = cookie  # servers on one host share its cookies whatever their ports: each its own name
        self._by_hash: OrderedDict[str, Session] = OrderedDict()

    def open(self, user: str, *, admin: bool) -> tuple[str, Session]:
        """A new session for `user`: its key (for the cookie, never kept) and the session."""
        key = secrets.token_urlsafe(32)
        session = Session(user=user, admin=admin, csrf=secrets.token_urlsafe(24), expires=time.time() + self.ttl_s)
        self._by_hash[_key_hash(key)] = session
        while len(self._by_hash) > self.max_sessions:
            self._by_hash.popitem(last=False)
        return key, session

    def find(self, key: str | None) -> Session | None:
        if not key:
            return None
        digest = _key_hash(key)
        session = self._by_hash.get(digest)
        if session is None:
            return None
        if session.expires < time.time():
            del self._by_hash[digest]
            return None
        return session

    def close(self, key: str | None) -> None:
        if key:
            self._by_hash.pop(_key_hash(key), None)

    def close_user(self, user: str) -> None:
        """End every session of `user` (their token was revoked)."""
        for digest in [d for d, s in self._by_hash.items() if s.user == user]:
            del self._by_hash[digest]

    def of(self, request: Request) -> Session | None:
        return self.find(request.cookies.get(self.cookie))


def set_cookie(response: Response, key: str, *, secure: bool, ttl_s: float = TTL_S, name: str = COOKIE) -> None:
    response.set_cookie(name, key, max_age=int(ttl_s), path="/", httponly=True, samesite="strict", secure=secure)


def clear_cookie(response: Response, *, secure: bool, name: str = COOKIE) -> None:
    response.delete_cookie(name, path="/", httponly=True, samesite="strict", secure=secure)


def csrf_ok(session: Session | None, sent: object) -> bool:
    """Whether a form's CSRF field is this session's token."""
    return session is not None and isinstance(sent, str) and hmac.compare_digest(sent, session.csrf)
