"""The host's page (`/admin`) and the owner's version switch: forms over the
same store functions as the admin API (`referee.arena.admin_api`).

Every form needs a signed-in admin (anyone else gets the 404 a page that
does not exist gets), the session's CSRF token and a request from the
arena's own pages; it answers with a redirect back to the page and a
one-line notice, or the page again with a one-line error. A new user's
token is shown once, on the page that answers the form, never in a URL.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import trio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from referee.arena.controls import check_open, in_utc, parse_utc, read_controls, set_close, set_matchmaking
from referee.arena.export import CSV_TABLES, export_csv, export_json
from referee.arena.final_run import FinalHost
from referee.arena.store import now_text
from referee.arena.submissions import (
    check_not_disqualified,
    disqualify,
    get_submission,
    reactivate,
    reinstate,
    submissions_of_bot,
)
from referee.arena.users import add_user, check_user_name, list_users, revoke
from referee.errors import ConfigError, RefereeError, SubmissionRefused
from referee.visible import visible
from referee.web.arena_visitors import NotHere, Pages, Visitor
from referee.web.templates import page

MAX_REASON = 200
NOTICES = {
    "paused": "Matchmaking is paused: running units finish, no new one starts.",
    "resumed": "Matchmaking runs again.",
    "closed": "Submissions close at the time shown.",
    "opened": "Submissions are open again.",
    "out": "The bot is disqualified.",
    "back": "The bot is back in play.",
    "revoked": "The token is revoked; the user's sessions have ended.",
    "final": "The final tournament is starting; its commitment is on the front page.",
    "active": "That version is the bot's active one again.",
}


class FormRefused(Exception):
    """A form that cannot be done as sent: its one line, shown on the page."""


class AdminPages:
    """`/admin` and its forms, over one arena's site."""

    def __init__(self, site: Pages) -> None:
        self.site = site

    async def admin(self, request: Request) -> Visitor:
        """The signed-in admin asking, or the 404 of a page that does not exist."""
        who = await self.site.signed_in(request)
        if who.user is None or not who.user.admin:
            raise NotHere
        return who

    async def form(self, request: Request, who: Visitor) -> dict[str, str]:
        form = await self.site.small_form(request)
        self.site.check_form(request, who, form.get("csrf"))
        return form

    # ------------------------------------------------------------ the page

    async def page(self, request: Request) -> Response:
        who = await self.admin(request)
        notice = NOTICES.get(request.query_params.get("n", ""))
        return await self._render(who, notice=notice, error=None, issued=None)

    async def _render(
        self, who: Visitor, *, notice: str | None, error: str | None, issued: dict[str, Any] | None, status: int = 200
    ) -> Response:
        site = self.site
        arena = site.arena
        controls = await site.read(lambda c: read_controls(c, arena.submissions_close).as_dict(time.time()))
        board = await site.read(_bots_view)
        users = await site.read(list_users)
        final = await site.final_status()
        context = site.context(
            who,
            controls=controls,
            bots=board,
            users=users,
            final=final,
            notice=notice,
            error=error,
            issued=issued,
            tables=CSV_TABLES,
        )
        return page("arena_admin.html", status=status, **context)

    async def _done(self, request: Request, who: Visitor, action: Any, notice: str) -> Response:
        """Run a form's change; back to the page with its notice, or the page with the one-line reason."""
        try:
            await action()
        except (FormRefused, SubmissionRefused, ConfigError) as exc:
            return await self._render(who, notice=None, error=visible(str(exc)), issued=None, status=400)
        self.site.on_submission()  # the matchmaker and the pipeline look again
        return RedirectResponse(f"/admin?n={notice}", 303)

    # ------------------------------------------------------------ the forms

    async def matchmaking(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        paused = form.get("action") == "pause"
        assert who.user is not None
        by = who.user.name

        async def act() -> None:
            with self.site.store.transaction() as conn:
                set_matchmaking(conn, paused=paused, by=by, now=now_text())

        return await self._done(request, who, act, "paused" if paused else "resumed")

    async def submissions(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        assert who.user is not None
        by, action = who.user.name, form.get("action")
        at: datetime | None
        if action == "open":
            at = None
        elif action == "close_now":
            at = datetime.now(UTC)
        else:
            try:
                at = in_utc(parse_utc(form.get("at", "").strip()))
            except ValueError as exc:
                return await self._render(
                    who,
                    notice=None,
                    error=f"the close time: {exc} (e.g. 2026-12-24T18:00:00Z)",
                    issued=None,
                    status=400,
                )

        async def act() -> None:
            with self.site.store.transaction() as conn:
                set_close(conn, at, by=by, now=now_text())

        return await self._done(request, who, act, "opened" if at is None else "closed")

    async def bot(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        assert who.user is not None
        by, name = who.user.name, str(request.path_params["name"])
        reason = " ".join(form.get("reason", "").split())[:MAX_REASON]
        out = form.get("action") == "disqualify"

        async def act() -> None:
            with self.site.store.transaction() as conn:
                if not submissions_of_bot(conn, name):
                    raise FormRefused(f"no bot {name!r}")
                if out:
                    if not reason:
                        raise FormRefused("say why the bot is disqualified: its page shows the reason")
                    disqualify(conn, name, reason, by, now_text())
                elif not reinstate(conn, name):
                    raise FormRefused(f"the bot {name!r} is not disqualified")

        return await self._done(request, who, act, "out" if out else "back")

    async def add_user(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        name = form.get("user", "").strip()
        try:
            check_user_name(name[:64])
            if len(name) > 64:
                raise ConfigError("a user name has at most 32 characters")
            with self.site.store.transaction() as conn:
                if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
                    raise ConfigError(f"user {name!r} exists")
                issued = add_user(conn, name, admin=form.get("admin") == "on", now=now_text())
        except ConfigError as exc:
            return await self._render(who, notice=None, error=visible(str(exc)), issued=None, status=400)
        response = await self._render(who, notice=None, error=None, issued=issued.as_dict())
        return response  # `page` marks it no-store: the token is not kept by the browser's cache

    async def revoke_user(self, request: Request) -> Response:
        who = await self.admin(request)
        await self.form(request, who)
        assert who.user is not None
        name = str(request.path_params["name"])
        me = who.user.name

        async def act() -> None:
            if name == me:
                raise FormRefused("that is you: another admin may revoke your token")
            with self.site.store.transaction() as conn:
                revoke(conn, name, now=now_text())
            self.site.sessions.close_user(name)

        return await self._done(request, who, act, "revoked")

    async def final(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        host = request.app.state.final_host
        try:
            deal_sets = int(form.get("deal_sets", ""))
            top = int(form["top"]) if form.get("top", "").strip() else None
        except ValueError:
            return await self._render(
                who, notice=None, error="deal sets and top are whole numbers", issued=None, status=400
            )

        async def act() -> None:
            if not isinstance(host, FinalHost):
                raise FormRefused("this server plays no final: start it with `chicago-referee arena final`")
            try:
                await host.start(top=top, deal_sets=deal_sets, force=form.get("force") == "on", now=time.time())
            except RefereeError as exc:
                raise FormRefused(str(exc)) from None

        return await self._done(request, who, act, "final")

    async def export(self, request: Request) -> Response:
        await self.admin(request)
        table = request.path_params.get("table")
        store, name = self.site.store, self.site.arena.name
        if table is None:
            data = await trio.to_thread.run_sync(
                store.read_snapshot, lambda c: export_json(c, name), abandon_on_cancel=True
            )
            kind, filename = "application/json", f"{name}-export.json"
        elif table in CSV_TABLES:
            data = await trio.to_thread.run_sync(
                store.read_snapshot, lambda c: export_csv(c, table), abandon_on_cancel=True
            )
            kind, filename = "text/csv; charset=utf-8", f"{name}-{table}.csv"
        else:
            raise NotHere
        return Response(
            data,
            media_type=kind,
            headers={"Content-Disposition": f'attachment; filename="{quote(filename)}"', "Cache-Control": "no-store"},
        )

    # ------------------------------------------------------------ an owner's version switch

    async def activate(self, request: Request) -> Response:
        """An owner makes an older version that passed its check the active one again."""
        who = await self.site.signed_in(request)
        form = await self.site.small_form(request)
        self.site.check_form(request, who, form.get("csrf"))
        sub = await self.site.own_submission(request, who)
        assert who.user is not None
        admin = who.user.admin
        try:
            with self.site.store.transaction() as conn:
                if not admin:
                    check_open(conn, self.site.arena.submissions_close, time.time())
                check_not_disqualified(conn, sub.bot)
                if get_submission(conn, sub.id).status != "retired":
                    raise SubmissionRefused("only a retired version that passed its check can be made active again")
                reactivate(conn, sub.id, now_text())
        except SubmissionRefused as exc:
            return RedirectResponse(f"/me/submissions/{sub.id}?e={quote(str(exc)[:200])}", 303)
        self.site.on_submission()
        return RedirectResponse(f"/me/submissions/{sub.id}?n=active", 303)


def _bots_view(conn: Any) -> list[dict[str, Any]]:
    """Every bot with its owner, its active version and whether it is out (with the reason)."""
    rows = conn.execute(
        "SELECT b.name, b.owner, (SELECT max(version) FROM submissions s WHERE s.bot = b.name AND s.status = 'active'),"
        " d.reason, d.since FROM bots b LEFT JOIN disqualifications d ON d.bot = b.name ORDER BY b.name"
    ).fetchall()
    return [{"bot": r[0], "owner": r[1], "active": r[2], "out": r[3], "since": r[4]} for r in rows]
