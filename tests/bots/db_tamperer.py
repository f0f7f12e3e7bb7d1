"""Tampers with the tournament's results database, then plays first-legal.

`db=PATH mode=rewrite|delete|replace`: on its first request, if the database
already holds a finished game, `rewrite` swaps the placements of every
recorded seat through SQLite, `delete` unlinks the database (with its WAL
and shared-memory files), `replace` puts a copy in its place (same content,
another file). `done=PATH` is written afterwards so a test can tell it acted.
"""

import os
import shutil
import sqlite3

from _botlib import first_legal, options, serve

opts = options()
db = opts["db"]


def tamper() -> None:
    conn = sqlite3.connect(db, timeout=10)
    try:
        if not conn.execute("SELECT count(*) FROM games").fetchone()[0]:
            return
        if opts["mode"] == "rewrite":
            n = conn.execute(
                "SELECT count(*) FROM game_seats WHERE game_key = (SELECT min(key) FROM games)"
            ).fetchone()[0]
            conn.execute(f"UPDATE game_seats SET placement = {n + 1} - placement")
            conn.commit()
    finally:
        conn.close()
    if opts["mode"] == "delete":
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
    elif opts["mode"] == "replace":
        shutil.copyfile(db, db + ".copy")
        os.replace(db + ".copy", db)
    with open(opts["done"], "w") as fh:
        fh.write(opts["mode"])


def on_request(n: int, msg: dict) -> dict:
    if n == 1 and not os.path.exists(opts["done"]):
        tamper()
    return first_legal(msg)


serve("db_tamperer", on_request)
