"""The host's actions (referee/arena/host_actions.py) on their own, over
arena_rows' field (ace v1 retired, ace v2 and bee v1 active; users alice
and bob) and an admin `host`: each refusal says what it says, with its
status, and changes nothing; each action that is taken leaves its row.
The API and the page that call them: test_admin_api.py, web/test_arena_site.py."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from arena_rows import field

from referee.arena import host_actions
from referee.arena.config import CONFIG_NAME, template
from referee.arena.controls import read_controls
from referee.arena.final import FinalRefused
from referee.arena.final_run import FinalHost
from referee.arena.store import DB_NAME, ArenaStore, now_text
from referee.arena.submissions import add_submission, fail
from referee.arena.users import add_user, get_user
from referee.errors import ActionRefused, BotStartError, ResultsError, SubmissionRefused


class Arena:
    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        (folder / CONFIG_NAME).write_text(template("host", "chicago", 2))
        ArenaStore.create(folder).close()
        self.folder = folder
        self.store, self.ids = field(folder)
        with self.store.transaction() as conn:
            add_user(conn, "host", admin=True, now=now_text())
        self.alice, self.host = (self.store.read(lambda c, n=n: get_user(c, n)) for n in ("alice", "host"))

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.folder / DB_NAME) as conn:  # another connection: only what is committed
            return conn.execute(query).fetchall()

    def state(self) -> list[tuple[Any, ...]]:
        return self.rows(
            "SELECT (SELECT count(*) FROM controls), (SELECT count(*) FROM disqualifications),"
            " (SELECT group_concat(name || ':' || coalesce(revoked, '-')) FROM users),"
            " (SELECT group_concat(id || ':' || status) FROM submissions)"
        )


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    a = Arena(tmp_path / "comp")
    yield a
    a.store.close()


def refused(arena: Arena, action: Any, *args: Any, **kwargs: Any) -> tuple[int, str]:
    """The status and line `action` refuses with; that it changed nothing."""
    before = arena.state()
    with pytest.raises((ActionRefused, SubmissionRefused)) as caught:
        action(*args, **kwargs)
    assert arena.state() == before
    return caught.value.status, str(caught.value)


# ------------------------------------------------------------------ matchmaking and the close of submissions


def test_pausing_and_resuming_is_a_row_with_who_set_it(arena: Arena) -> None:
    host_actions.set_paused(arena.store, paused=True, by="host")
    assert arena.rows("SELECT key, value, set_by FROM controls") == [("matchmaking", "paused", "host")]
    host_actions.set_paused(arena.store, paused=False, by="host")
    assert arena.rows("SELECT value FROM controls") == [("running",)]


def test_a_close_time_is_in_utc_to_the_second_from_a_time_or_its_text_or_now() -> None:
    evening = datetime(2026, 12, 24, 18, 0, 0, 500, tzinfo=timezone(timedelta(hours=-5)))
    assert host_actions.close_time(evening) == datetime(2026, 12, 24, 23, 0, 0, tzinfo=UTC)
    assert host_actions.close_time("2026-12-24T18:00:00+01:00") == datetime(2026, 12, 24, 17, 0, 0, tzinfo=UTC)
    before = datetime.now(UTC).replace(microsecond=0)
    now = host_actions.close_time(None)
    assert before <= now <= datetime.now(UTC) and now.microsecond == 0


@pytest.mark.parametrize(
    ("at", "says"),
    [
        ("tomorrow evening", "the close time: 'tomorrow evening' is not an ISO-8601 time such as 2026-12-24T18:00:00Z"),
        ("", "the close time: '' is not an ISO-8601 time such as 2026-12-24T18:00:00Z"),
        (
            "2026-12-24T18:00:00",
            "the close time: 2026-12-24T18:00:00 has no time zone: write it in UTC, such as 2026-12-24T18:00:00Z",
        ),
        (
            datetime(2026, 12, 24, 18),
            "the close time: 2026-12-24T18:00:00 has no time zone: write it in UTC, such as 2026-12-24T18:00:00Z",
        ),
    ],
)
def test_a_close_time_without_a_zone_or_not_a_time_is_refused(arena: Arena, at: Any, says: str) -> None:
    assert refused(arena, host_actions.close_submissions, arena.store, at, by="host") == (400, says)


def test_closing_and_opening_submissions_is_the_hosts_word_over_arena_toml(arena: Arena) -> None:
    when = host_actions.close_submissions(arena.store, "2030-01-02T03:04:05.678Z", by="host")
    assert when == datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    controls = arena.store.read(lambda c: read_controls(c, None))
    assert controls.close == when and controls.close_set_by_host
    host_actions.open_submissions(arena.store, by="host")
    controls = arena.store.read(lambda c: read_controls(c, datetime(2020, 1, 1, tzinfo=UTC)))
    assert controls.close is None and controls.close_set_by_host


# ------------------------------------------------------------------ bots


@pytest.mark.parametrize(
    ("bot", "reason", "status", "says"),
    [
        ("nobody", "copies ace", 404, "no bot 'nobody'"),
        ("no\u202ebody", "x", 404, "no bot 'no\\\\u202ebody'"),
        ("bee", "  \t ", 400, "the reason is empty: say why the bot is disqualified, in one line (its page shows it)"),
        ("bee", "x" * 201, 400, "the reason is longer than 200 characters"),
        ("bee", "reads\nthe deck", 400, "the reason must be one line of visible text: it holds reads\\x0athe deck"),
        ("bee", "x\u202ey", 400, "the reason must be one line of visible text: it holds x\\u202ey"),
    ],
)
def test_a_disqualification_needs_a_bot_and_one_line_of_reason(
    arena: Arena, bot: str, reason: str, status: int, says: str
) -> None:
    assert refused(arena, host_actions.disqualify_bot, arena.store, bot, reason, by="host") == (status, says)


def test_a_bot_is_disqualified_once_with_its_first_reason_and_reinstated_once(arena: Arena) -> None:
    out = host_actions.disqualify_bot(arena.store, "bee", "  reads the seed  ", by="host")
    assert (out.bot, out.reason, out.set_by) == ("bee", "reads the seed", "host")
    assert host_actions.disqualify_bot(arena.store, "ace", "x" * 200, by="host").reason == "x" * 200
    status, says = refused(arena, host_actions.disqualify_bot, arena.store, "bee", "another reason", by="host")
    assert (status, says) == (409, f"the bot 'bee' is disqualified already, since {out.since} (reads the seed)")
    host_actions.reinstate_bot(arena.store, "bee")
    assert arena.rows("SELECT bot FROM disqualifications") == [("ace",)]
    assert refused(arena, host_actions.reinstate_bot, arena.store, "bee") == (409, "the bot 'bee' is not disqualified")
    assert refused(arena, host_actions.reinstate_bot, arena.store, "nobody") == (404, "no bot 'nobody'")


# ------------------------------------------------------------------ an older version active again


def test_an_owner_makes_an_older_version_active_again_while_submissions_are_open(arena: Arena) -> None:
    v1, v2, _bee = arena.ids
    sub, retired = host_actions.reactivate_version(arena.store, v1, arena.alice, None, 0.0)
    assert (sub.id, sub.status, retired) == (v1, "active", [v2])
    sub, retired = host_actions.reactivate_version(arena.store, v2, arena.host, None, 0.0)
    assert (sub.id, sub.status, retired) == (v2, "active", [v1])


def test_reactivating_refuses_what_is_missing_not_yours_not_retired_closed_or_disqualified(arena: Arena) -> None:
    v1, v2, bee = arena.ids
    with arena.store.transaction() as conn:
        broken = add_submission(
            conn, bot="ace", sha256="f" * 64, size=1, kind="zip", files=1, unpacked=1, now=now_text(), epoch=0.0
        )
        fail(conn, broken.id, "check: no hello", now_text())
    again = host_actions.reactivate_version
    assert refused(arena, again, arena.store, 999, arena.alice, None, 0.0) == (404, "no submission 999")
    assert refused(arena, again, arena.store, bee, arena.alice, None, 0.0) == (
        403,
        "bee is another user's bot: only its owner chooses its version",
    )
    assert refused(arena, again, arena.store, v2, arena.alice, None, 0.0) == (409, "ace version 2 is active already")
    assert refused(arena, again, arena.store, broken.id, arena.alice, None, 0.0) == (
        409,
        "ace version 3 is failed: only a version that passed its check (retired) can be made active again",
    )
    closed = datetime(2020, 1, 1, tzinfo=UTC)
    assert refused(arena, again, arena.store, v1, arena.alice, closed, closed.timestamp() + 1) == (
        403,
        "submissions are closed since 2020-01-01T00:00:00Z: the arena takes no new versions",
    )
    assert again(arena.store, v1, arena.host, closed, closed.timestamp() + 1)[0].status == "active"  # an admin may
    host_actions.disqualify_bot(arena.store, "ace", "plays for bee", by="host")
    assert refused(arena, again, arena.store, v2, arena.host, None, 0.0) == (
        403,
        "the bot 'ace' is disqualified (plays for bee): it takes no new versions",
    )


# ------------------------------------------------------------------ users


@pytest.mark.parametrize(
    ("name", "status", "says"),
    [
        ("c" * 33, 400, "a user name has at most 32 characters, not 33"),
        (
            "Carol Smith",
            400,
            "user name 'Carol Smith': use 1-32 lower-case letters, digits, '_' or '-', starting alphanumeric",
        ),
        ("", 400, "user name '': use 1-32 lower-case letters, digits, '_' or '-', starting alphanumeric"),
        (
            "bob",
            409,
            "user 'bob' exists: a new token (`arena user token`, POST /api/admin/users/bob/token) replaces the old one",
        ),
    ],
)
def test_a_new_user_needs_a_free_name_of_the_arenas_shape(arena: Arena, name: str, status: int, says: str) -> None:
    assert refused(arena, host_actions.new_user, arena.store, name, admin=False) == (status, says)


def test_a_new_user_gets_a_token_and_a_name_without_its_surrounding_space(arena: Arena) -> None:
    issued = host_actions.new_user(arena.store, "  carol ", admin=True)
    assert (issued.user, issued.admin, len(issued.token)) == ("carol", True, 32)
    assert arena.rows("SELECT name, admin, revoked FROM users WHERE name = 'carol'") == [("carol", 1, None)]


def test_revoking_needs_a_user_and_not_yourself_and_a_new_token_undoes_it(arena: Arena) -> None:
    assert refused(arena, host_actions.revoke_user, arena.store, "dave", by="host") == (404, "no user 'dave'")
    assert refused(arena, host_actions.revoke_user, arena.store, "host", by="host") == (
        409,
        "that is your own token: revoking it would lock you out (another admin may)",
    )
    assert host_actions.revoke_user(arena.store, "bob", by="host").revoked is not None
    issued = host_actions.reissue_token(arena.store, "bob")
    assert issued.user == "bob" and arena.rows("SELECT revoked FROM users WHERE name = 'bob'") == [(None,)]
    assert refused(arena, host_actions.reissue_token, arena.store, "dave") == (404, "no user 'dave'")


# ------------------------------------------------------------------ the final and the exports


class RefusingHost(FinalHost):
    """A final host whose start fails with the error it is given."""

    def __init__(self, error: Exception) -> None:  # nothing of a real host is needed
        self.error_raised = error

    async def start(self, *, top: int | None, deal_sets: int, force: bool, now: float) -> None:
        raise self.error_raised


async def test_the_final_starts_only_in_a_server_that_plays_it_and_says_why_not() -> None:
    async def start(host: FinalHost | None) -> tuple[int, str]:
        with pytest.raises(FinalRefused) as caught:
            await host_actions.start_final(host, top=None, deal_sets=1, force=False, now=0.0)
        return caught.value.status, str(caught.value)

    assert await start(None) == (
        503,
        "this server plays no final: start it in a running `arena serve`, or with `chicago-referee arena final`",
    )
    assert await start(RefusingHost(FinalRefused("deal_sets must be 1 or more, not 0", status=400))) == (
        400,
        "deal_sets must be 1 or more, not 0",
    )
    assert await start(RefusingHost(BotStartError("no python3 in the sandbox"))) == (
        503,
        "the final cannot start: no python3 in the sandbox",
    )
    with pytest.raises(ResultsError, match=r"tournament\.db is damaged"):  # left to the caller's answer for one
        await host_actions.start_final(
            RefusingHost(ResultsError("tournament.db is damaged")), top=None, deal_sets=1, force=False, now=0.0
        )


async def test_an_export_is_a_file_with_a_safe_name_and_an_unknown_table_is_refused(arena: Arena) -> None:
    whole = await host_actions.export_file(arena.store, "my arena/ü", None)
    assert (whole.media_type, whole.filename) == ("application/json", "my_arena__-export.json")
    assert whole.data.startswith(b"{")
    games = await host_actions.export_file(arena.store, "host", "games")
    assert games.filename == "host-games.csv" and len(games.data.decode().strip().splitlines()) == 3  # header, 2
    with pytest.raises(ActionRefused) as caught:
        await host_actions.export_file(arena.store, "host", "users")
    assert (caught.value.status, str(caught.value)) == (404, "no export 'users': choose units, games, ratings")
