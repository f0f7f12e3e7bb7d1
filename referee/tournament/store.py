"""The results database of one tournament: a SQLite file, WAL mode.

One row per finished game, written in its own transaction the moment the
game ends, keyed by the game's stable schedule key, so a tournament killed
at any moment resumes exactly: what is in the database is finished and
counted once (the primary key makes a second insert impossible), what is not
is played again. The schema (`tournament/schema`) is documented in
`docs/tournaments.md`.

While a tournament runs, its process holds an exclusive `flock` on the
database file, so two referees never run the same tournament at once;
readers (`chicago-referee standings`) are never blocked. Opening the file
and taking the lock live in `tournament/store_file`.

The database also holds what makes the results tamper-evident: the sha256
of every game's log, and the seed commitment (`seed_commitment`: the master
seed and a random salt, kept here and nowhere else until the tournament
completes, with the published hash of both; see `commitment_of`). Every
SQLite error is translated into one `ResultsError` line naming the file.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import secrets
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from referee import __version__
from referee.errors import RefereeError, ResultsError
from referee.play.game_spec import GameRecord
from referee.tournament.schedule import ScheduledGame
from referee.tournament.schema import COMMITMENT_SCHEME, add_seat_timing_columns, check_types, damaged
from referee.tournament.store_file import open_database
from referee.tournament.store_rows import (
    Commitment,
    FailureRow,
    GameRow,
    RunRow,
    TournamentRow,
    commitment_of,
)

F = TypeVar("F", bound=Callable[..., Any])


def _translated(method: F) -> F:
    """SQLite errors inside a Store method become one ResultsError line naming the file."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.IntegrityError:
            raise  # a constraint the referee itself broke (say, a game recorded twice): a bug, not damage
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, exc) from exc
        except ValueError as exc:  # a JSON column that no longer parses
            raise ResultsError(
                f"{self.path}: the results database holds a value that does not parse ({exc}); "
                "it was edited by hand or tampered with; restore it or check it with "
                "chicago-referee verify --db"
            ) from exc

    return wrapper  # type: ignore[return-value]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


