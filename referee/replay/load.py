"""Re-simulating a game log through its engine, one frame per action.

A log (see `referee.logs.gamelog`) holds everything that determines a game: the
header names the game, its rules, seed, seat count and explicit deals; the
`action` records say what each seat did. `load_log` reads and checks the
file; `Simulation` rebuilds the engine state from the header and applies the
logged actions with the engine's own legality checks; `frames` yields what a
viewer needs to step through the game. Nothing here knows which game is being
played: it talks to engines only through `GameDef` and `GameState`.

Never "repairs": anything that does not re-simulate raises `LogMismatch`
naming the file and line; a file that is not a readable log raises
`CorruptLog`. Both are `RefereeError`s (one line, no traceback in the CLI).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from protocol.messages import SeatFailure
from referee.errors import CorruptLog, RefereeError
from referee.games import get_game
from referee.games.base import Deal, GameDef, GameState
from referee.logs.gamelog import read_log
from referee.logs.records import ActionRecord, DealRecord, FailureRecord, LogHeader, LogResult, Record
from referee.play.deals import parse_deals
from referee.play.outcome import final_outcome
from referee.play.start import check_logged_start, deals_before, initial_state

_canon_encoder = msgspec.json.Encoder(order="deterministic")
_plain_encoder = msgspec.json.Encoder()


class LogMismatch(CorruptLog):
    """A readable log that does not agree with its re-simulation."""

    def __init__(self, path: Path | str, line: int, what: str) -> None:
        super().__init__(f"{path}:{line}: {what}")
        self.path = str(path)
        self.line = line
        self.what = what


# ------------------------------------------------------------------ encoding


def canonical(value: Any) -> bytes:
    """JSON with sorted keys: equal bytes iff equal on the wire (1 != true, 1 != 1.0)."""
    return _canon_encoder.encode(msgspec.to_builtins(value))


def same(expected: Any, found: Any) -> bool:
    """Equal as JSON (key order aside). Structs and builtins compare alike."""
    if _plain_encoder.encode(expected) == _plain_encoder.encode(found):
        return True  # the usual case: the log was written in field order
    return canonical(expected) == canonical(found)


def show(value: Any, limit: int = 400) -> str:
    """Compact JSON for messages (a struct in field order, a record as logged)."""
    try:
        text = _plain_encoder.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def first_difference(expected: Any, found: Any, path: str = "") -> str:
    """Where two JSON values first differ, as `.key[3].field` ('' = at the top)."""
    if isinstance(expected, dict) and isinstance(found, dict):
        for key in list(expected) + [k for k in found if k not in expected]:
            if key not in found or key not in expected or canonical(expected[key]) != canonical(found[key]):
                if key in found and key in expected:
                    return first_difference(expected[key], found[key], f"{path}.{key}")
                return f"{path}.{key}"
        return path
    if isinstance(expected, list) and isinstance(found, list):
        for i, (a, b) in enumerate(zip(expected, found)):
            if canonical(a) != canonical(b):
                return first_difference(a, b, f"{path}[{i}]")
        if len(expected) != len(found):
            return f"{path} (length {len(expected)} vs {len(found)})"
    return path


def differs(what: str, expected: Any, found: Any) -> str:
    """`event differs at .total: expected {...} found {...}`."""
    e = msgspec.to_builtins(expected) if isinstance(expected, msgspec.Struct) else expected
    where = first_difference(e, found)
    at = f" at {where.lstrip('.')}" if where else ""
    return f"{what} differs{at}: expected {show(e)} found {show(found)}"


# ------------------------------------------------------------------ the log


@dataclass(frozen=True)
class GameLog:
    """A log file read and checked: header, game, rules, explicit deals, records."""

    path: Path
    header: LogHeader
    game: GameDef
    rules: Any
    deals: tuple[Deal, ...]
    records: list[tuple[int, Record]]
    """(line number, record) for every line after the header, the result included."""
    result: LogResult | None
    result_line: int

    @property
    def n_players(self) -> int:
        return self.header.n_players

    @property
    def names(self) -> list[str]:
        by_seat = {p.seat: p.name for p in self.header.players}
        return [by_seat.get(s, f"seat {s}") for s in range(self.n_players)]

    @property
    def deal_count(self) -> int:
        return sum(1 for _, rec in self.records if isinstance(rec, DealRecord))

    @property
    def start(self) -> str | None:
        """The position the game began from (`match --start`), or None."""
        start = self.header.start
        return None if start is msgspec.UNSET else start

    @functools.cached_property
    def deals_before(self) -> int:
        """Deals before the first `deal` record: a start position's deal and those before it."""
        return deals_before(self.start)


