"""The rows of a tournament's results database as Python values: a finished
game, the tournament, a run, the seed commitment (and how it is computed),
read by the standings, the audit and the live pages."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any


def commitment_of(seed: int, salt: str) -> str:
    """The published commitment: sha256 of `chicago-referee-seed:SEED:SALT` (hex).

    Anyone can recompute it, e.g. `printf %s chicago-referee-seed:7:SALT | sha256sum`.
    """
    return hashlib.sha256(f"chicago-referee-seed:{seed}:{salt}".encode()).hexdigest()


@dataclass(frozen=True)
class FailureRow:
    seat: int
    bot: str
    reason: str
    message: str


@dataclass(frozen=True)
class GameRow:
    """A finished game as stored."""

    key: str
    game_id: int
    table: tuple[str, ...]
    deal_set: int
    rotation: int
    seed: int
    seats: tuple[str, ...]
    scores: tuple[int, ...]
    placements: tuple[int, ...]
    forfeited: tuple[int, ...]
    winner_seat: int | None
    reason: str
    deals: int
    decisions: int
    failures: tuple[FailureRow, ...]
    log_path: str | None
    duration_s: float
    log_sha256: str | None = None

    @property
    def table_key(self) -> str:
        return "+".join(self.table)

    def result(self) -> dict[str, Any]:
        """What the game produced (no timings): equal for equal games."""
        return {
            "key": self.key,
            "game_id": self.game_id,
            "seats": list(self.seats),
            "scores": list(self.scores),
            "placements": list(self.placements),
            "winner_seat": self.winner_seat,
            "reason": self.reason,
            "deals": self.deals,
            "decisions": self.decisions,
            "forfeited": list(self.forfeited),
            "failures": [(f.seat, f.reason) for f in self.failures],
        }


@dataclass(frozen=True)
class TournamentRow:
    name: str
    config_path: str | None
    config_text: str
    definition: dict[str, Any]
    fingerprint: str
    scheduled_games: int
    created_at: str
    updated_at: str
    referee_version: str


@dataclass(frozen=True)
class Commitment:
    """The seed commitment; `seed` and `salt` are secret until `revealed_at` is set."""

    scheme: str
    commitment: str
    source: str  # "drawn" (secret random) or "config" (known to whoever wrote the config)
    seed: int
    salt: str
    committed_at: str
    revealed_at: str | None
    results_digest: str | None

    @property
    def revealed(self) -> bool:
        return self.revealed_at is not None

    def public(self) -> dict[str, Any]:
        """What may be shown: the commitment always, seed and salt once revealed."""
        out: dict[str, Any] = {
            "scheme": self.scheme,
            "commitment": self.commitment,
            "source": self.source,
            "committed_at": self.committed_at,
            "revealed": self.revealed,
        }
        if self.revealed:
            out.update(seed=self.seed, salt=self.salt, revealed_at=self.revealed_at, results_digest=self.results_digest)
        return out


@dataclass(frozen=True)
class RunRow:
    id: int
    started_at: str
    ended_at: str | None
    status: str
    concurrency: int
    pid: int
    games_before: int
    games_recorded: int
