"""Checking one game log, record by record, against its re-simulation.

`LogChecker` walks a log's records in order beside the engine rebuilt from
its header (`referee.replay.load.Simulation`) and raises `LogMismatch` at
the first record that is not what the referee would have written: see
`referee/replay/verify.py` for what is checked. Every record kind is a typed
Struct of `referee.logs.records`, so a record missing a field never gets
here: the reader refuses it first.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from protocol.messages import Clock, GameOver, GameStart, Request, SeatFailure, TimeControl
from referee.errors import RefereeError
from referee.games.base import PUBLIC
from referee.games.cards import CARD_STR
from referee.logs.records import (
    ActionRecord,
    DealRecord,
    EventRecord,
    FailureRecord,
    LogResult,
    Record,
    RecvRecord,
    SendRecord,
    UnloggedRecord,
)
from referee.play.game_spec import FailurePolicy
from referee.play.seeding import derive_seed
from referee.replay.load import (
    GameLog,
    LogMismatch,
    Simulation,
    canonical,
    differs,
    ended_early_ok,
    expected_result,
    same,
    show,
)
from referee.replay.rejudge import REJUDGED, bad_reply_problem, bot_action_problem, illegal_action_problem

_REQUEST_FIELDS = frozenset({"type", *Request.__struct_fields__})
_ELIDABLE = frozenset({"view", "legal"})


def _request_fields_problem(msg: dict[str, Any], expected: frozenset[str]) -> str | None:
    """A logged request holds exactly the fields of a request, less the elided ones."""
    missing = sorted(expected - msg.keys())
    if missing:
        return f"request message lacks the field{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
    extra = sorted(msg.keys() - expected)
    if extra:
        return f"request message has unexpected field{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))}"
    return None


class LogChecker:
    """Walks one log's records against its simulation; raises LogMismatch."""

    def __init__(self, log: GameLog) -> None:
        self.log = log
        self.sim = Simulation(log)
        self.state = self.sim.state
        n = log.n_players
        self.n = n
        self.events_logged = 0
        self.deals_logged = 0
        self.cursors = [0] * n  # events each seat has been sent
        base = log.header.request_id_base
        if type(base) is not int or base < 0:
            raise LogMismatch(log.path, 1, f"bad request_id_base {show(base)} in the header")
        self.request_id = base
        self.open_request: tuple[int, int] | None = None  # (seat, id) awaiting its action
        self.replies: list[tuple[int, str]] = []  # (log line, reply line) for the open request
        self.failures: list[SeatFailure] = []
        self.forfeited: list[int] = []
        try:
            policy = msgspec.convert(log.header.failure_policy, type=FailurePolicy)
        except msgspec.ValidationError as exc:
            raise LogMismatch(log.path, 1, f"bad failure_policy in the header: {exc}") from None
        self.forfeit_mode = policy.mode == "forfeit"
        self.started: set[int] = set()
        self.outcome: tuple[int | None, list[int], list[int], str] | None = None
        self.line = 1

    def fail(self, what: str) -> LogMismatch:
        return LogMismatch(self.log.path, self.line, what)

    # ------------------------------------------------------------ walk

    def run(self) -> int:
        h = self.log.header
        if (
            h.match_seed is not None
            and h.deal_set is not None
            and h.seed != derive_seed(h.match_seed, "deal-set", h.deal_set)
        ):
            raise self.fail(
                f"the game seed {h.seed} is not derived from match_seed {h.match_seed} and deal_set {h.deal_set} "
                f"(expected {derive_seed(h.match_seed, 'deal-set', h.deal_set)})"
            )
        for line, rec in self.log.records:
            self.line = line
            kind = rec.__struct_config__.tag
            try:
                self._check(rec)
            except LogMismatch:
                raise
            except RefereeError as exc:
                raise self.fail(f"{kind} record: {exc}") from None
            except Exception as exc:
                raise self.fail(f"cannot check this {kind} record ({type(exc).__name__}: {exc}): {show(rec)}") from None
        return self.sim.actions

    def _check(self, rec: Record) -> None:
        match rec:
            case DealRecord():
                self._on_deal(rec)
            case EventRecord():
                self._on_event(rec)
            case SendRecord():
                self._on_send(rec)
            case RecvRecord():
                self._on_recv(rec)
            case ActionRecord():
                self._on_action(rec)
            case FailureRecord():
                self._on_failure(rec)
            case UnloggedRecord():
                self._on_unlogged(rec)
            case LogResult():
                self._on_result(rec)

    def _seat(self, seat: int) -> int:
        if not 0 <= seat < self.n:
            raise self.fail(f"bad seat {show(seat)} (the game has seats 0-{self.n - 1})")
        return seat

    def _require_logged(self, before: str) -> None:
        """Every deal and event the engine produced so far is already in the log."""
        decks = self.state.dealt_decks()
        if self.deals_logged < len(decks):
            number = self.log.deals_before + self.deals_logged + 1
            raise self.fail(
                f"deal {number} was never logged before {before}: "
                f"expected {show(_deal_dict(number, decks[self.deals_logged]))}"
            )
        events = self.state.events
        if self.events_logged < len(events):
            aud, ev = events[self.events_logged]
            raise self.fail(
                f"event missing before {before}: expected {show({'to': aud, 'event': msgspec.to_builtins(ev)})}"
            )

    # ------------------------------------------------------------ engine records

    def _on_deal(self, rec: DealRecord) -> None:
        decks = self.state.dealt_decks()
        k = self.deals_logged
        if k >= len(decks):
            raise self.fail(f"deal record {show(rec.deal)} but the game has dealt only {len(decks)} deal(s) so far")
        expected = _deal_dict(self.log.deals_before + k + 1, decks[k])
        found = {"deal": rec.deal, "dealer": rec.dealer, "deck": rec.deck}
        if not same(expected, found):
            raise self.fail(_deal_difference(expected, found))
        self.deals_logged += 1

    def _on_event(self, rec: EventRecord) -> None:
        events = self.state.events
        k = self.events_logged
        if k >= len(events):
            raise self.fail(f"unexpected event (the game has produced no more events here): found {show(rec)}")
        aud, ev = events[k]
        found = rec.event
        if not same(ev, found):
            raise self.fail(differs("event", ev, found))
        if rec.to != aud:
            raise self.fail(f"event audience differs: expected to={aud} found to={show(rec.to)} for {show(found)}")
        self.events_logged += 1

    # ------------------------------------------------------------ messages

    def _seat_events(self, seat: int) -> list[Any]:
        events = self.state.events
        mine = [ev for aud, ev in events[self.cursors[seat] :] if aud in (PUBLIC, seat)]
        self.cursors[seat] = len(events)
        return mine

    def _on_send(self, rec: SendRecord) -> None:
        seat = self._seat(rec.seat)
        msg = rec.msg
        if not isinstance(msg, dict):
            raise self.fail(f"send record without a message object: {show(rec)}")
        kind = msg.get("type")
        h = self.log.header
        if not same(h.game_id, msg.get("game_id")):
            raise self.fail(f"{kind} message game_id differs: expected {h.game_id} found {show(msg.get('game_id'))}")
        if kind == "game_start":
            self._check_game_start(seat, msg)
        elif kind == "request":
            self._check_request(seat, msg, [] if rec.elided is UNSET else rec.elided)
        elif kind == "warning":
            self._check_warning(seat, msg)
        elif kind == "game_over":
            self._check_game_over(seat, msg)
        else:
            raise self.fail(f"unknown message type {show(kind)} sent to seat {seat}")

    def _check_game_start(self, seat: int, msg: dict[str, Any]) -> None:
        h = self.log.header
        if self.sim.actions or seat in self.started:
            raise self.fail(f"game_start to seat {seat} after the game began")
        self.started.add(seat)
        try:
            tc = msgspec.convert(h.time_control, type=TimeControl)
        except msgspec.ValidationError as exc:
            raise LogMismatch(self.log.path, 1, f"bad time_control in the header: {exc}") from None
        expected = GameStart(
            game_id=h.game_id,
            game=h.game,
            rules=self.log.rules,
            seat=seat,
            n_players=h.n_players,
            players=self.log.names,
            time_control=tc,
            seed=derive_seed(h.seed, "bot", seat),
        )
        if not same(expected, msg):
            raise self.fail(differs("game_start", expected, msg))

    def _check_request(self, seat: int, msg: dict[str, Any], elided: list[str]) -> None:
        state = self.state
        if state.is_terminal():
            raise self.fail(f"request to seat {seat} after the end of the game")
        to_act = state.current_player()
        if seat != to_act:
            raise self.fail(f"request sent to seat {seat}, but seat {to_act} is to act")
        if self.forfeit_mode and seat in self.forfeited:
            raise self.fail(f"request sent to seat {seat} after it forfeited")
        if self.sim.actions:
            self._require_logged(f"the request to seat {seat}")
        if not isinstance(elided, list) or not set(elided) <= _ELIDABLE or len(set(elided)) != len(elided):
            raise self.fail(f"'elided' must list some of view, legal: found {show(elided)}")
        problem = _request_fields_problem(msg, _REQUEST_FIELDS - set(elided))
        if problem:
            raise self.fail(problem)
        try:
            msgspec.convert(msg["clock"], type=Clock)
        except msgspec.ValidationError as exc:
            raise self.fail(f"bad clock in the request: {exc}") from None
        rid = msg.get("id")
        if not same(self.request_id + 1, rid):
            raise self.fail(f"request id differs: expected {self.request_id + 1} found {show(rid)}")
        self.request_id += 1
        expected = self._seat_events(seat)
        found = msg.get("events")
        if not same(expected, found):
            raise self.fail(_events_difference(f"events sent to seat {seat}", expected, found))
        if "view" not in elided:
            view = msgspec.to_builtins(state.view(seat))
            if not same(view, msg["view"]):
                raise self.fail(differs(f"view sent to seat {seat}", view, msg["view"]))
        if "legal" not in elided:
            legal = [msgspec.to_builtins(a) for a in state.legal_actions()]
            if not same(legal, msg["legal"]):
                raise self.fail(differs(f"legal actions sent to seat {seat}", legal, msg["legal"]))
        self.open_request = (seat, self.request_id)
        self.replies = []

    def _check_warning(self, seat: int, msg: dict[str, Any]) -> None:
        if self.open_request is None or self.open_request[0] != seat or not self.failures:
            raise self.fail(f"warning to seat {seat} but no failure of its reply to an open request")
        last = self.failures[-1]
        if last.seat != seat:
            raise self.fail(f"warning to seat {seat} but the last failure is seat {last.seat}'s")
        expected = {
            "type": "warning",
            "id": self.open_request[1],
            "game_id": self.log.header.game_id,
            "reason": last.reason,
            "message": f"{last.message}; the referee played the first legal action",
        }
        if not same(expected, msg):
            raise self.fail(differs(f"warning to seat {seat}", expected, msg))

    def _check_game_over(self, seat: int, msg: dict[str, Any]) -> None:
        self._require_logged("game_over")
        expected = self._seat_events(seat)
        found = msg.get("events")
        if not same(expected, found):
            raise self.fail(_events_difference(f"events in game_over to seat {seat}", expected, found))
        winner, scores, placements, reason = self._outcome()
        # another seat's failure message may quote its hand: a seat sees only the reason
        seen = [
            f if f.seat == seat else SeatFailure(seat=f.seat, reason=f.reason, message=f.reason) for f in self.failures
        ]
        want = GameOver(
            game_id=self.log.header.game_id,
            events=msg["events"],
            winner=winner,
            scores=scores,
            placements=placements,
            reason=reason,
            failures=seen,
        )
        if not same(want, msg):
            raise self.fail(differs(f"game_over to seat {seat}", want, msg))

    def _on_recv(self, rec: RecvRecord) -> None:
        seat = self._seat(rec.seat)
        if self.open_request is None or self.open_request[0] != seat:
            raise self.fail(f"reply from seat {seat} but no request to it is open")
        self.replies.append((self.line, rec.line))

    # ------------------------------------------------------------ actions

    def _on_action(self, rec: ActionRecord) -> None:
        state = self.state
        if self.sim.actions:
            self._require_logged("this action")
        seat = self._seat(rec.seat)
        if state.is_terminal():
            raise self.fail("action after the end of the game")
        to_act = state.current_player()
        if seat != to_act:
            raise self.fail(f"action by seat {seat}, but seat {to_act} is to act")
        if self.n == 2 and self.forfeit_mode and self.forfeited:
            raise self.fail(f"action after seat {self.forfeited[0]} forfeited the 2-seat game")
        action = self.sim.decode_action(self.line, rec.action)
        source, rid = rec.source, rec.id
        if source == "bot":
            self._check_bot_action(seat, rid, action)
        elif source == "default":
            legal = state.legal_actions()
            if not legal or legal[0] != action:
                first = show(legal[0]) if legal else "nothing"
                raise self.fail(
                    f"the referee's default action must be the first legal one: expected {first} found {show(action)}"
                )
            asked = self.open_request[1] if self.open_request is not None and self.open_request[0] == seat else None
            if not same(asked, rid):
                raise self.fail(f"default action id differs: expected {show(asked)} found {show(rid)}")
        else:
            raise self.fail(f"action source must be 'bot' or 'default', found {show(source)}")
        self.sim.apply_action(self.line, seat, action)
        self.open_request = None
        self.replies = []

    def _check_bot_action(self, seat: int, rid: Any, action: Any) -> None:
        if self.open_request is None or self.open_request[0] != seat or not same(self.open_request[1], rid):
            raise self.fail(
                f"bot action for request {show(rid)} from seat {seat}, but the open request is "
                f"{'none' if self.open_request is None else f'{self.open_request[1]} to seat {self.open_request[0]}'}"
            )
        if not self.replies:
            raise self.fail(f"bot action from seat {seat} without a reply line from it")
        where, line = self.replies[-1]
        problem = bot_action_problem(where, line, rid, action, self.log.game.action_type)
        if problem:
            raise self.fail(problem)

    # ------------------------------------------------------------ failures and result

    def _on_failure(self, rec: FailureRecord) -> None:
        seat = self._seat(rec.seat)
        reason, message = rec.reason, rec.message
        if reason == "illegal_action":
            self._check_illegal(seat, message)
        elif reason in REJUDGED:
            self._check_bad_reply(seat, reason, message)
        self.failures.append(SeatFailure(seat=seat, reason=reason, message=message))
        if self.forfeit_mode and seat not in self.forfeited:
            self.forfeited.append(seat)

    def _check_illegal(self, seat: int, message: str) -> None:
        """An `illegal_action` failure: the seat's last reply is re-judged, the message re-made."""
        if self.open_request is None or self.open_request[0] != seat or not self.replies:
            raise self.fail(f"illegal_action failure of seat {seat} without a reply from it to an open request")
        where, line = self.replies[-1]
        problem = illegal_action_problem(self.state, where, line, self.open_request[1], message)
        if problem:
            raise self.fail(problem)

    def _check_bad_reply(self, seat: int, reason: str, message: str) -> None:
        """A reply refused as not JSON or not the protocol: decode its logged line again."""
        if self.open_request is None or self.open_request[0] != seat or not self.replies:
            raise self.fail(f"{reason} failure of seat {seat} without a reply from it to an open request")
        where, line = self.replies[-1]
        problem = bad_reply_problem(where, line, reason, message)
        if problem:
            raise self.fail(problem)

    def _on_unlogged(self, rec: UnloggedRecord) -> None:
        """Unsolicited lines past the log budget were counted, not logged."""
        self._seat(rec.seat)
        for key, count in (("lines", rec.lines), ("bytes", rec.bytes)):
            if count < 1:
                raise self.fail(f"unlogged record needs a positive count of {key}: {show(rec)}")

    def _outcome(self) -> tuple[int | None, list[int], list[int], str]:
        """The runner fixes the outcome once, before the first game_over; a seat that
        fails while game_over is being sent is listed as forfeited but keeps its place."""
        if self.outcome is None:
            failed = {f.seat for f in self.failures}
            final = self.log.result.forfeited if self.log.result is not None else self.forfeited
            self.outcome = expected_result(self.state, [s for s in final if s in failed], self.n)
        return self.outcome

    def _on_result(self, rec: LogResult) -> None:
        self._require_logged("the result")
        res = self.log.result
        assert res is not None  # load_log requires it
        seats_failed = [f.seat for f in self.failures]
        if self.forfeit_mode and res.forfeited != self.forfeited:
            raise self.fail(
                f"forfeited seats differ: expected {self.forfeited} found {res.forfeited} "
                f"(every failure forfeits under the 'forfeit' policy)"
            )
        for s in res.forfeited:
            if s not in seats_failed or res.forfeited.count(s) > 1:
                raise self.fail(f"seat {s} is listed as forfeited without a failure record")
        if not ended_early_ok(self.state, self.n, res.forfeited):
            raise self.fail(
                f"the result comes after {self.sim.actions} actions but the game is not over "
                f"(seat {self.state.current_player()} is to act)"
            )
        winner, scores, placements, reason = self._outcome()
        want = {
            "winner": winner,
            "scores": scores,
            "placements": placements,
            "reason": reason,
            "failures": [msgspec.to_builtins(f) for f in self.failures],
            "decisions": self.sim.actions,
        }
        got = {
            "winner": rec.winner,
            "scores": rec.scores,
            "placements": rec.placements,
            "reason": rec.reason,
            "failures": [msgspec.to_builtins(f) for f in rec.failures],
            "decisions": rec.decisions,
        }
        if not same(want, got):
            raise self.fail(differs("result", want, got))


