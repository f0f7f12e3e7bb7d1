"""The arena's pages through their ASGI app under Trio (httpx): who may open
what, sessions and their cookie, CSRF and origins, the Host check, the
security headers, text a competitor controls shown as text, and an
unexpected error as one logged line with an id. The same pages in a real
browser over a real `arena serve`: test_arena_browser.py."""

from __future__ import annotations

import io
import logging
import re
import tarfile
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from arena_rows import failed_game

from referee.arena.config import CONFIG_NAME, load_arena, template
from referee.arena.store import ArenaStore, now_text
from referee.arena.users import revoke
from referee.web import arena_views
from referee.web.arena_site import make_site
from referee.web.sessions import COOKIE

HOST = "arena.test"
BASE = f"http://{HOST}"
PAYLOAD = "<img src=x onerror=document.title='XSS'>\u202e"


class Site:
    """An arena with rows (tests/arena_rows.py), its site, and a client per visitor."""

    def __init__(self, folder: Path, *, secure: bool = False) -> None:
        folder.mkdir()
        (folder / CONFIG_NAME).write_text(template("site", "chicago", 2))
        ArenaStore.create(folder).close()
        self.folder = folder
        self.store, self.tokens, self.game = failed_game(folder)
        self.reader = ArenaStore.open(folder)
        self.submitted = 0
        self.secure = secure
        self.app = make_site(
            load_arena(folder),
            self.store,
            self._poke,
            reader=self.reader,
            hosts=frozenset({HOST}),
            secure_cookies=secure,
        )

    def _poke(self) -> None:
        self.submitted += 1

    def client(self) -> httpx.AsyncClient:
        """Over https when the cookies are Secure (a client sends those back only there)."""
        base = BASE.replace("http:", "https:") if self.secure else BASE
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url=base)

    def close(self) -> None:
        self.reader.close()
        self.store.close()


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    s = Site(tmp_path / "comp")
    yield s
    s.close()


async def sign_in(c: httpx.AsyncClient, token: str) -> httpx.Response:
    form = await c.get("/signin")
    nonce = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert nonce is not None
    origin = str(c.base_url).rstrip("/")
    return await c.post("/signin", data={"csrf": nonce.group(1), "token": token}, headers={"origin": origin})


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


async def test_every_answer_carries_the_security_headers_and_a_foreign_host_is_refused(site: Site) -> None:
    async with site.client() as c:
        answers = [await c.get(p) for p in ("/", "/start", "/signin", "/bots/ace", "/nope", "/api/leaderboard")]
        foreign = await c.get("/", headers={"host": "attacker.example"})
    for res in [*answers, foreign]:
        csp = res.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert res.headers["x-content-type-options"] == "nosniff"
        assert res.headers["referrer-policy"] == "no-referrer"
    assert [r.status_code for r in answers] == [200, 200, 200, 200, 404, 200]
    assert foreign.status_code == 421


