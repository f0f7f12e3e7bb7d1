"""What everyone may read: the leaderboard, a bot, the finished games and their
logs, from rows written the way the arena writes them (no processes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from arena_rows import FAILURES, failed_game, field, record

from referee.arena.api import make_app
from referee.arena.config import CONFIG_NAME, load_arena, template
from referee.arena.refit import fit_active, save_fit
from referee.arena.store import ArenaStore, now_text
from referee.arena.units import finish_unit, log_name, record_game, start_unit, unit_totals


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "comp"
    folder.mkdir()
    (folder / CONFIG_NAME).write_text(template("board", "chicago", 2))
    ArenaStore.create(folder).close()
    yield folder


def client(folder: Path, store: ArenaStore) -> httpx.AsyncClient:
    app = make_app(load_arena(folder), store)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://arena")


async def test_the_leaderboard_orders_active_versions_by_the_conservative_rating(folder: Path) -> None:
    store, _ids = field(folder)
    async with client(folder, store) as c:
        board = (await c.get("/api/leaderboard")).json()
    store.close()
    assert board["order"].startswith("online rating") and board["game"] == "chicago"
    rows = [(e["rank"], e["bot"], e["version"], e["owner"], e["games"], e["units"]) for e in board["bots"]]
    assert rows == [(1, "ace", 2, "alice", 2, 1), (2, "bee", 1, "bob", 2, 1)]  # ace v1 retired: not listed
    ace = board["bots"][0]["rating"]
    assert (ace["mu"], ace["sigma"], ace["ordinal"], ace["low"], ace["high"]) == (29.0, 7.0, 8.0, 15.0, 43.0)


async def test_a_units_totals_sum_each_members_scores_over_its_rotations(folder: Path) -> None:
    store, _ids = field(folder)
    done = store.read(lambda c: c.execute("SELECT totals FROM units WHERE status = 'done'").fetchone()[0])
    store.close()
    assert done == "[104, 42]"  # ace: 52 + 52; bee: 30 + 12


async def test_games_page_by_bot_and_serve_only_finished_logs(folder: Path) -> None:
    store, _ids = field(folder)
    async with client(folder, store) as c:
        page = (await c.get("/api/games?bot=bee")).json()
        first = (await c.get("/api/games?limit=1")).json()
        rest = (await c.get(f"/api/games?limit=1&after={first['next_after']}")).json()
        log = await c.get(f"/api/games/{page['games'][1]['id']}/log")
        missing = await c.get("/api/games/999/log")
        nobody = await c.get("/api/games?bot=nobody")
        bad = await c.get("/api/games?after=-1")
        ace = (await c.get("/api/bots/ace")).json()
    store.close()
    assert [g["seats"] for g in page["games"]] == [["ace.v2", "bee.v1"], ["bee.v1", "ace.v2"]]
    assert page["games"][0]["scores"] == [52, 30] and page["next_after"] is None
    assert [g["id"] for g in first["games"] + rest["games"]] == [g["id"] for g in page["games"]]
    assert log.status_code == 200 and log.text == '{"rotation": 1}\n'
    assert missing.status_code == 404 and "no finished game" in missing.json()["error"]
    assert nobody.status_code == 404 and bad.status_code == 400 and "whole number" in bad.json()["error"]
    assert ace["owner"] == "alice" and ace["active_version"] == 2
    assert [(v["version"], v["status"], v["games"]) for v in ace["versions"]] == [(1, "retired", 0), (2, "active", 2)]


async def test_the_mle_elo_is_refitted_over_active_versions_and_shown_beside(folder: Path) -> None:
    store, ids = field(folder)
    fit = store.read(fit_active)
    assert fit.units == 1 and fit.note is None and set(fit.elo) == {ids[1], ids[2]}
    (ace, ace_err), (bee, bee_err) = fit.elo[ids[1]], fit.elo[ids[2]]
    assert ace > 0 > bee and ace == pytest.approx(-bee) and ace_err > 0 and bee_err > 0  # centred on the mean
    with store.transaction() as conn:
        save_fit(conn, fit, now_text())
    async with client(folder, store) as c:
        board = (await c.get("/api/leaderboard")).json()
    assert [e["mle_elo"]["elo"] for e in board["bots"]] == [round(ace, 1), round(bee, 1)]
    with store.transaction() as conn:
        conn.execute("UPDATE submissions SET status = 'retired' WHERE id = ?", (ids[2],))
    lonely = store.read(fit_active)
    store.close()
    assert lonely.elo == {} and lonely.note == "fewer than two active versions have played"


async def test_a_units_games_are_shown_only_once_the_whole_unit_has_finished(folder: Path) -> None:
    """Its rotations play one deal: a finished rotation's log would show the cards of those still playing."""
    store, ids = field(folder)
    with store.transaction() as conn:
        unit = start_unit(conn, (ids[1], ids[2]), 5, now_text(), 0.0)
    (folder / "logs" / log_name(unit.id, 0)).write_text("{}\n")
    with store.transaction() as conn:
        running = record_game(conn, unit.id, 0, (ids[1], ids[2]), record(["x", "y"], [52, 3]), "cd" * 32, now_text())
    async with client(folder, store) as c:
        listed = [g["id"] for g in (await c.get("/api/games")).json()["games"]]
        by_bot = [g["id"] for g in (await c.get("/api/games?bot=ace")).json()["games"]]
        log = await c.get(f"/api/games/{running}/log")
        with store.transaction() as conn:
            finish_unit(conn, unit, unit_totals(conn, unit), now_text())
        after = [g["id"] for g in (await c.get("/api/games")).json()["games"]]
    store.close()
    assert running not in listed and running not in by_bot and len(listed) == 2
    assert log.status_code == 404 and "whole unit" in log.json()["error"]
    assert after == [*listed, running]