class Store:
    """An open results database. Use `Store.open`; always `close()`."""

    def __init__(self, path: Path, conn: sqlite3.Connection, lock_fd: int | None) -> None:
        self.path = path
        self.conn = conn
        self._lock_fd = lock_fd
        self._timing_columns = False  # game_seats has cpu_ms and asked (added on the first record)
        self._identity: tuple[int, int] | None = None

    # ------------------------------------------------------------ open/close

    @classmethod
    def open(cls, path: Path | str, *, create: bool = False, lock: bool = False) -> Store:
        """Open (or with `create`, create) a results database.

        `lock` takes the exclusive run lock; it fails at once, with a clear
        message, if another referee is running this tournament. A file that
        is not SQLite, a damaged page or a missing table is one ResultsError.
        """
        path = Path(path)
        conn, lock_fd, identity = open_database(path, create=create, lock=lock)
        store = cls(path, conn, lock_fd)
        store._identity = identity
        return store

    def check_same_file(self) -> None:
        """Raise if the database file was deleted or replaced since it was opened.

        SQLite keeps writing to the file it opened, so without this a run whose
        database was deleted would end "completed" with its results nowhere.
        """
        try:
            st = os.stat(self.path)
        except OSError:
            raise ResultsError(
                f"{self.path}: the results database was deleted while the tournament ran; "
                "its results are lost (the logs remain); restore it or run again with --fresh"
            ) from None
        if (st.st_dev, st.st_ino) != self._identity:
            raise ResultsError(
                f"{self.path}: the results database was replaced by another file while the "
                "tournament ran; restore the original or run again with --fresh"
            )

    def close(self) -> None:
        self.conn.close()
        if self._lock_fd is not None:  # after the connection: closing an fd drops this process's file locks
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def remove(path: Path | str) -> None:
        """Delete a results database (with its WAL and shared-memory files),
        damaged or not, unless a referee is running it right now."""
        path = Path(path)
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RefereeError(f"{path}: another referee is running this tournament right now") from None
            finally:
                os.close(fd)
        for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            p.unlink(missing_ok=True)

    # ------------------------------------------------------------ paths

    def rel_path(self, p: Path | str | None) -> str | None:
        """Store a path relative to the database's folder when it lies inside it."""
        if p is None:
            return None
        p = Path(p).resolve()
        try:
            return str(p.relative_to(self.path.resolve().parent))
        except ValueError:
            return str(p)

    def abs_path(self, p: str | None) -> Path | None:
        if p is None:
            return None
        q = Path(p)
        return q if q.is_absolute() else self.path.resolve().parent / q

    # ------------------------------------------------------------ tournament

    @_translated
    def tournament(self) -> TournamentRow | None:
        row = self.conn.execute(
            "SELECT name, config_path, config_text, definition, fingerprint, scheduled_games, created_at,"
            " updated_at, referee_version FROM tournament WHERE id = 1"
        ).fetchone()
        if row is None:
            return None
        return TournamentRow(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6], row[7], row[8])

    @_translated
    def write_tournament(
        self,
        *,
        name: str,
        config_path: str | None,
        config_text: str,
        definition: dict[str, Any],
        fingerprint: str,
        scheduled_games: int,
        bots: list[tuple[str, Any, str | None, str | None, list[str]]],
    ) -> None:
        """Insert or update the tournament row and the bot list (one transaction)."""
        now = _now()
        with self._transaction():
            self.conn.execute(
                "INSERT INTO tournament (id, name, config_path, config_text, definition, fingerprint,"
                " scheduled_games, created_at, updated_at, referee_version) VALUES (1,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT(id) DO UPDATE SET name=excluded.name, config_path=excluded.config_path,"
                " config_text=excluded.config_text, definition=excluded.definition,"
                " fingerprint=excluded.fingerprint, scheduled_games=excluded.scheduled_games,"
                " updated_at=excluded.updated_at, referee_version=excluded.referee_version",
                (
                    name,
                    config_path,
                    config_text,
                    json.dumps(definition, sort_keys=True),
                    fingerprint,
                    scheduled_games,
                    now,
                    now,
                    __version__,
                ),
            )
            self.conn.execute("DELETE FROM bots")
            self.conn.executemany(
                "INSERT INTO bots (name, position, command, dir, build, argv) VALUES (?,?,?,?,?,?)",
                [(n, i, json.dumps(cmd), d, b, json.dumps(argv)) for i, (n, cmd, d, b, argv) in enumerate(bots)],
            )

    @_translated
    def bot_names(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT name FROM bots ORDER BY position")]

    # ------------------------------------------------------------ runs

    @_translated
    def begin_run(self, concurrency: int) -> int:
        with self._transaction():
            cur = self.conn.execute(
                "INSERT INTO runs (started_at, status, concurrency, pid, games_before) VALUES (?,?,?,?,?)",
                (_now(), "running", concurrency, os.getpid(), self.finished_count()),
            )
        return int(cur.lastrowid or 0)

    @_translated
    def end_run(self, run_id: int, status: str) -> None:
        with self._transaction():
            self.conn.execute(
                "UPDATE runs SET ended_at = ?, status = ?,"
                " games_recorded = (SELECT count(*) FROM games WHERE run_id = ?) WHERE id = ?",
                (_now(), status, run_id, run_id),
            )

    @_translated
    def runs(self) -> list[RunRow]:
        return [
            RunRow(*r)
            for r in self.conn.execute(
                "SELECT r.id, r.started_at, r.ended_at, r.status, r.concurrency, r.pid, r.games_before,"
                " (SELECT count(*) FROM games g WHERE g.run_id = r.id) FROM runs r ORDER BY r.id"
            )
        ]

    # ------------------------------------------------------------ games

    @_translated
    def finished_keys(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT key FROM games")}

    @_translated
    def finished_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM games").fetchone()[0])

    @_translated
    def spec_hashes(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """key -> (spec hash, spec) of every finished game."""
        return {k: (h, json.loads(s)) for k, h, s in self.conn.execute("SELECT key, spec_hash, spec FROM games")}

    @_translated
    def record_game(
        self,
        game: ScheduledGame,
        spec: dict[str, Any],
        spec_hash: str,
        rec: GameRecord,
        log_path: Path | str | None,
        started: float,
        finished: float,
        run_id: int | None,
        log_sha256: str | None = None,
    ) -> None:
        """Commit one finished game: its row (with its log's sha256), seats and failures, atomically."""
        self.check_same_file()
        names = list(rec.seat_names)
        winner = names[rec.winner] if rec.winner is not None else None
        think = rec.think_ms or [0.0] * len(names)
        cpu = [None if c is None else round(c, 3) for c in rec.cpu_ms] or [None] * len(names)
        asked: list[int | None] = list(rec.asked) or [None] * len(names)
        if not self._timing_columns:
            add_seat_timing_columns(self.conn)
            self._timing_columns = True
        with self._transaction():
            self.conn.execute(
                "INSERT INTO games (key, game_id, table_key, deal_set, rotation, seed, spec, spec_hash,"
                " winner_seat, winner, reason, deals, decisions, log_path, log_sha256, run_id, started_at,"
                " finished_at, duration_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    game.key,
                    game.game_id,
                    game.table_key,
                    game.deal_set,
                    game.rotation,
                    game.seed,
                    json.dumps(spec, sort_keys=True),
                    spec_hash,
                    rec.winner,
                    winner,
                    rec.reason,
                    rec.deals,
                    rec.decisions,
                    self.rel_path(log_path),
                    log_sha256,
                    run_id,
                    _iso(started),
                    _iso(finished),
                    round(finished - started, 3),
                ),
            )
            self.conn.executemany(
                "INSERT INTO game_seats (game_key, seat, bot, score, placement, forfeited, think_ms, cpu_ms, asked)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    (
                        game.key,
                        s,
                        names[s],
                        rec.scores[s],
                        rec.placements[s],
                        int(s in rec.forfeited),
                        round(think[s], 3),
                        cpu[s],
                        asked[s],
                    )
                    for s in range(len(names))
                ],
            )
            self.conn.executemany(
                "INSERT INTO failures (game_key, seat, bot, reason, message) VALUES (?,?,?,?,?)",
                [(game.key, f.seat, names[f.seat], f.reason, f.message) for f in rec.failures],
            )

    @_translated
    def games(self) -> list[GameRow]:
        """Every finished game, in schedule order."""
        check_types(self.path, self.conn)
        seats: dict[str, list[tuple[int, str, int, int, int]]] = {}
        for key, seat, bot, score, place, forf in self.conn.execute(
            "SELECT game_key, seat, bot, score, placement, forfeited FROM game_seats ORDER BY game_key, seat"
        ):
            seats.setdefault(key, []).append((seat, bot, score, place, forf))
        fails: dict[str, list[FailureRow]] = {}
        for key, seat, bot, reason, message in self.conn.execute(
            "SELECT game_key, seat, bot, reason, message FROM failures ORDER BY id"
        ):
            fails.setdefault(key, []).append(FailureRow(seat, bot, reason, message))
        rows = []
        for (
            key,
            game_id,
            table_key,
            deal_set,
            rotation,
            seed,
            winner_seat,
            reason,
            deals,
            decisions,
            log_path,
            duration,
            log_sha256,
        ) in self.conn.execute(
            "SELECT key, game_id, table_key, deal_set, rotation, seed, winner_seat, reason, deals, decisions,"
            " log_path, duration_s, log_sha256 FROM games ORDER BY game_id"
        ):
            s = seats.get(key, [])
            rows.append(
                GameRow(
                    key=key,
                    game_id=game_id,
                    table=tuple(table_key.split("+")),
                    deal_set=deal_set,
                    rotation=rotation,
                    seed=seed,
                    seats=tuple(x[1] for x in s),
                    scores=tuple(x[2] for x in s),
                    placements=tuple(x[3] for x in s),
                    forfeited=tuple(x[0] for x in s if x[4]),
                    winner_seat=winner_seat,
                    reason=reason,
                    deals=deals,
                    decisions=decisions,
                    failures=tuple(fails.get(key, [])),
                    log_path=log_path,
                    duration_s=duration,
                    log_sha256=log_sha256,
                )
            )
        return rows

    # ------------------------------------------------------------ seed commitment

    @_translated
    def commitment(self) -> Commitment | None:
        row = self.conn.execute(
            "SELECT scheme, commitment, source, seed, salt, committed_at, revealed_at, results_digest"
            " FROM seed_commitment WHERE id = 1"
        ).fetchone()
        return None if row is None else Commitment(*row)

    @_translated
    def commit_seed(self, seed: int, source: str) -> Commitment:
        """Store the master seed with a fresh secret salt and its commitment (replacing an unused one)."""
        salt = secrets.token_hex(16)
        with self._transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO seed_commitment (id, scheme, commitment, source, seed, salt, committed_at)"
                " VALUES (1,?,?,?,?,?,?)",
                (COMMITMENT_SCHEME, commitment_of(seed, salt), source, seed, salt, _now()),
            )
        c = self.commitment()
        assert c is not None
        return c

    @_translated
    def reveal(self, digest: str) -> Commitment:
        """The tournament completed: seed and salt may be shown, with the digest of every result."""
        with self._transaction():
            self.conn.execute(
                "UPDATE seed_commitment SET revealed_at = ?, results_digest = ? WHERE id = 1", (_now(), digest)
            )
        c = self.commitment()
        assert c is not None
        return c

    # ------------------------------------------------------------ helpers

    def _transaction(self) -> _Tx:
        return _Tx(self.conn)


class _Tx:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def open_for_reading(path: Path | str) -> Store:
    """Open an existing results database for reports; a clear error otherwise."""
    store = Store.open(path)
    if store.tournament() is None:
        store.close()
        raise RefereeError(f"{path}: this results database has no tournament in it yet")
    return store