def load_log(path: Path | str, *, require_result: bool = True, cut_ok: bool = False) -> GameLog:
    """Read a game log and decode its header into the game's own types.

    Raises CorruptLog (naming file and line) for anything that is not a
    complete chicago-referee game log: unreadable, foreign, garbled, an
    unknown game, rules or deals the engine rejects, or (with
    `require_result`) a log that stops before its `result` record. With
    `cut_ok` an unfinished last line is dropped (see `read_log`).
    """
    path = Path(path)
    if path.is_dir():
        raise CorruptLog(f"{path}: is a directory, not a game log")
    header, records = read_log(path, cut_ok=cut_ok)
    try:
        game = get_game(header.game)
    except RefereeError as exc:
        raise CorruptLog(f"{path}:1: {exc}") from None
    try:
        rules = msgspec.convert(header.rules, type=game.rules_type)
    except (msgspec.ValidationError, ValueError) as exc:
        raise CorruptLog(f"{path}:1: the header's rules are not valid {game.name} rules: {exc}") from None
    if header.n_players not in game.seat_counts:
        raise CorruptLog(f"{path}:1: {game.title} is not played by {header.n_players} seats")
    try:
        deals = parse_deals(header.deals, game, where="header deals") if header.deals else ()
    except RefereeError as exc:
        raise CorruptLog(f"{path}:1: {exc}") from None
    if header.start is not msgspec.UNSET:
        try:
            check_logged_start(header.start, game, header.n_players, header.seed)
        except RefereeError as exc:
            raise LogMismatch(path, 1, str(exc)) from None
    result: LogResult | None = None
    result_line = 0
    for i, (no, rec) in enumerate(records):
        if not isinstance(rec, LogResult):
            continue
        if i != len(records) - 1:
            raise CorruptLog(f"{path}:{no}: the result record must be the last record")
        result, result_line = rec, no
    if result is None and require_result:
        last = records[-1][0] if records else 1
        raise CorruptLog(f"{path}:{last}: truncated: the log ends without a result record")
    return GameLog(
        path=path,
        header=header,
        game=game,
        rules=rules,
        deals=deals,
        records=records,
        result=result,
        result_line=result_line,
    )


# ------------------------------------------------------------------ simulation


class Simulation:
    """The engine rebuilt from a log header; applies logged actions, checking each."""

    def __init__(self, log: GameLog) -> None:
        self.log = log
        h = log.header
        try:
            self.state: GameState = initial_state(log.game, log.rules, h.n_players, h.seed, log.deals, log.start)
        except Exception as exc:
            raise LogMismatch(log.path, 1, f"the header does not start a game: {exc}") from None
        self.actions = 0
        self._action_decoder = msgspec.json.Decoder(log.game.action_type)

    def decode_action(self, line: int, raw: Any) -> Any:
        """A logged action (JSON value) as the game's action type; LogMismatch if it is none."""
        try:
            # encode + typed decode is several times faster than msgspec.convert
            return self._action_decoder.decode(_plain_encoder.encode(raw))
        except (msgspec.ValidationError, msgspec.EncodeError, TypeError) as exc:
            raise LogMismatch(self.log.path, line, f"not a {self.log.game.name} action {show(raw)}: {exc}") from None

    def apply(self, line: int, record: ActionRecord) -> tuple[int, Any]:
        """Apply one `action` record; returns (seat, action). LogMismatch if illegal."""
        action = self.decode_action(line, record.action)
        return self.apply_action(line, record.seat, action), action

    def apply_action(self, line: int, seat: Any, action: Any) -> int:
        """Apply a decoded action by `seat`; returns the seat. LogMismatch if illegal."""
        state = self.state
        if state.is_terminal():
            raise LogMismatch(self.log.path, line, "action after the end of the game")
        to_act = state.current_player()
        if seat != to_act:
            raise LogMismatch(self.log.path, line, f"action by seat {seat}, but seat {to_act} is to act")
        try:
            state.apply_action(action)
        except RefereeError as exc:
            raise LogMismatch(self.log.path, line, f"illegal action {show(action)} by seat {seat}: {exc}") from None
        except Exception as exc:
            raise LogMismatch(
                self.log.path,
                line,
                f"the engine failed on action {show(action)} by seat {seat} ({type(exc).__name__}: {exc})",
            ) from None
        self.actions += 1
        return to_act