async def test_what_a_bot_wrote_beside_the_protocol_is_its_owners_alone(folder: Path) -> None:
    store, tokens, game = failed_game(folder)
    as_user = {u: {"Authorization": f"Bearer {t}"} for u, t in tokens.items()}
    async with client(folder, store) as c:
        logs = {u: (await c.get(f"/api/games/{game}/log", headers=as_user.get(u))).text for u in (None, *tokens)}
        stderr = {
            (u, seat): await c.get(f"/api/games/{game}/stderr/{seat}", headers=as_user.get(u))
            for u in (None, *tokens)
            for seat in (0, 1)
        }
        no_seat = await c.get(f"/api/games/{game}/stderr/2", headers=as_user["host"])
    store.close()
    assert "secret" not in logs[None]  # the public copy: every seat's `detail` left out
    assert "ace secret plan" in logs["alice"] and "bee secret" not in logs["alice"]
    assert "bee secret" in logs["bob"] and "ace secret plan" not in logs["bob"]
    assert logs["host"] == "\n".join(FAILURES) + "\n"  # an admin reads the log as it was written
    public = logs[None].splitlines()
    assert public[:2] == FAILURES[:2] and public[4] == FAILURES[4]  # every other line byte for byte
    assert '"reason":"illegal","message":"no such card"' in public[2]
    assert stderr[(None, 0)].status_code == 401
    assert stderr[("alice", 0)].text == "ace's stderr\n" and stderr[("bob", 1)].text == "bee's stderr\n"
    assert stderr[("alice", 1)].status_code == 403 and "only its owner" in stderr[("alice", 1)].json()["error"]
    assert stderr[("bob", 0)].status_code == 403
    assert stderr[("host", 0)].status_code == stderr[("host", 1)].status_code == 200
    assert stderr[("alice", 0)].headers["content-type"].startswith("text/plain")
    assert no_seat.status_code == 404 and "seats 0 to 1" in no_seat.json()["error"]
