"""The host's actions on a running arena, and an owner's version switch, each
rule written once.

Two doors lead to them: the admin API (`admin_api`, JSON under `/api/admin`)
and the host's web page (`referee.web.arena_admin`, forms under `/admin`).
Both call these functions, so a reason, a close time or a user name is
judged the same way whichever door it came through. Each function checks
what it is asked, then makes its change in one transaction (a committed
row, so it outlives a restart), or refuses with `ActionRefused`: one line
and the HTTP status the API answers with; the page shows the same line.
Waking the matchmaker, answering and redirecting stay with the callers.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

import trio

from referee.arena.controls import check_open, in_utc, parse_utc, set_close, set_matchmaking
from referee.arena.export import CSV_TABLES, export_csv, export_json
from referee.arena.final import FinalRefused
from referee.arena.final_run import FinalHost
from referee.arena.store import ArenaStore, now_text
from referee.arena.submissions import (
    Disqualification,
    Submission,
    check_not_disqualified,
    disqualify,
    get_submission,
    reactivate,
    reinstate,
    submissions_of_bot,
)
from referee.arena.users import IssuedToken, User, add_user, check_user_name, get_user, new_token, revoke
from referee.errors import ActionRefused, ConfigError, RefereeError, ResultsError
from referee.visible import visible

MAX_REASON = 200  # characters of a disqualification's reason
USER_NAME_CHARS = 32  # as users.USER_NAME allows: a longer one is refused without being echoed


def check_reason(text: str) -> str:
    """A disqualification's reason, stripped: one line of visible text (the bot's
    page shows it), at most MAX_REASON characters; refused otherwise, never cut."""
    text = text.strip()
    if not text:
        raise ActionRefused("the reason is empty: say why the bot is disqualified, in one line (its page shows it)")
    if len(text) > MAX_REASON:
        raise ActionRefused(f"the reason is longer than {MAX_REASON} characters")
    if visible(text) != text:
        raise ActionRefused(f"the reason must be one line of visible text: it holds {visible(text)}")
    return text


# ------------------------------------------------------------ matchmaking and submissions


def set_paused(store: ArenaStore, *, paused: bool, by: str) -> None:
    """Pause matchmaking (running units finish, no new one starts) or resume it."""
    with store.transaction() as conn:
        set_matchmaking(conn, paused=paused, by=by, now=now_text())


def close_time(at: datetime | str | None) -> datetime:
    """When submissions close: `at` (a time with its zone, or its ISO-8601 text) in
    UTC to the second, or now if None; a time without a zone is refused."""
    if at is None:
        return datetime.now(UTC).replace(microsecond=0)
    try:
        return parse_utc(at) if isinstance(at, str) else in_utc(at)
    except ValueError as exc:
        raise ActionRefused(f"the close time: {exc}") from None


def close_submissions(store: ArenaStore, at: datetime | str | None, *, by: str) -> datetime:
    """Close submissions at `at` (now if None), whatever arena.toml says; the time set."""
    when = close_time(at)
    with store.transaction() as conn:
        set_close(conn, when, by=by, now=now_text())
    return when


def open_submissions(store: ArenaStore, *, by: str) -> None:
    """Keep submissions open, whatever arena.toml says."""
    with store.transaction() as conn:
        set_close(conn, None, by=by, now=now_text())


# ------------------------------------------------------------ bots


def check_bot(conn: sqlite3.Connection, name: str) -> None:
    """Refuse (404) a bot nobody submitted."""
    if not submissions_of_bot(conn, name):
        raise ActionRefused(f"no bot {visible(name)!r}", status=404)


def disqualify_bot(store: ArenaStore, bot: str, reason: str, *, by: str) -> Disqualification:
    """Take `bot` out of play with its reason (one line, shown on its page);
    refused (409) if it is out already: its first reason stands."""
    with store.transaction() as conn:
        check_bot(conn, bot)
        why = check_reason(reason)
        out, new = disqualify(conn, bot, why, by, now_text())
        if not new:
            raise ActionRefused(
                f"the bot {visible(bot)!r} is disqualified already, since {out.since} ({out.reason})", status=409
            )
    return out


def reinstate_bot(store: ArenaStore, bot: str) -> None:
    """Put `bot` back in play; refused (409) if it is not out."""
    with store.transaction() as conn:
        check_bot(conn, bot)
        if not reinstate(conn, bot):
            raise ActionRefused(f"the bot {visible(bot)!r} is not disqualified", status=409)


def reactivate_version(
    store: ArenaStore, submission: int, who: User, configured_close: datetime | None, now: float
) -> tuple[Submission, list[int]]:
    """An older version that passed its check plays again: its owner's choice
    while submissions are open, or an admin's at any time; never for a
    disqualified bot. The version as it is now, and the ids it retired."""
    with store.transaction() as conn:
        try:
            sub = get_submission(conn, submission)
        except KeyError:
            raise ActionRefused(f"no submission {submission}", status=404) from None
        if not who.admin:
            if sub.owner != who.name:
                raise ActionRefused(f"{sub.bot} is another user's bot: only its owner chooses its version", status=403)
            check_open(conn, configured_close, now)  # the field is frozen once closed
        check_not_disqualified(conn, sub.bot)
        retired = reactivate(conn, sub.id, now_text())
        return get_submission(conn, sub.id), retired


# ------------------------------------------------------------ users


def check_user(conn: sqlite3.Connection, name: str) -> User:
    """The user `name`, or a refusal (404)."""
    try:
        return get_user(conn, name)
    except ConfigError:
        raise ActionRefused(f"no user {visible(name)!r}", status=404) from None


def new_user(store: ArenaStore, name: str, *, admin: bool) -> IssuedToken:
    """Add a user with a fresh token (shown once); a bad or taken name is refused."""
    name = name.strip()
    if len(name) > USER_NAME_CHARS:
        raise ActionRefused(f"a user name has at most {USER_NAME_CHARS} characters, not {len(name)}")
    try:
        check_user_name(name)
    except ConfigError as exc:
        raise ActionRefused(visible(str(exc))) from None
    with store.transaction() as conn:
        if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
            raise ActionRefused(
                f"user {name!r} exists: a new token (`arena user token`, POST /api/admin/users/{name}/token)"
                " replaces the old one",
                status=409,
            )
        return add_user(conn, name, admin=admin, now=now_text())


def revoke_user(store: ArenaStore, name: str, *, by: str) -> User:
    """Stop `name`'s token (their bots and results stay); an admin may not lock themselves out."""
    with store.transaction() as conn:
        check_user(conn, name)
        if name == by:
            raise ActionRefused(
                "that is your own token: revoking it would lock you out (another admin may)", status=409
            )
        return revoke(conn, name, now=now_text())


