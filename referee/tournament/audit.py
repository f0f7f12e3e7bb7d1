"""Auditing a results database against its game logs and its seed commitment.

`audit_store` is what `chicago-referee verify --db DB` runs. It checks that
the tournament's numbers can be trusted by anyone, after the fact:

- the commitment: once revealed, sha256 of `chicago-referee-seed:SEED:SALT`
  equals the commitment printed when the tournament started;
- every game row against its log: the log exists, its sha256 is the one
  stored when the game ended, its header names the same game id, deal set,
  seed and seats, and its result record says the same winner, scores,
  placements, reason, forfeits, failures and decision count;
- every log re-simulates exactly (`replay.verify`), so its deals follow from
  its seed and every action was legal; and each game's seed is derived from
  the revealed master seed (`play.seeding.derive_seed`);
- nothing is missing: no log of a finished game lacks its row, a completed
  tournament has a row for every scheduled game, and the digest of all
  results equals the one stored at the reveal (which the host published).

Each difference names its game and what differs. Nothing is repaired.
The hashes the runner stores and checks during a run (`file_sha256`,
`result_record`, `results_digest`) live here too, so both sides agree.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import CorruptLog
from referee.play.seeding import derive_seed
from referee.replay.load import GameLog, LogMismatch, load_log
from referee.replay.verify import verify_log
from referee.tournament.store import Store, open_for_reading
from referee.tournament.store_rows import Commitment, GameRow, commitment_of

_GAME_LOG = re.compile(r"^\d{5}-.+\.jsonl$")

VERIFIED = "verified"  # the revealed seed and salt match the commitment
NOT_REVEALED = "not revealed"  # the tournament has not completed: nothing to check the deals against yet
MISSING = "missing"
MISMATCH = "mismatch"


@dataclass(frozen=True)
class Difference:
    game: str  # the game's key, a log's file name, or "tournament"
    what: str

    def __str__(self) -> str:
        return f"{self.game}: {self.what}"


@dataclass
class Audit:
    """What `audit_store` found."""

    db: str
    scheduled: int
    games: int = 0
    actions: int = 0  # re-simulated
    commitment: str = MISSING
    digest: str = ""  # of the results as they are now
    differences: list[Difference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "scheduled_games": self.scheduled,
            "games": self.games,
            "actions": self.actions,
            "commitment": self.commitment,
            "results_digest": self.digest,
            "ok": self.ok,
            "differences": [{"game": d.game, "what": d.what} for d in self.differences],
        }


def file_sha256(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def result_record(row: GameRow) -> dict[str, Any]:
    """What a row says a game produced, with its seed and its log's hash: what must not change."""
    return {**row.result(), "seed": row.seed, "log_sha256": row.log_sha256}


def results_digest(rows: list[GameRow]) -> str:
    """sha256 over every game's `result_record`, in game id order: one value to publish."""
    h = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r.game_id):
        h.update(json.dumps(result_record(row), sort_keys=True, separators=(",", ":")).encode() + b"\n")
    return h.hexdigest()


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _row_says(row: GameRow) -> dict[str, Any]:
    return {
        "seats": list(row.seats),
        "winner": row.winner_seat,
        "scores": list(row.scores),
        "placements": list(row.placements),
        "reason": row.reason,
        "forfeited": sorted(row.forfeited),
        "decisions": row.decisions,
        "failures": [[f.seat, f.reason] for f in row.failures],
        "game_id": row.game_id,
        "deal_set": row.deal_set,
        "seed": row.seed,
    }


def _log_says(log: GameLog) -> dict[str, Any]:
    h, res = log.header, log.result
    assert res is not None  # load_log requires the result record
    return {
        "seats": log.names,
        "winner": res.winner,
        "scores": list(res.scores),
        "placements": list(res.placements),
        "reason": res.reason,
        "forfeited": sorted(res.forfeited),
        "decisions": res.decisions,
        "failures": [[f.seat, f.reason] for f in res.failures],
        "game_id": h.game_id,
        "deal_set": h.deal_set,
        "seed": h.seed,
    }


