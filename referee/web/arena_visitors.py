"""Who is asking for an arena page, and the answers a page gives instead of itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.requests import Request

from referee.arena.config import Arena
from referee.arena.store import ArenaStore
from referee.arena.submissions import Submission
from referee.arena.users import User
from referee.web.sessions import Session, Sessions


@dataclass(frozen=True)
class Visitor:
    """Who is asking: a signed-in user with their session, or nobody."""

    user: User | None
    session: Session | None

    @property
    def csrf(self) -> str:
        return self.session.csrf if self.session else ""


class NotHere(Exception):
    """A page that does not exist, or is not the visitor's: 404 either way."""


class Redirect(Exception):
    """Send the visitor elsewhere (the sign-in page) instead of this page."""

    def __init__(self, to: str) -> None:
        super().__init__(to)
        self.to = to


class Pages(Protocol):
    """What a page module needs of the site it belongs to."""

    arena: Arena
    store: ArenaStore
    sessions: Sessions
    on_submission: Callable[[], None]

    async def read(self, query: Callable[..., Any], *args: Any) -> Any: ...
    async def signed_in(self, request: Request) -> Visitor: ...
    async def small_form(self, request: Request) -> dict[str, str]: ...
    def check_form(self, request: Request, who: Visitor, sent: object) -> None: ...
    async def final_status(self) -> dict[str, Any]: ...
    def context(self, who: Visitor, **extra: Any) -> dict[str, Any]: ...
    async def own_submission(self, request: Request, who: Visitor) -> Submission: ...