def _deal_dict(number: int, deal: Any) -> dict[str, Any]:
    return {"deal": number, "dealer": deal.dealer, "deck": [CARD_STR[c] for c in deal.deck]}


def _deal_difference(expected: dict[str, Any], found: dict[str, Any]) -> str:
    k = expected["deal"]
    if found.get("deal") != k:
        return f"deal number differs: expected {k} found {show(found.get('deal'))}"
    if found.get("dealer") != expected["dealer"]:
        return f"deal {k} dealer differs: expected {expected['dealer']} found {show(found.get('dealer'))}"
    deck, got = expected["deck"], found.get("deck")
    if isinstance(got, list):
        for i, (a, b) in enumerate(zip(deck, got)):
            if a != b:
                return f"deal {k} deck differs at card {i + 1}: expected {a} found {show(b)}"
        return f"deal {k} deck differs: expected {len(deck)} cards found {len(got)}"
    return f"deal {k} deck differs: expected {show(deck)} found {show(got)}"


def _events_difference(what: str, expected: list[Any], found: Any) -> str:
    if not isinstance(found, list):
        return f"{what} differ: expected a list of {len(expected)} found {show(found)}"
    for i, (a, b) in enumerate(zip(expected, found)):
        if canonical(a) != canonical(b):
            return differs(f"{what} (event {i + 1})", a, b)
    if len(found) > len(expected):
        return f"{what}: unexpected extra event {show(found[len(expected)])}"
    return f"{what}: event missing: expected {show(expected[len(found)])}"