class _Auditor:
    def __init__(self, store: Store) -> None:
        self.store = store
        info = store.tournament()
        self.audit = Audit(db=str(store.path), scheduled=info.scheduled_games if info else 0)
        self.sealed: Commitment | None = store.commitment()

    def differ(self, game: str, what: str) -> None:
        self.audit.differences.append(Difference(game, what))

    def run(self) -> Audit:
        self._check_commitment()
        rows = self.store.games()
        self.audit.games = len(rows)
        for row in rows:
            self._check_row(row)
        self._check_complete(rows)
        return self.audit

    def _check_commitment(self) -> None:
        c = self.sealed
        if c is None:
            self.differ(
                "tournament",
                "the database holds no seed commitment, so nobody can check that the cards were fixed before play",
            )
            return
        if not c.revealed:
            self.audit.commitment = NOT_REVEALED
            return
        got = commitment_of(c.seed, c.salt)
        if got != c.commitment:
            self.audit.commitment = MISMATCH
            self.differ(
                "tournament",
                f"the revealed seed {c.seed} and salt {c.salt} do not match the commitment: "
                f"their sha256 is {got}, the commitment is {c.commitment}",
            )
        else:
            self.audit.commitment = VERIFIED
        info = self.store.tournament()
        configured = info.definition.get("seed") if info is not None else None
        if c.source == "config" and configured != c.seed:
            self.differ("tournament", f"the config's seed {_show(configured)} is not the committed seed {c.seed}")

    def _check_row(self, row: GameRow) -> None:
        key = row.key
        c = self.sealed
        if c is not None and c.revealed:
            want = derive_seed(c.seed, "deal-set", row.deal_set)
            if row.seed != want:
                self.differ(
                    key,
                    f"seed {row.seed} does not follow from the revealed master seed {c.seed} "
                    f"(deal set {row.deal_set} gives {want})",
                )
        path = self.store.abs_path(row.log_path)
        if path is None:
            self.differ(key, "no game log was recorded, so the row cannot be checked")
            return
        if not path.is_file():
            self.differ(key, f"its log {path} is missing")
            return
        try:
            actual = file_sha256(path)
        except OSError as exc:
            self.differ(key, f"its log {path} cannot be read: {exc.strerror or exc}")
            return
        if row.log_sha256 is None:
            self.differ(key, "the database holds no sha256 of its log")
        elif actual != row.log_sha256:
            self.differ(
                key,
                f"its log {path.name} changed after the game was recorded: sha256 {actual}, "
                f"the database says {row.log_sha256}",
            )
        try:
            log = load_log(path)
        except (CorruptLog, LogMismatch) as exc:
            self.differ(key, f"its log cannot be read: {exc}")
            return
        db, lg = _row_says(row), _log_says(log)
        for k in db:
            if db[k] != lg[k]:
                self.differ(key, f"{k}: the database says {_show(db[k])}, the log {path.name} says {_show(lg[k])}")
        if c is not None and c.revealed and log.header.match_seed not in (None, c.seed):
            self.differ(key, f"its log names master seed {log.header.match_seed}, not the revealed {c.seed}")
        try:
            self.audit.actions += verify_log(log)
        except LogMismatch as exc:
            self.differ(key, f"its log does not re-simulate: {exc}")

    def _check_complete(self, rows: list[GameRow]) -> None:
        recorded = {p for r in rows if (p := self.store.abs_path(r.log_path)) is not None}
        folders = {p.parent for p in recorded}
        for folder in sorted(f for f in folders if f.is_dir()):
            for p in sorted(folder.iterdir()):
                if _GAME_LOG.match(p.name) and p not in recorded:
                    self.differ(
                        p.name, f"a finished game's log in {folder} has no row in the database (was its row deleted?)"
                    )
        self.audit.digest = results_digest(rows)
        c = self.sealed
        if c is None or not c.revealed:
            return
        if len(rows) != self.audit.scheduled:
            self.differ(
                "tournament",
                f"the tournament completed, but {len(rows)} of its {self.audit.scheduled} scheduled games have rows",
            )
        if c.results_digest != self.audit.digest:
            self.differ(
                "tournament",
                f"the results digest is {self.audit.digest}, but {c.results_digest} was "
                "stored when the tournament completed: results changed since",
            )


def audit_store(store: Store) -> Audit:
    """Check a results database against its logs and its commitment (see the module doc)."""
    return _Auditor(store).run()


def audit_path(path: Path | str) -> Audit:
    """Open the database (no lock, no writes) and audit it."""
    store = open_for_reading(path)
    try:
        return audit_store(store)
    finally:
        store.close()
