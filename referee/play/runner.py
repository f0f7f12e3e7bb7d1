"""One game between bot processes: requests, clocks, failures, log.

The engine says whose turn it is; that seat gets a request carrying its view,
the legal actions and its clock; the reply is awaited under the game's cancel
scope, whose deadline enforces the seat's limit (see "Deadlines" below), read
(`play/in_flight.py`) and checked (JSON, schema, request id, legality) before
it is applied. Every failure becomes a recorded result with a reason code;
the failure policy decides what follows. Nothing here knows which game is
being played.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import Any

import msgspec
import trio

from protocol.messages import (
    GameOver,
    GameStart,
    SeatFailure,
    Warning,
)
from referee.errors import BotCrashed, BotError, RefereeError
from referee.games.base import PUBLIC, GameState
from referee.logs.gamelog import GameLogWriter, cut
from referee.logs.records import (
    LogResult,
    PlayerInfo,
)
from referee.play.game_spec import GameRecord, GameSpec, StartFailure, make_request
from referee.play.in_flight import InFlight, read_reply, take_unsolicited
from referee.play.outcome import final_outcome
from referee.play.recorder import GameRecorder
from referee.play.replies import MAX_UNSOLICITED, MAX_UNSOLICITED_BYTES, LogBudget
from referee.play.seeding import derive_seed
from referee.play.start import initial_state
from referee.play.watch import GameWatch
from referee.seats.clock import DecisionMeter, SeatClock
from referee.seats.seat import Seat

_encoder = msgspec.json.Encoder()

_FATAL_REASONS = frozenset(
    {"line_too_long", "unsolicited_flood", "resigned"}
)  # the line stream is broken, or a person gave up


@dataclass
class _Seat:
    bot: Seat | None
    clock: SeatClock
    cursor: int = 0
    strikes: int = 0
    out: bool = False  # forfeited or unable to play: the referee acts for it
    log_budget: LogBudget = field(default_factory=LogBudget)  # its unsolicited lines in the log
    meter: DecisionMeter = field(default_factory=lambda: DecisionMeter(None))  # CPU time, freeze_idle


class GameRunner:
    def __init__(
        self,
        spec: GameSpec,
        bots: list[Seat | None],
        names: list[str],
        log: GameLogWriter,
        watch: GameWatch | None = None,
    ) -> None:
        self.spec = spec
        self.names = names
        self.log = GameRecorder(log, spec, trio.lowlevel.current_clock().current_time)
        self.watch = watch  # an onlooker (the live stream), told of every start, action, failure, end
        self.state: GameState = initial_state(spec.game, spec.rules, spec.n_players, spec.seed, spec.deals, spec.start)
        self.seats = [
            _Seat(bot=b, clock=SeatClock(spec.seat_time_control(i)), meter=DecisionMeter(b)) for i, b in enumerate(bots)
        ]
        self.failures: list[SeatFailure] = []
        self.evidence: list[str] = []  # per failure: the offending line and the bot's stderr tail
        self.forfeited: list[int] = []
        self._now = trio.lowlevel.current_clock().current_time  # trio.current_time, one lookup less
        self.t0 = self._now()
        self.request_id = spec.request_id_base
        self.decisions = 0
        self.overhead = 0.0
        self.think = [0.0] * spec.n_players
        self.ended_early = False
        self._scope: trio.CancelScope | None = None  # the game's; see "Deadlines" below
        self._scope_deadline = math.inf
        self._pending: InFlight | None = None
        self._answered: InFlight | None = None  # applied; its CPU time, log and watcher wait (`_catch_up`)
        self._unlogged_request: tuple[int, int, list[Any], Any] | None = None
        self._unasked = 0  # decisions of seats that are out, played by the referee

    def _fail(self, seat: int, reason: str, message: str, detail: str = "") -> None:
        self._catch_up()
        self.failures.append(SeatFailure(seat=seat, reason=reason, message=message))
        bot = self.seats[seat].bot
        stderr = bot.stderr_text(600).strip() if bot is not None else ""
        if stderr and (stderr in detail or detail.strip() in stderr):
            self.evidence.append(f"[stderr] {stderr}")  # the detail is the stderr tail itself (a crash)
        else:
            self.evidence.append(f"{detail}\n[stderr] {stderr}".strip() if stderr else detail)
        self.log.failure(seat, reason, message, detail)
        if self.watch is not None:
            self.watch.failed(self, seat, reason, message)

    # ------------------------------------------------------------ messaging

    def _new_events(self, seat: int) -> list[Any]:
        """Events this seat may see that it has not been sent yet."""
        s = self.seats[seat]
        events = self.state.events
        mine = [ev for aud, ev in events[s.cursor :] if aud in (PUBLIC, seat)]
        s.cursor = len(events)
        return mine

    async def _send_safely(self, seat: int, msg: msgspec.Struct) -> None:
        """Send a message that needs no reply to a bot that may be dead or
        stuck; a failure is recorded once. Shielded: a deadline of the game's
        scope must not cut a decision in half."""
        self._catch_up()
        s = self.seats[seat]
        bot = s.bot
        if bot is None or bot.dead:
            return
        data = _encoder.encode(msg)
        self.log.sent(seat, data)
        if bot.send_nowait(data + b"\n"):
            return
        try:
            with trio.CancelScope(shield=True), trio.fail_after(max(1.0, self.spec.time_control.decision_ms / 1000)):
                await bot.flush()
        except (BotError, trio.TooSlowError) as exc:
            bot.dead = True
            if not s.out:
                reason = "timeout" if isinstance(exc, trio.TooSlowError) else exc.reason
                self._fail(seat, reason, f"could not write to bot: {exc or 'blocked'}", bot.stderr_text())
                self._forfeit(seat)

    # ------------------------------------------------------------ policy

    def _forfeit(self, seat: int) -> None:
        s = self.seats[seat]
        if seat not in self.forfeited:
            self.forfeited.append(seat)
        s.out = True
        if self.spec.n_players == 2:
            self.ended_early = True

    def _on_failure(self, seat: int, reason: str, message: str, detail: str, fatal: bool) -> None:
        bot = self.seats[seat].bot
        breach = bot.limit_breach() if bot is not None and reason in ("crash", "timeout") else None
        if breach is not None:  # a sandboxed bot that died or stalled at one of its limits: say which
            reason, message = breach[0], f"{breach[1]} ({message})"
        self._fail(seat, reason, message, detail)
        s = self.seats[seat]
        if fatal or self.spec.policy.mode == "forfeit":
            self._forfeit(seat)
            return
        s.strikes += 1
        if s.strikes > self.spec.policy.max_strikes:
            self._fail(seat, "strike_limit", f"{s.strikes} strikes exceed the limit of {self.spec.policy.max_strikes}")
            self._forfeit(seat)

    # ------------------------------------------------------------ one decision
    #
    # Deadlines: the game runs in one cancel scope whose deadline is never
    # later than the deadline of the request in flight. Requests are sent in
    # order and share a limit, so the scope's deadline mostly comes early; the
    # request in flight then simply goes on waiting in a new scope (`run`).
    # Only a deadline that has really passed is a timeout. This costs nothing
    # per decision, where a `fail_after` per request (entering and leaving a
    # cancel scope) cost about as much as all the referee's other work on it.

    def _request(self, seat: int, s: _Seat, legal: Sequence[Any]) -> InFlight | None:
        """The request for this decision, ready to send; None if the bank is empty."""
        self.request_id += 1
        rid = self.request_id
        clock = s.clock
        limit = clock.limit_s()
        if limit <= 0:
            self._on_failure(seat, "timeout", "the time bank is empty", "", fatal=False)
            return None
        events = self._new_events(seat)
        req = make_request(rid, self.spec.game_id, events, self.state.view(seat), legal, clock.snapshot())
        data = bytearray()
        _encoder.encode_into(req, data)
        data += b"\n"  # one buffer, not a copy of the request with a newline
        # The view and legal list are a pure function of the game so far and are
        # re-created by `verify`; logging them would make logs ten times larger.
        if self.log.enabled:
            self._unlogged_request = (seat, rid, events, req.clock)
        answered = self._answered
        if answered is not None and answered.seat == seat:
            self._catch_up()  # its last CPU time is read before this decision's starts
        cpu = s.meter.start()  # thawed before its clock starts
        now = self._now()
        p = InFlight(seat, rid, legal, limit, now, now + limit, data, cpu_sent=cpu)
        if p.deadline < self._scope_deadline:  # a shorter limit than before (a bank running low)
            self._set_deadline(p.deadline)
        self._pending = p
        return p

    async def _decide(self, p: InFlight) -> None:
        """Send the request, await the reply, apply the action (or the default).
        Resumable: after an early deadline `run` calls it again for the same request."""
        seat = p.seat
        s = self.seats[seat]
        bot = s.bot
        assert bot is not None
        try:
            if not p.sent:
                if p.sending:
                    await bot.flush()  # the rest of a request an early deadline interrupted
                else:
                    p.sending = True
                    early = bot.ready_lines(MAX_UNSOLICITED_BYTES, MAX_UNSOLICITED + 1)  # written before the request
                    if early:
                        self._catch_up()  # logged in their place: after the last decision and this request
                        for line in early:
                            take_unsolicited(p, line, self.log, s.log_budget)
                    await bot.send(p.data)
                p.sent = True
                self._catch_up()  # the last decision's bookkeeping, while this bot thinks
            await read_reply(bot, p, self.log, s.log_budget)
        except BotError as exc:
            p.outcome = exc
        self._pending = None
        started = perf_counter()
        p.elapsed = elapsed = self._now() - p.t_sent
        s.clock.charge(elapsed)
        self.think[seat] += elapsed
        s.meter.idle()  # frozen now; its CPU time is read with the rest (`_catch_up`)
        outcome = p.outcome
        if isinstance(outcome, BotError):
            cpu = s.meter.used_since(p.cpu_sent)
            self._bot_error(seat, bot, outcome)
        else:
            action = outcome.action
            try:
                self.state.apply_action(action)  # checks first: an illegal action changes nothing
            except RefereeError as exc:
                cpu = s.meter.used_since(p.cpu_sent)
                self._log_reply(p)
                text = _encoder.encode(action).decode()
                self._on_failure(seat, "illegal_action", f"illegal action {text}: {exc}", "", fatal=False)
            else:
                self.decisions += 1
                self._answered = p
                self.overhead += perf_counter() - started
                return
        await self._play_default(seat, p.legal, p.rid, elapsed, cpu)

    def _catch_up(self) -> None:
        """What an applied decision leaves until the next request is out: the
        bot's CPU time (read once it is frozen or waiting), its log records and
        the watcher's call. The bots wait for none of it. Everything else that
        logs, watches or reads a CPU time calls this first, so the log's order
        is the same as if it had been done at once."""
        p = self._answered
        if p is not None:
            self._answered = None
            cpu = self.seats[p.seat].meter.used_since(p.cpu_sent)
            action = p.outcome.action
            self._log_reply(p)
            self.log.action(p.seat, p.rid, "bot", action, p.elapsed, cpu, self.state)
            if self.watch is not None:
                self.watch.acted(self, p.seat, "bot", action, p.elapsed)
        request = self._unlogged_request
        if request is not None:
            self._unlogged_request = None
            self.log.request(*request)

    def _log_reply(self, p: InFlight) -> None:
        if p.reply is not None:
            self.log.received(p.seat, p.reply, at=p.reply_t)
            p.reply = None

    def _bot_error(self, seat: int, bot: Seat, exc: BotError) -> None:
        fatal = isinstance(exc, BotCrashed) or exc.reason in _FATAL_REASONS
        if fatal:
            bot.dead = True
        note = bot.exit_note() if isinstance(exc, BotCrashed) else ""
        detail = exc.detail or bot.stderr_text()
        self._on_failure(seat, exc.reason, f"{exc}{note}", detail, fatal=fatal)

    async def _timed_out(self, p: InFlight) -> None:
        """Settle a request whose deadline has passed, then play the default."""
        self._pending = None
        self._catch_up()
        s = self.seats[p.seat]
        bot = s.bot
        assert bot is not None
        elapsed = self._now() - p.t_sent
        s.clock.charge(elapsed)
        self.think[p.seat] += elapsed
        cpu = s.meter.stop(p.cpu_sent)
        if p.stale is None and p.sent:
            bot.late_id = p.rid  # its answer may still come, in this game or the next: stale, not wrong
        if p.stale is not None:
            self._on_failure(
                p.seat,
                "stale_id",
                f"only answered with a stale request id (waiting for {p.rid})",
                cut(p.stale, 500),
                fatal=not p.sent,
            )
        else:
            why = f"no reply to request {p.rid} within {p.limit * 1000:.0f} ms"
            self._on_failure(p.seat, "timeout", why, bot.stderr_text(), fatal=not p.sent)
        if not p.sent:
            bot.dead = True  # its stdin is full and part of a request may be in it
        await self._play_default(p.seat, p.legal, p.rid, elapsed, cpu)

    def _set_deadline(self, deadline: float) -> None:
        self._scope_deadline = deadline
        if self._scope is not None:
            self._scope.deadline = deadline

    def _first_deadline(self) -> float:
        """The deadline for a new scope: no later than any next request's."""
        limits = [limit for limit in (s.clock.limit_s() for s in self.seats) if limit > 0]
        return self._now() + min(limits, default=1.0)

    # ------------------------------------------------------------ the game

    async def run(self, players: list[PlayerInfo], start_failures: dict[int, StartFailure]) -> GameRecord:
        sp = self.spec
        self.log.header(players)
        if self.watch is not None:
            self.watch.started(self)
        for seat, failure in start_failures.items():
            self._fail(seat, failure.reason, failure.message, failure.detail)
            self._forfeit(seat)
        for seat in range(sp.n_players):
            start = GameStart(
                game_id=sp.game_id,
                game=sp.game.name,
                rules=sp.rules,
                seat=seat,
                n_players=sp.n_players,
                players=self.names,
                time_control=sp.time_control,
                seed=derive_seed(sp.seed, "bot", seat),
            )
            await self._send_safely(seat, start)
        for s in self.seats:  # freeze_idle: nobody runs until asked
            s.meter.idle()
        self.log.engine(self.state)  # the first deal's events come before the first action
        try:
            while not self._over():
                p = self._pending
                deadline = p.deadline if p is not None else self._first_deadline()
                with trio.CancelScope(deadline=deadline) as scope:
                    self._scope, self._scope_deadline = scope, deadline
                    if p is not None:
                        await self._decide(p)  # an early deadline interrupted it: wait on
                    await self._play()
                self._scope = None
                p = self._pending
                if scope.cancelled_caught and p is not None and trio.current_time() >= p.deadline:
                    await self._timed_out(p)
        except BaseException:  # cancelled (Ctrl-C, a match stopping): the log keeps every decision made
            with contextlib.suppress(Exception):  # what stopped the game is the error to report
                self._catch_up()
            raise
        self._catch_up()
        # A game cancelled meanwhile is no result, even one that ended by itself:
        # its bots may have died of the cancellation (a shielded send found them
        # gone), and a forfeit for that must not be recorded.
        await trio.lowlevel.checkpoint()
        self.log.engine(self.state)
        return await self._finish()

    def _over(self) -> bool:
        return self.ended_early or self.state.is_terminal()

    async def _play(self) -> None:
        """Decisions until the game ends (or the scope's deadline passes).

        The way from a bot's reply to the next request is the referee's cost
        per decision, and the bots wait for all of it: it stays short and flat.
        """
        state, seats = self.state, self.seats
        while not (self.ended_early or state.is_terminal()):
            started = perf_counter()
            seat = state.current_player()
            legal = state.legal_actions()
            s = seats[seat]
            bot = s.bot
            if s.out or bot is None or bot.dead:
                self._unasked += 1
                if self._unasked % 32 == 0:  # the referee plays alone: let other games run now and then
                    await trio.lowlevel.checkpoint()
                if not s.out:
                    self._on_failure(seat, "crash", "bot is not running", bot.stderr_text() if bot else "", fatal=True)
                await self._play_default(seat, legal, None, None)
                continue
            p = self._request(seat, s, legal)
            if p is None:
                await self._play_default(seat, legal, self.request_id, 0.0)
                continue
            self.overhead += perf_counter() - started
            await self._decide(p)

    async def _play_default(
        self, seat: int, legal: Sequence[Any], rid: int | None, elapsed: float | None, cpu: float | None = None
    ) -> None:
        """After a failure (or for a seat that is out): the first legal action."""
        self._catch_up()
        started = perf_counter()
        s = self.seats[seat]
        if elapsed is not None and not s.out and s.bot is not None and not s.bot.dead:  # it was asked
            await self._send_safely(
                seat,
                Warning(
                    id=rid,
                    game_id=self.spec.game_id,
                    reason=self.failures[-1].reason,
                    message=f"{self.failures[-1].message}; the referee played the first legal action",
                ),
            )
        if self.ended_early:
            return
        action = legal[0]
        self.state.apply_action(action)
        self.decisions += 1
        self.log.action(seat, rid, "default", action, elapsed, cpu, self.state)
        if self.watch is not None:
            self.watch.acted(self, seat, "default", action, elapsed)
        self.overhead += perf_counter() - started

    async def _finish(self) -> GameRecord:
        sp = self.spec
        winner, scores, placements, reason = final_outcome(self.state, self.forfeited, sp.n_players)
        for s in self.seats:  # game_over is read off the clock, by everyone
            s.meter.wake()
        for seat in range(sp.n_players):
            # Another seat's failure message may quote its hand: others get the reason only.
            seen = [
                f if f.seat == seat else SeatFailure(seat=f.seat, reason=f.reason, message=f.reason)
                for f in self.failures
            ]
            over = GameOver(
                game_id=sp.game_id,
                events=self._new_events(seat),
                winner=winner,
                scores=scores,
                placements=placements,
                reason=reason,
                failures=seen,
            )
            await self._send_safely(seat, over)
        deals = len(self.state.dealt_decks())
        cpu_ms = [s.meter.cpu_ms() for s in self.seats]
        for seat, s in enumerate(self.seats):
            if s.log_budget.unlogged_lines:
                self.log.unlogged(seat, s.log_budget.unlogged_lines, s.log_budget.unlogged_bytes)
        self.log.result(
            LogResult(
                winner=winner,
                scores=scores,
                placements=placements,
                reason=reason,
                failures=self.failures,
                forfeited=self.forfeited,
                decisions=self.decisions,
                referee_overhead_us=round(self.overhead / max(1, self.decisions) * 1e6, 1),
                think_ms=[round(t * 1000, 3) for t in self.think],
                cpu_ms=cpu_ms,
            )
        )
        self.log.close()
        record = GameRecord(
            game_id=sp.game_id,
            seed=sp.seed,
            deal_set=sp.deal_set,
            seat_names=self.names,
            winner=winner,
            scores=scores,
            placements=placements,
            reason=reason,
            failures=self.failures,
            forfeited=self.forfeited,
            deals=deals,
            decisions=self.decisions,
            log_path=str(self.log.path) if self.log.path else None,
            overhead_us=(self.overhead / max(1, self.decisions)) * 1e6,
            think_ms=[t * 1000 for t in self.think],
            cpu_ms=cpu_ms,
            asked=[s.meter.asked for s in self.seats],
            requests=self.request_id - sp.request_id_base,
            evidence=self.evidence,
        )
        if self.watch is not None:
            self.watch.finished(self, record)
        return record


def log_path_for(log_dir: Path | None, game_id: int) -> Path | None:
    return None if log_dir is None else log_dir / f"game-{game_id:05d}.jsonl"
