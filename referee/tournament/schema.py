"""The results database's schema, and the checks that a file really holds it.

`check_sound` runs whenever a database is opened (every table present,
every page readable); `check_types` before the games are read (SQLite keeps
any value in any column, so a hand-edited row could hold text where a
number belongs). Both raise one `ResultsError` line naming the file, as
`damaged` does for an SQLite error, so no command shows a traceback for a
broken or tampered file. The schema is documented in `docs/tournaments.md`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from referee.errors import ResultsError

SCHEMA_VERSION = 2
COMMITMENT_SCHEME = "sha256(chicago-referee-seed:SEED:SALT)"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tournament (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    name            TEXT NOT NULL,
    config_path     TEXT,
    config_text     TEXT NOT NULL,
    definition      TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    scheduled_games INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    referee_version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bots (
    name     TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    command  TEXT NOT NULL,
    dir      TEXT,
    build    TEXT,
    argv     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at     TEXT NOT NULL,
    ended_at       TEXT,
    status         TEXT NOT NULL,
    concurrency    INTEGER NOT NULL,
    pid            INTEGER NOT NULL,
    games_before   INTEGER NOT NULL,
    games_recorded INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS games (
    key         TEXT PRIMARY KEY,
    game_id     INTEGER NOT NULL UNIQUE,
    table_key   TEXT NOT NULL,
    deal_set    INTEGER NOT NULL,
    rotation    INTEGER NOT NULL,
    seed        INTEGER NOT NULL,
    spec        TEXT NOT NULL,
    spec_hash   TEXT NOT NULL,
    winner_seat INTEGER,
    winner      TEXT,
    reason      TEXT NOT NULL,
    deals       INTEGER NOT NULL,
    decisions   INTEGER NOT NULL,
    log_path    TEXT,
    log_sha256  TEXT,
    run_id      INTEGER REFERENCES runs(id),
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    duration_s  REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS game_seats (
    game_key  TEXT NOT NULL REFERENCES games(key),
    seat      INTEGER NOT NULL,
    bot       TEXT NOT NULL,
    score     INTEGER NOT NULL,
    placement INTEGER NOT NULL,
    forfeited INTEGER NOT NULL,
    think_ms  REAL NOT NULL,
    cpu_ms    REAL,
    asked     INTEGER,
    PRIMARY KEY (game_key, seat)
);
CREATE TABLE IF NOT EXISTS failures (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    game_key TEXT NOT NULL REFERENCES games(key),
    seat     INTEGER NOT NULL,
    bot      TEXT NOT NULL,
    reason   TEXT NOT NULL,
    message  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seed_commitment (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    scheme         TEXT NOT NULL,
    commitment     TEXT NOT NULL,
    source         TEXT NOT NULL,
    seed           INTEGER NOT NULL,
    salt           TEXT NOT NULL,
    committed_at   TEXT NOT NULL,
    revealed_at    TEXT,
    results_digest TEXT
);
CREATE INDEX IF NOT EXISTS game_seats_bot ON game_seats(bot);
CREATE INDEX IF NOT EXISTS failures_game ON failures(game_key);
"""


TABLES = ("meta", "tournament", "bots", "runs", "games", "game_seats", "failures", "seed_commitment")


def damaged(path: Path, exc: BaseException) -> ResultsError:
    what = " ".join(str(exc).split())  # SQLite's text may span lines; the error is one
    if "locked" in what or "busy" in what:
        return ResultsError(
            f"{path}: the results database is locked by another process ({what}); try again when it has finished"
        )
    return ResultsError(
        f"{path}: the results database is damaged or is not one ({what}); restore it from a "
        "backup, or start the tournament again with --fresh"
    )


_INT, _TEXT = ("integer",), ("text",)
_TYPED = (
    (
        "games",
        "key",
        {
            "key": _TEXT,
            "game_id": _INT,
            "table_key": _TEXT,
            "deal_set": _INT,
            "rotation": _INT,
            "seed": _INT,
            "winner_seat": ("integer", "null"),
            "reason": _TEXT,
            "deals": _INT,
            "decisions": _INT,
            "log_path": ("text", "null"),
            "log_sha256": ("text", "null"),
            "duration_s": ("real", "integer"),
        },
    ),
    ("game_seats", "game_key", {"seat": _INT, "bot": _TEXT, "score": _INT, "placement": _INT, "forfeited": _INT}),
    ("failures", "game_key", {"seat": _INT, "bot": _TEXT, "reason": _TEXT, "message": _TEXT}),
)


SEAT_TIMING_COLUMNS = (("cpu_ms", "REAL"), ("asked", "INTEGER"))
"""Added to game_seats after schema 2 was first written: a database made
before them gets them when it records its next game (nullable: older rows
have no CPU time)."""


def add_seat_timing_columns(conn: sqlite3.Connection) -> None:
    have = {r[1] for r in conn.execute("PRAGMA table_info(game_seats)")}
    for name, kind in SEAT_TIMING_COLUMNS:
        if name not in have:
            conn.execute(f"ALTER TABLE game_seats ADD COLUMN {name} {kind}")


def check_sound(path: Path, conn: sqlite3.Connection) -> None:
    """Every table there and every page readable, or one ResultsError."""
    have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [t for t in TABLES if t not in have]
    if missing:
        raise ResultsError(
            f"{path}: the results database lacks the table(s) {', '.join(missing)}; restore it "
            "from a backup, or start the tournament again with --fresh"
        )
    problems = [" ".join(str(r[0]).split()) for r in conn.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise ResultsError(
            f"{path}: the results database is damaged ({'; '.join(problems[:3])}); restore it "
            "from a backup, or start the tournament again with --fresh"
        )


def check_types(path: Path, conn: sqlite3.Connection) -> None:
    """SQLite stores any value in any column: a text where a number belongs
    (a hand-edited row) is one ResultsError naming the game, not a crash later."""
    for table, key, columns in _TYPED:
        test = " OR ".join(f"typeof({c}) NOT IN ({', '.join(repr(t) for t in types)})" for c, types in columns.items())
        bad = conn.execute(f"SELECT {key} FROM {table} WHERE {test} LIMIT 1").fetchone()
        if bad is not None:
            raise ResultsError(
                f"{path}: the {table} row of game {bad[0]} holds a value of the wrong type "
                "(the database was edited by hand or tampered with); check it with "
                "chicago-referee verify --db"
            )