def reissue_token(store: ArenaStore, name: str) -> IssuedToken:
    """A new token for `name` (lost, leaked or revoked): the old one stops working at once."""
    with store.transaction() as conn:
        check_user(conn, name)
        return new_token(conn, name)


# ------------------------------------------------------------ the final and the exports


async def start_final(host: FinalHost | None, *, top: int | None, deal_sets: int, force: bool, now: float) -> None:
    """Start (or resume) the final in this server; FinalRefused with its status if it may not.
    A damaged database stays a ResultsError, answered as every other one is."""
    if host is None:
        raise FinalRefused(
            "this server plays no final: start it in a running `arena serve`, or with `chicago-referee arena final`",
            status=503,
        )
    try:
        await host.start(top=top, deal_sets=deal_sets, force=force, now=now)
    except (FinalRefused, ResultsError):
        raise
    except RefereeError as exc:  # a build that cannot run, a sandbox this machine cannot give
        raise FinalRefused(f"the final cannot start: {exc}", status=503) from None


@dataclass(frozen=True)
class Download:
    """An export as a file to save: its bytes, media type and a safe name."""

    data: bytes
    media_type: str
    filename: str


async def export_file(store: ArenaStore, arena_name: str, table: str | None) -> Download:
    """Every unit, game and rating as JSON (`table` None), or one table as CSV;
    an unknown table is refused (404). Built on a thread with a connection of
    its own; a request cancelled does not wait for it (the thread finishes alone)."""
    if table is None:
        data = await trio.to_thread.run_sync(
            store.read_snapshot, lambda c: export_json(c, arena_name), abandon_on_cancel=True
        )
        return Download(data, "application/json", _safe_name(f"{arena_name}-export.json"))
    if table not in CSV_TABLES:
        raise ActionRefused(f"no export {visible(table)!r}: choose {', '.join(CSV_TABLES)}", status=404)
    data = await trio.to_thread.run_sync(store.read_snapshot, lambda c: export_csv(c, table), abandon_on_cancel=True)
    return Download(data, "text/csv; charset=utf-8", _safe_name(f"{arena_name}-{table}.csv"))


def _safe_name(filename: str) -> str:
    """A file name fit for a `Content-Disposition` header: ASCII letters, digits and `._-`."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in filename)
