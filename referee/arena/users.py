"""Who may use an arena: users and their bearer tokens.

A token is 128 bits of the operating system's randomness, shown once when it
is issued; the database keeps only its sha256. A token is random, so a plain
hash is as strong as a slow one here, and lets a request be authorised with
one indexed lookup. A revoked user keeps their bots and results; only the
token stops working (`arena user token` issues a new one).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
from dataclasses import dataclass

from referee.errors import ConfigError

USER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
TOKEN_BYTES = 16  # 128 bits
TOKEN_TEXT = re.compile(r"^[0-9a-f]{32}$")

USERS_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY,
    token_sha256 TEXT UNIQUE,            -- NULL while revoked
    admin INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1)),
    created TEXT NOT NULL,
    revoked TEXT                         -- when the last token was revoked, or NULL
);
"""


@dataclass(frozen=True)
class User:
    """A user as the arena knows them (never their token)."""

    name: str
    admin: bool
    created: str
    revoked: str | None

    @property
    def active(self) -> bool:
        return self.revoked is None


@dataclass(frozen=True)
class IssuedToken:
    """A token just issued: the only moment its text exists outside the owner's hands."""

    user: str
    token: str
    admin: bool

    def as_dict(self) -> dict[str, object]:
        return {"user": self.user, "token": self.token, "admin": self.admin}


def check_user_name(name: str) -> str:
    """A user name: 1-32 lower-case letters, digits, '_' or '-'; it names bots by default."""
    if not USER_NAME.match(name):
        raise ConfigError(f"user name {name!r}: use 1-32 lower-case letters, digits, '_' or '-', starting alphanumeric")
    return name


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _new_token() -> str:
    return secrets.token_hex(TOKEN_BYTES)


def _row_user(row: tuple[str, int, str, str | None]) -> User:
    return User(name=row[0], admin=bool(row[1]), created=row[2], revoked=row[3])


def add_user(conn: sqlite3.Connection, name: str, *, admin: bool, now: str) -> IssuedToken:
    """Create a user with a fresh token; an existing name is refused."""
    check_user_name(name)
    token = _new_token()
    try:
        conn.execute(
            "INSERT INTO users (name, token_sha256, admin, created) VALUES (?, ?, ?, ?)",
            (name, token_digest(token), int(admin), now),
        )
    except sqlite3.IntegrityError:
        raise ConfigError(
            f"user {name!r} exists: `arena user token` gives them a new token, `arena user revoke` stops the old one"
        ) from None
    return IssuedToken(user=name, token=token, admin=admin)


def new_token(conn: sqlite3.Connection, name: str) -> IssuedToken:
    """Replace a user's token (lost, leaked, or revoked): the old one stops working at once."""
    user = get_user(conn, name)
    token = _new_token()
    conn.execute("UPDATE users SET token_sha256 = ?, revoked = NULL WHERE name = ?", (token_digest(token), name))
    return IssuedToken(user=name, token=token, admin=user.admin)


def revoke(conn: sqlite3.Connection, name: str, *, now: str) -> User:
    """Stop a user's token; their bots and results stay."""
    get_user(conn, name)
    conn.execute("UPDATE users SET token_sha256 = NULL, revoked = ? WHERE name = ?", (now, name))
    return get_user(conn, name)


def get_user(conn: sqlite3.Connection, name: str) -> User:
    row = conn.execute("SELECT name, admin, created, revoked FROM users WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise ConfigError(f"no user {name!r} (`arena user list` shows them)")
    return _row_user(row)


def list_users(conn: sqlite3.Connection) -> list[User]:
    rows = conn.execute("SELECT name, admin, created, revoked FROM users ORDER BY name").fetchall()
    return [_row_user(r) for r in rows]


def user_for_token(conn: sqlite3.Connection, token: str) -> User | None:
    """The active user a bearer token belongs to, or None (unknown, malformed or revoked)."""
    if not TOKEN_TEXT.match(token):
        return None
    row = conn.execute(
        "SELECT name, admin, created, revoked FROM users WHERE token_sha256 = ?", (token_digest(token),)
    ).fetchone()
    return None if row is None else _row_user(row)
