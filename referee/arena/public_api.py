"""The routes anyone may read: the leaderboard, a bot, the finished games.
No token is needed and none is looked at; nothing private is reachable from
here (`board` reads only public columns). A game's log and stderr, which
hold things only a bot's owner may read, are served by `api`."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from referee.arena.board import bot_page, game_dict, leaderboard, names
from referee.arena.config import Arena
from referee.arena.controls import read_controls
from referee.arena.store import ArenaStore
from referee.arena.submissions import submissions_of_bot
from referee.arena.units import games_page

PAGE = 100  # games per page of /api/games


class NotFound(Exception):
    """A route's object does not exist: 404 with this line."""


class BadQuery(Exception):
    """A query parameter does not parse: 400 with this line."""


def _int_param(request: Request, key: str, default: int, low: int, high: int) -> int:
    text = request.query_params.get(key)
    if text is None:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise BadQuery(f"{key} must be a whole number from {low} to {high}, not {text!r}")
    return int(text)


class PublicApi:
    def __init__(self, arena: Arena, store: ArenaStore) -> None:
        self.arena = arena
        self.store = store

    async def leaderboard(self, request: Request) -> Response:
        board = self.store.read(leaderboard)
        board["arena"] = self.arena.name
        board["game"] = self.arena.game.name
        board["table_size"] = self.arena.table_size
        board.update(self.store.read(lambda c: read_controls(c, self.arena.submissions_close)).as_dict(time.time()))
        return JSONResponse(board)

    async def bot(self, request: Request) -> Response:
        name = request.path_params["name"]
        page = self.store.read(lambda c: bot_page(c, name))
        if page is None:
            raise NotFound(f"no bot {name!r}")
        return JSONResponse(page)

    async def games(self, request: Request) -> Response:
        after = _int_param(request, "after", 0, 0, 2**62)
        limit = _int_param(request, "limit", PAGE, 1, PAGE)
        bot = request.query_params.get("bot")
        subs = None
        if bot is not None:
            subs = [s.id for s in self.store.read(lambda c: submissions_of_bot(c, bot))]
            if not subs:
                raise NotFound(f"no bot {bot!r}")
        rows = self.store.read(lambda c: games_page(c, subs, after, limit))
        shown = self.store.read(lambda c: names(c, sorted({s for g in rows for s in g.seats})))
        games = [game_dict(g, shown) for g in rows]
        more = len(rows) == limit
        return JSONResponse({"games": games, "next_after": rows[-1].id if more else None})
