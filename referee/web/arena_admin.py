"""The host's page (`/admin`) and the owner's version switch: forms over the
same actions as the admin API (`referee.arena.host_actions`, where what each
action checks and changes is written once).

Every form needs a signed-in admin (anyone else gets the 404 a page that
does not exist gets), the session's CSRF token and a request from the
arena's own pages; it answers with a redirect back to the page and a
one-line notice, or the page again with the action's one-line refusal. A
new user's token is shown once, on the page that answers the form, never
in a URL.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from referee.arena import host_actions
from referee.arena.controls import read_controls
from referee.arena.export import CSV_TABLES
from referee.arena.final import FinalRefused
from referee.arena.final_run import FinalHost
from referee.arena.users import list_users
from referee.errors import ActionRefused, ConfigError, SubmissionRefused
from referee.visible import visible
from referee.web.arena_visitors import NotHere, Pages, Visitor
from referee.web.templates import page

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
# What a form's action may refuse with: its line is shown on the page (ConfigError: a name taken meanwhile).
REFUSALS = (ActionRefused, SubmissionRefused, FinalRefused, ConfigError)


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

    async def _refused(self, who: Visitor, why: str) -> Response:
        """The page again, with the one line of what was refused."""
        return await self._render(who, notice=None, error=visible(why), issued=None, status=400)

    async def _done(self, who: Visitor, action: Callable[[], Awaitable[None]], notice: str) -> Response:
        """Run a form's action; back to the page with its notice, or the page with the one-line refusal."""
        try:
            await action()
        except REFUSALS as exc:
            return await self._refused(who, str(exc))
        self.site.on_submission()  # the matchmaker and the pipeline look again
        return RedirectResponse(f"/admin?n={notice}", 303)

    @staticmethod
    def _name(who: Visitor) -> str:
        assert who.user is not None  # `admin` lets only a signed-in admin through
        return who.user.name

    # ------------------------------------------------------------ the forms

    async def matchmaking(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        paused = form.get("action") == "pause"

        async def act() -> None:
            host_actions.set_paused(self.site.store, paused=paused, by=self._name(who))

        return await self._done(who, act, "paused" if paused else "resumed")

    async def submissions(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        action, store, by = form.get("action"), self.site.store, self._name(who)

        async def act() -> None:
            if action == "open":
                host_actions.open_submissions(store, by=by)
            else:
                at = None if action == "close_now" else form.get("at", "").strip()
                host_actions.close_submissions(store, at, by=by)

        return await self._done(who, act, "opened" if action == "open" else "closed")

    async def bot(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        name = str(request.path_params["name"])
        out = form.get("action") == "disqualify"

        async def act() -> None:
            if out:
                host_actions.disqualify_bot(self.site.store, name, form.get("reason", ""), by=self._name(who))
            else:
                host_actions.reinstate_bot(self.site.store, name)

        return await self._done(who, act, "out" if out else "back")

    async def add_user(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        try:
            issued = host_actions.new_user(self.site.store, form.get("user", ""), admin=form.get("admin") == "on")
        except REFUSALS as exc:
            return await self._refused(who, str(exc))
        response = await self._render(who, notice=None, error=None, issued=issued.as_dict())
        return response  # `page` marks it no-store: the token is not kept by the browser's cache

    async def revoke_user(self, request: Request) -> Response:
        who = await self.admin(request)
        await self.form(request, who)
        name = str(request.path_params["name"])

        async def act() -> None:
            host_actions.revoke_user(self.site.store, name, by=self._name(who))
            self.site.sessions.close_user(name)

        return await self._done(who, act, "revoked")

    async def final(self, request: Request) -> Response:
        who = await self.admin(request)
        form = await self.form(request, who)
        host = request.app.state.final_host
        try:
            deal_sets = int(form.get("deal_sets", ""))
            top = int(form["top"]) if form.get("top", "").strip() else None
        except ValueError:
            return await self._refused(who, "deal sets and top are whole numbers")

        async def act() -> None:
            await host_actions.start_final(
                host if isinstance(host, FinalHost) else None,
                top=top,
                deal_sets=deal_sets,
                force=form.get("force") == "on",
                now=time.time(),
            )

        return await self._done(who, act, "final")

    async def export(self, request: Request) -> Response:
        await self.admin(request)
        try:
            file = await host_actions.export_file(
                self.site.store, self.site.arena.name, request.path_params.get("table")
            )
        except ActionRefused:
            raise NotHere from None
        return Response(
            file.data,
            media_type=file.media_type,
            headers={"Content-Disposition": f'attachment; filename="{file.filename}"', "Cache-Control": "no-store"},
        )

    # ------------------------------------------------------------ an owner's version switch

    async def activate(self, request: Request) -> Response:
        """An owner makes an older version that passed its check the active one again."""
        who = await self.site.signed_in(request)
        form = await self.site.small_form(request)
        self.site.check_form(request, who, form.get("csrf"))
        sub = await self.site.own_submission(request, who)  # another's version is a page that does not exist
        assert who.user is not None
        try:
            host_actions.reactivate_version(
                self.site.store, sub.id, who.user, self.site.arena.submissions_close, time.time()
            )
        except (ActionRefused, SubmissionRefused) as exc:
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
