"""Benchmark (not a test): the arena's public API on a big database.

Fills a fresh arena with synthetic rows written the way the server writes
them (200 active versions, 100,000 games in 50,000 two-seat units, their
ratings and an MLE fit), then times the public routes through the ASGI app
in process and prints p50 and p99 of each.

Run: python tests/benchmarks/bench_arena_api.py [bots] [games] [requests]
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import trio

from referee.arena.api import make_app
from referee.arena.config import CONFIG_NAME, load_arena, template
from referee.arena.online import Rating, UnitResult, update
from referee.arena.refit import fit_active, save_fit
from referee.arena.store import ArenaStore, now_text
from referee.arena.submissions import activate, add_submission, claim_bot
from referee.arena.units import save_ratings
from referee.arena.users import add_user


def fill(folder: Path, bots: int, games: int) -> None:
    store = ArenaStore.create(folder)
    rng = random.Random(1)
    now = now_text()
    with store.transaction() as conn:
        add_user(conn, "host", admin=True, now=now)
        ids = []
        for b in range(bots):
            claim_bot(conn, f"bot{b:03d}", "host", now)
            sha = hashlib.sha256(str(b).encode()).hexdigest()
            sub = add_submission(
                conn, bot=f"bot{b:03d}", sha256=sha, size=1, kind="zip", files=1, unpacked=1, now=now, epoch=0.0
            )
            activate(conn, sub.id, "python", "ok", now)
            ids.append(sub.id)
        ratings: dict[str, Rating] = {}
        game = 0
        for unit in range(1, games // 2 + 1):
            a, b = rng.sample(ids, 2)
            sa, sb = rng.randint(0, 60), rng.randint(0, 60)
            conn.execute(
                "INSERT INTO units (id, members, seed, status, started, started_epoch, finished, done_order, totals)"
                " VALUES (?, ?, 1, 'done', ?, 0, ?, ?, ?)",
                (unit, json.dumps([a, b]), now, now, unit, json.dumps([sa, sb])),
            )
            for rotation, seats in enumerate(((a, b), (b, a))):
                game += 1
                conn.execute(
                    "INSERT INTO games VALUES (?, ?, ?, ?, '[1, 2]', '[1, 2]', 'target_score', '[]', ?, ?, ?)",
                    (game, unit, rotation, json.dumps(list(seats)), f"u{unit}-r{rotation}.jsonl", "0" * 64, now),
                )
                conn.executemany(
                    "INSERT INTO game_seats VALUES (?, ?, ?)", [(game, s, sub) for s, sub in enumerate(seats)]
                )
            update(ratings, UnitResult((str(a), str(b)), (float(sa), float(sb))))
        save_ratings(conn, {int(k): r for k, r in ratings.items()})
        conn.execute(
            "INSERT INTO tallies SELECT gs.submission, count(*), count(DISTINCT g.unit)"
            " FROM game_seats gs JOIN games g ON g.id = gs.game GROUP BY gs.submission"
        )
    started = time.perf_counter()
    fit = store.read(fit_active)
    print(f"MLE refit over {fit.units} units of {bots} versions: {time.perf_counter() - started:.1f} s")
    with store.transaction() as conn:
        save_fit(conn, fit, now)
    store.close()


async def timed(folder: Path, requests: int) -> None:
    store = ArenaStore.open(folder)
    app = make_app(load_arena(folder), store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://arena") as c:
        for route in (
            "/api/leaderboard",
            "/api/bots/bot007",
            "/api/games?bot=bot007&after=0",
            "/api/games?after=90000",
        ):
            times = []
            for _ in range(requests):
                t0 = time.perf_counter()
                res = await c.get(route)
                times.append(time.perf_counter() - t0)
                assert res.status_code == 200, res.text
            times.sort()
            p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
            print(f"{route:<32} p50 {1000 * statistics.median(times):7.1f} ms   p99 {1000 * p99:7.1f} ms")
    store.close()


def main() -> None:
    bots = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    games = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    requests = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "arena"
        folder.mkdir()
        (folder / CONFIG_NAME).write_text(template("bench", "chicago", 2))
        t0 = time.perf_counter()
        fill(folder, bots, games)
        print(f"{bots} active versions, {games} games written in {time.perf_counter() - t0:.1f} s")
        trio.run(timed, folder, requests)


if __name__ == "__main__":
    main()
