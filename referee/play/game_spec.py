"""What one game is and what it leaves: the spec a `GameRunner` plays (the
rules, seed, clocks, failure policy, a start position), the record it
returns, and the request message it sends. Kept apart from the runner so
that the layers that only count games (store, tournament, output) import
no game loop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from protocol.messages import Clock, Request, SeatFailure, TimeControl
from referee.games.base import Deal, GameDef


class FailurePolicy(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What follows a bot failure; the same for every bot, written in each log.

    `forfeit`: the offending seat loses the game (2 seats: the game ends and
    the other seat wins; 3-4 seats: it is ranked last and the referee plays
    the first legal action for it for the rest of the game).
    `substitute`: the referee plays the first legal action instead and counts
    a strike; a seat with more than `max_strikes` strikes in one game forfeits.
    A bot that crashed or broke the line stream forfeits under either policy.
    """

    mode: Literal["forfeit", "substitute"] = "forfeit"
    max_strikes: int = 3


@dataclass(frozen=True)
class StartFailure:
    """Why a seat's bot is not at the table when its game begins: it could not
    be started, or did not answer `hello` as it must. The seat forfeits."""

    message: str
    detail: str = ""
    """What the bot wrote (its stderr tail), if anything."""
    reason: str = "startup_failure"


@dataclass(frozen=True)
class GameSpec:
    """Everything that determines one game (the bots aside)."""

    game: GameDef
    rules: Any
    n_players: int
    seed: int
    game_id: int
    time_control: TimeControl
    policy: FailurePolicy
    deals: tuple[Deal, ...] = ()
    match_seed: int | None = None
    deal_set: int | None = None
    seat_time_controls: tuple[TimeControl | None, ...] = ()
    """Per-seat clocks that differ from `time_control` (a person with no limit);
    None or a missing entry means the game's time control."""
    request_id_base: int = 0
    """Request ids of this game are base + 1, base + 2, ...: a match passes the
    ids issued so far, so a bot process never sees an id twice and a late reply
    from an earlier game is recognisably stale."""
    isolation: dict[str, Any] | None = None  # the sandbox in force, for the log header
    start: str | None = None
    """A position to begin from (canonical text, see `play/start.py`); its seed
    is replaced by `seed`, so the deals after it follow the game's own shuffles."""
    worker: dict[str, Any] | None = None  # where the game was played and that machine's load, for the log header

    def seat_time_control(self, seat: int) -> TimeControl:
        own = self.seat_time_controls[seat] if seat < len(self.seat_time_controls) else None
        return self.time_control if own is None else own


@dataclass
class GameRecord:
    """A finished game as the match and tournament layers count it."""

    game_id: int
    seed: int
    deal_set: int | None
    seat_names: list[str]
    winner: int | None
    scores: list[int]
    placements: list[int]
    reason: str
    failures: list[SeatFailure]
    forfeited: list[int]
    deals: int
    decisions: int
    log_path: str | None
    overhead_us: float = 0.0
    think_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float | None] = field(default_factory=list)  # per seat; None: not measured (a person)
    asked: list[int] = field(default_factory=list)  # per seat: the requests it answered or let time out
    requests: int = 0  # request ids issued: the next game's ids start after them
    evidence: list[str] = field(default_factory=list)  # per failure: what the bot wrote (line, stderr tail)


def make_request(rid: int, game_id: int, events: list[Any], view: Any, legal: Sequence[Any], clock: Clock) -> Request:
    """A request message. An engine may hand out its legal list already
    encoded (Chicago's 32 exchanges): building and encoding 32 Structs per
    decision is slow."""
    raw_json = getattr(legal, "raw_json", None)
    return Request(
        id=rid,
        game_id=game_id,
        events=events,
        view=view,
        legal=msgspec.Raw(raw_json()) if raw_json is not None else list(legal),  # type: ignore[arg-type]
        clock=clock,
    )