@pytest.mark.parametrize("secure", [False, True])
async def test_signing_in_gives_a_strict_httponly_cookie_and_signing_out_ends_it(tmp_path: Path, secure: bool) -> None:
    site = Site(tmp_path / "comp", secure=secure)
    try:
        async with site.client() as c:
            wrong = await sign_in(c, "not-a-token")
            res = await sign_in(c, site.tokens["alice"])
            cookie = next(h for h in res.headers.get_list("set-cookie") if h.startswith(COOKIE + "="))
            key = cookie.split(";")[0].split("=", 1)[1]
            me = await c.get("/me")
            origin = str(c.base_url).rstrip("/")
            out = await c.post("/signout", data={"csrf": csrf_of(me.text)}, headers={"origin": origin})
        async with site.client() as stale:  # the old cookie, replayed after sign-out
            stale.cookies.set(COOKIE, key, domain=HOST)
            after = await stale.get("/me")
    finally:
        site.close()
    assert wrong.status_code == 401 and "not valid" in wrong.text
    assert res.status_code == 303 and res.headers["location"] == "/me"
    flags = {f.strip().lower() for f in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= flags and ("secure" in flags) == secure
    assert site.tokens["alice"] not in cookie
    assert me.status_code == 200 and "alice" in me.text
    assert out.status_code == 303 and after.status_code == 303 and after.headers["location"] == "/signin"


async def test_a_form_without_its_csrf_token_or_from_another_origin_is_refused(site: Site) -> None:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("main.py", "print('hi')\n")
    async with site.client() as c:
        nonce_page = await c.get("/signin")
        nonce = csrf_of(nonce_page.text)
        other = await c.post(
            "/signin",
            data={"csrf": nonce, "token": site.tokens["alice"]},
            headers={"origin": "http://attacker.example"},
        )
        no_nonce = await c.post("/signin", data={"token": site.tokens["alice"]}, headers={"origin": BASE})
        await sign_in(c, site.tokens["alice"])
        token = csrf_of((await c.get("/me")).text)
        files = {"archive": ("bot.zip", archive.getvalue())}
        without = await c.post("/me/upload", files=files, headers={"origin": BASE})
        foreign = await c.post(
            "/me/upload", files=files, data={"csrf": token}, headers={"origin": "http://attacker.example"}
        )
        cross_site = await c.post(  # what a browser says of a form on another site, whatever its Origin
            "/me/upload", files=files, data={"csrf": token}, headers={"sec-fetch-site": "cross-site", "origin": "null"}
        )
        before = site.store.read(lambda conn: conn.execute("SELECT count(*) FROM submissions").fetchone()[0])
        sent = await c.post("/me/upload", files=files, data={"csrf": token}, headers={"origin": BASE})
        after = site.store.read(lambda conn: conn.execute("SELECT count(*) FROM submissions").fetchone()[0])
        signout = await c.post("/signout", data={}, headers={"origin": BASE})
    assert other.status_code == no_nonce.status_code == 403
    assert without.status_code == foreign.status_code == cross_site.status_code == 403
    assert signout.status_code == 403
    assert sent.status_code == 303 and sent.headers["location"] == "/me?n=sent"
    assert after == before + 1 and site.submitted == 1
    leftovers = [p.name for p in (site.folder / "archives").iterdir() if p.name.startswith(".")]
    assert leftovers == []  # the refused uploads left nothing behind


async def test_another_users_pages_answer_404_as_pages_that_do_not_exist(site: Site) -> None:
    """bee (seat 1 of the game) is bob's; alice may read her own ace and nothing of bob's."""
    subs = dict(
        site.store.read(lambda c: c.execute("SELECT bot, id FROM submissions WHERE status = 'active'").fetchall())
    )
    bee = subs["bee"]
    async with site.client() as alice, site.client() as bob, site.client() as host:
        await sign_in(alice, site.tokens["alice"])
        await sign_in(bob, site.tokens["bob"])
        await sign_in(host, site.tokens["host"])
        theirs = [
            await alice.get(p)
            for p in (f"/me/submissions/{bee}", f"/me/submissions/{bee}/archive", f"/me/games/{site.game}/stderr/1")
        ]
        missing = await alice.get("/me/submissions/999")
        own = await bob.get(f"/me/games/{site.game}/stderr/1")
        admin = await host.get(f"/me/games/{site.game}/stderr/1")
        anonymous = await httpx.AsyncClient(transport=httpx.ASGITransport(app=site.app), base_url=BASE).get(
            f"/me/games/{site.game}/stderr/1"
        )
    assert [r.status_code for r in theirs] == [404, 404, 404] and missing.status_code == 404
    assert theirs[0].text.count("no such page") == missing.text.count("no such page") == 1
    assert own.text == admin.text == "bee's stderr\n"
    assert anonymous.status_code == 303  # to the sign-in page


async def test_a_revoked_token_ends_its_sessions(site: Site) -> None:
    async with site.client() as c:
        await sign_in(c, site.tokens["bob"])
        before = await c.get("/me")
        with site.store.transaction() as conn:
            revoke(conn, "bob", now=now_text())
        after = await c.get("/me")
    assert before.status_code == 200 and after.status_code == 303


async def test_text_a_competitor_controls_is_shown_as_text(site: Site) -> None:
    """A build log is the bot's own output: on its page it is escaped, its bidi override made visible."""
    sub = site.store.read(lambda c: c.execute("SELECT id, sha256 FROM submissions WHERE bot = 'ace'").fetchall())[-1]
    (site.folder / "builds").mkdir(exist_ok=True)
    (site.folder / "builds" / f"{sub[1]}.log").write_text(f"compiling\n{PAYLOAD}\n")
    async with site.client() as c:
        await sign_in(c, site.tokens["alice"])
        res = await c.get(f"/me/submissions/{sub[0]}")
    assert res.status_code == 200
    assert "<img src=x" not in res.text and "&lt;img src=x onerror=document.title=&#39;XSS&#39;&gt;" in res.text
    assert "\u202e" not in res.text and "\\u202e" in res.text


async def test_an_unexpected_error_is_one_logged_line_with_an_id_and_no_traceback(
    site: Site, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(_conn: Any, _close: Any = None) -> Any:
        raise RuntimeError("the board broke\nbadly")

    monkeypatch.setattr(arena_views, "board_view", broken)
    with caplog.at_level(logging.ERROR, logger="referee.web"):
        async with site.client() as c:
            res = await c.get("/")
    said = re.search(r"error ([0-9a-f]{8})", res.text)
    assert res.status_code == 500 and said is not None and "Traceback" not in res.text and "broke" not in res.text
    lines = [r.getMessage() for r in caplog.records if r.name == "referee.web"]
    assert len(lines) == 1 and lines[0].startswith(f"error {said.group(1)}: GET /: RuntimeError: the board broke badly")
    assert all(r.exc_info is None for r in caplog.records)


async def test_a_game_is_not_shown_before_its_whole_unit_has_finished(site: Site) -> None:
    from arena_rows import record

    from referee.arena.units import log_name, record_game, start_unit

    ids = [
        r[0]
        for r in site.store.read(lambda c: c.execute("SELECT id FROM submissions WHERE status = 'active'").fetchall())
    ]
    with site.store.transaction() as conn:
        unit = start_unit(conn, (ids[0], ids[1]), 5, now_text(), 0.0)
    (site.folder / "logs" / log_name(unit.id, 0)).write_text("{}\n")
    with site.store.transaction() as conn:
        running = record_game(conn, unit.id, 0, (ids[0], ids[1]), record(["x", "y"], [52, 3]), "cd" * 32, now_text())
    async with site.client() as c:
        await sign_in(c, site.tokens["host"])  # not even an admin
        page = await c.get(f"/games/{running}")
        log = await c.get(f"/games/{running}/log")
    assert page.status_code == log.status_code == 404


# ------------------------------------------------------------------ the host's page


async def admin_form(c: httpx.AsyncClient, path: str, **fields: str) -> httpx.Response:
    token = csrf_of((await c.get("/admin")).text)
    origin = str(c.base_url).rstrip("/")
    return await c.post(path, data={"csrf": token, **fields}, headers={"origin": origin})


async def test_the_hosts_page_is_a_404_to_everyone_but_admins(site: Site) -> None:
    async with site.client() as nobody, site.client() as alice, site.client() as host:
        await sign_in(alice, site.tokens["alice"])
        await sign_in(host, site.tokens["host"])
        anonymous = await nobody.get("/admin")
        user = await alice.get("/admin")
        export = await alice.get("/admin/export/games.csv")
        token = csrf_of((await alice.get("/me")).text)
        post = await alice.post("/admin/matchmaking", data={"csrf": token, "action": "pause"}, headers={"origin": BASE})
        admin = await host.get("/admin")
    assert anonymous.status_code == 303 and user.status_code == export.status_code == post.status_code == 404
    assert admin.status_code == 200 and "The host's controls" in admin.text
    paused = site.store.read(lambda c: c.execute("SELECT count(*) FROM controls").fetchone()[0])
    assert paused == 0  # the refused form changed nothing


async def test_the_host_pauses_closes_disqualifies_and_it_shows_everywhere(site: Site) -> None:
    async with site.client() as host, site.client() as public:
        await sign_in(host, site.tokens["host"])
        paused = await admin_form(host, "/admin/matchmaking", action="pause")
        closed = await admin_form(host, "/admin/submissions", action="close_at", at="2026-01-02T03:04:05Z")
        bad_time = await admin_form(host, "/admin/submissions", action="close_at", at="tomorrow evening")
        no_reason = await admin_form(host, "/admin/bots/bee", action="disqualify", reason="  ")
        out = await admin_form(host, "/admin/bots/bee", action="disqualify", reason="copied <b>ace</b>")
        front = await public.get("/")
        bee = await public.get("/bots/bee")
        api = (await public.get("/api/leaderboard")).json()
        csv = await host.get("/admin/export/games.csv")
    assert paused.status_code == closed.status_code == out.status_code == 303
    assert bad_time.status_code == no_reason.status_code == 400
    assert "ISO-8601" in bad_time.text and "say why" in no_reason.text
    assert api["matchmaking"] == "paused" and api["submissions"] == "closed"
    assert api["submissions_close"] == "2026-01-02T03:04:05Z"
    assert "Matchmaking is paused" in front.text and "2026-01-02 03:04:05 UTC" in front.text
    assert "copied &lt;b&gt;ace&lt;/b&gt;" in front.text and "copied &lt;b&gt;ace&lt;/b&gt;" in bee.text
    assert [e["bot"] for e in api["bots"]] == ["ace"]
    rows = site.store.read(lambda c: c.execute("SELECT count(*) FROM games").fetchone()[0])
    assert csv.status_code == 200 and len(csv.text.strip().splitlines()) == rows + 1  # a header and every game


async def test_a_user_added_on_the_page_sees_their_token_once_and_a_revoked_one_is_signed_out(site: Site) -> None:
    async with site.client() as host, site.client() as carol:
        await sign_in(host, site.tokens["host"])
        added = await admin_form(host, "/admin/users", user="carol")
        token = re.search(r'<pre class="token" id="issued-token">([^<]+)</pre>', added.text)
        again = await host.get("/admin")
        assert token is not None
        signed = await sign_in(carol, token.group(1))
        revoked = await admin_form(host, "/admin/users/carol/revoke")
        after = await carol.get("/me")
    assert added.status_code == 200 and added.headers["cache-control"] == "no-store"
    assert token.group(1) not in again.text  # shown once
    assert signed.status_code == 303 and revoked.status_code == 303 and after.status_code == 303


async def test_an_owner_makes_a_retired_version_active_again(site: Site) -> None:
    v1 = site.store.read(
        lambda c: c.execute("SELECT id FROM submissions WHERE bot = 'ace' ORDER BY version").fetchone()
    )[0]
    async with site.client() as alice:
        await sign_in(alice, site.tokens["alice"])
        page_ = await alice.get(f"/me/submissions/{v1}")
        res = await alice.post(
            f"/me/submissions/{v1}/activate", data={"csrf": csrf_of(page_.text)}, headers={"origin": BASE}
        )
    status = dict(
        site.store.read(lambda c: c.execute("SELECT version, status FROM submissions WHERE bot = 'ace'").fetchall())
    )
    assert "Make this version active again" in page_.text
    assert res.status_code == 303 and res.headers["location"].endswith("?n=active")
    assert status == {1: "active", 2: "retired"}


async def test_the_start_page_offers_every_starter_kit_as_the_files_arena_kit_writes(
    site: Site, tmp_path: Path
) -> None:
    from referee.arena.kits import KIT_LANGUAGES, get_kit, write_kit

    async with site.client() as c:
        start = await c.get("/start")
        python = await c.get("/start/kits/python.tar.gz")
        unknown = await c.get("/start/kits/cobol.tar.gz")
    assert all(f"/start/kits/{lang}.tar.gz" in start.text for lang in KIT_LANGUAGES)
    written = write_kit(get_kit("python"), tmp_path / "kit")
    with tarfile.open(fileobj=io.BytesIO(python.content)) as tar:
        sent = {m.name.removeprefix("python-starter/"): tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    assert sent == {str(p.relative_to(tmp_path / "kit")): p.read_bytes() for p in written}
    assert unknown.status_code == 404