def expected_result(
    state: GameState, forfeited: Sequence[int], n_players: int
) -> tuple[int | None, list[int], list[int], str]:
    """(winner, scores, placements, reason) exactly as the runner decides them."""
    return final_outcome(state, forfeited, n_players)


def ended_early_ok(state: GameState, n_players: int, forfeited: Sequence[int]) -> bool:
    """A log may stop before the engine's end only when a 2-seat game was forfeited."""
    return state.is_terminal() or (n_players == 2 and bool(forfeited))


# ------------------------------------------------------------------ frames


@dataclass
class Frame:
    """One step of a replay.

    `kind` is "start" (the events before any action: first-dealer cut, the
    first deal), "action" (one applied action and the events it caused) or
    "end" (after the last action: the result, any trailing failures).
    `state` is the live engine state: read it before pulling the next frame.
    """

    kind: str
    index: int
    state: GameState
    line: int | None = None
    seat: int | None = None
    action: Any = None
    source: str | None = None
    events: list[tuple[int, msgspec.Struct]] = field(default_factory=list)
    failures: list[SeatFailure] = field(default_factory=list)
    result: LogResult | None = None
    evidence: list[str] = field(default_factory=list)
    """Per failure, what the log kept of it: the offending line or the bot's stderr tail."""

    @property
    def deal(self) -> int:
        """Deals dealt so far (the deal in progress)."""
        return len(self.state.dealt_decks())


def _failure(log: GameLog, line: int, rec: FailureRecord) -> SeatFailure:
    try:
        return msgspec.convert({"seat": rec.seat, "reason": rec.reason, "message": rec.message}, type=SeatFailure)
    except msgspec.ValidationError as exc:
        raise LogMismatch(log.path, line, f"bad failure record: {exc}") from None


def frames(log: GameLog) -> Iterator[Frame]:
    """Re-simulate `log` and yield a start frame, one frame per action, an end frame.

    Raises LogMismatch on an illegal or undecodable action, or when the log
    ends before the game does (unless a 2-seat game ended by forfeit).
    """
    sim = Simulation(log)
    state = sim.state
    seen = len(state.events)
    yield Frame(kind="start", index=0, state=state, events=list(state.events))
    failures: list[SeatFailure] = []
    evidence: list[str] = []
    for line, rec in log.records:
        match rec:
            case FailureRecord():
                failures.append(_failure(log, line, rec))
                evidence.append(rec.detail if isinstance(rec.detail, str) else "")
            case ActionRecord():
                seat, action = sim.apply(line, rec)
                new = state.events[seen:]
                seen = len(state.events)
                yield Frame(
                    kind="action",
                    index=sim.actions,
                    state=state,
                    line=line,
                    seat=seat,
                    action=action,
                    source=rec.source,
                    events=list(new),
                    failures=failures,
                    evidence=evidence,
                )
                failures, evidence = [], []
    result = log.result
    if result is not None and not ended_early_ok(state, log.n_players, result.forfeited):
        raise LogMismatch(
            log.path,
            log.result_line,
            f"the log ends after {sim.actions} actions but the game is not over "
            f"(seat {state.current_player()} is to act)",
        )
    yield Frame(
        kind="end",
        index=sim.actions + 1,
        state=state,
        line=log.result_line or None,
        failures=failures,
        result=result,
        evidence=evidence,
    )
