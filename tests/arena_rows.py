"""An arena's rows written the way the arena writes them, without processes:
three versions of two users' bots, one finished unit, and a game with a
failure at each seat; for the tests of the API and of the pages."""

from __future__ import annotations

import hashlib
from pathlib import Path

from referee.arena.online import Rating
from referee.arena.store import ArenaStore, now_text
from referee.arena.submissions import activate, add_submission, claim_bot
from referee.arena.units import finish_unit, log_name, record_game, save_ratings, start_unit, unit_totals
from referee.arena.users import add_user, new_token
from referee.play.game_spec import GameRecord


def record(seat_names: list[str], scores: list[int]) -> GameRecord:
    placements = [1 + sum(o > s for o in scores) for s in scores]
    return GameRecord(
        game_id=1,
        seed=7,
        deal_set=0,
        seat_names=seat_names,
        winner=placements.index(1),
        scores=scores,
        placements=placements,
        reason="target_score",
        failures=[],
        forfeited=[],
        deals=3,
        decisions=40,
        log_path=None,
    )


def field(folder: Path) -> tuple[ArenaStore, list[int]]:
    """Three active versions (one of them a second version that retired the first) and one played unit."""
    store = ArenaStore.open(folder)
    ids = []
    with store.transaction() as conn:
        for user in ("alice", "bob"):
            add_user(conn, user, admin=False, now=now_text())
        for bot, owner, text in [("ace", "alice", "1"), ("ace", "alice", "2"), ("bee", "bob", "3")]:
            claim_bot(conn, bot, owner, now_text())
            sha = hashlib.sha256(text.encode()).hexdigest()
            sub = add_submission(
                conn, bot=bot, sha256=sha, size=10, kind="zip", files=1, unpacked=10, now=now_text(), epoch=0.0
            )
            activate(conn, sub.id, "python", "ok", now_text())
            ids.append(sub.id)
        unit = start_unit(conn, (ids[1], ids[2]), 99, now_text(), 0.0)
    logs = folder / "logs"
    for rotation, (seats, scores) in enumerate([((ids[1], ids[2]), [52, 30]), ((ids[2], ids[1]), [12, 52])]):
        (logs / log_name(unit.id, rotation)).write_text(f'{{"rotation": {rotation}}}\n')
        with store.transaction() as conn:
            record_game(conn, unit.id, rotation, seats, record(["x", "y"], scores), "ab" * 32, now_text())
    with store.transaction() as conn:
        totals = unit_totals(conn, unit)
        finish_unit(conn, unit, totals, now_text())
        save_ratings(conn, {ids[1]: Rating(mu=29.0, sigma=7.0), ids[2]: Rating(mu=21.0, sigma=7.0)})
    return store, ids


FAILURES = [
    '{"type":"header","game":"chicago"}',
    '{"type":"recv","seat":0,"line":"{\\"type\\":\\"act\\"}"}',
    '{"type":"failure","seat":0,"reason":"illegal","message":"no such card","detail":"ace secret plan"}',
    '{"type":"failure","seat":1,"reason":"crash","message":"bot is not running","detail":"[stderr] bee secret"}',
    '{"type":"result","winner":null}',
]


def failed_game(folder: Path) -> tuple[ArenaStore, dict[str, str], int]:
    """A finished unit whose game 1 has a failure at each seat (seat 0: ace.v2, seat 1: bee.v1), each
    with what its bot wrote, and each seat's stderr kept beside the log."""
    store, _ids = field(folder)
    tokens = {}
    with store.transaction() as conn:
        tokens["host"] = add_user(conn, "host", admin=True, now=now_text()).token
        for user in ("alice", "bob"):
            tokens[user] = new_token(conn, user).token
    game = store.read(lambda c: c.execute("SELECT id, log_name FROM games WHERE rotation = 0").fetchone())
    log = folder / "logs" / game[1]
    log.write_text("\n".join(FAILURES) + "\n")
    for seat, text in enumerate(["ace's stderr\n", "bee's stderr\n"]):
        (folder / "logs" / game[1].replace(".jsonl", f".seat{seat}.stderr")).write_text(text)
    return store, tokens, game[0]
