"""What a game leaves in its log, written as it happens.

The runner plays; the recorder writes each record of `referee.logs.records`
as the game produces it: the header, every message sent and line received
with its time since the game started, every deal and engine event, every
action with the bot's thinking and CPU time, every failure, the unsolicited
lines past the log's budget, and the result. A game without a log (`log`
None) records nothing and costs nothing here: every method returns at once.
Requests and whole messages are written on raw fast paths (the bytes already
encoded for the bot), so logging a decision adds no second encoding.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from referee import __version__
from referee.games.base import GameState
from referee.games.cards import CARD_STR
from referee.logs.gamelog import GameLogWriter, cut, line_type
from referee.logs.records import (
    ActionRecord,
    DealRecord,
    EventRecord,
    FailureRecord,
    LogHeader,
    LogResult,
    PlayerInfo,
    RecvRecord,
    SendRecord,
    UnloggedRecord,
)
from referee.play.game_spec import GameSpec
from referee.play.start import deals_before, game_start_text

ELIDED = ["view", "legal"]
"""What a logged request leaves out: `verify` re-creates both from the game so far."""

# The records of every decision, built directly as their lines (`line_type`).
_SEND_LINE = line_type(SendRecord)
_RECV_LINE = line_type(RecvRecord)
_ACTION_LINE = line_type(ActionRecord)
_EVENT_LINE = line_type(EventRecord)
_DEAL_LINE = line_type(DealRecord)


class GameRecorder:
    """Writes one game's log through `writer`, its times from `now` (seconds)."""

    def __init__(self, writer: GameLogWriter, spec: GameSpec, now: Callable[[], float]) -> None:
        self.writer = writer
        self.enabled = writer.enabled
        self.spec = spec
        self._now = now
        self.t0 = now()
        self.deals_before = deals_before(spec.start)  # deal records are numbered on from a start position's deal
        self.logged_deals = 0
        self.logged_events = 0

    @property
    def path(self) -> Path | None:
        return self.writer.path

    def t(self) -> float:
        """Milliseconds since the game started."""
        return round((self._now() - self.t0) * 1000, 3)

    def header(self, players: list[PlayerInfo]) -> None:
        if not self.enabled:
            return
        sp = self.spec
        self.writer.write(
            LogHeader(
                referee=__version__,
                game=sp.game.name,
                game_id=sp.game_id,
                rules=sp.rules,
                n_players=sp.n_players,
                seed=sp.seed,
                deals=[{"dealer": d.dealer, "deck": [CARD_STR[c] for c in d.deck]} for d in sp.deals],
                players=players,
                time_control=sp.time_control,
                failure_policy=sp.policy,
                match_seed=sp.match_seed,
                deal_set=sp.deal_set,
                request_id_base=sp.request_id_base,
                isolation=sp.isolation,
                start=msgspec.UNSET if sp.start is None else game_start_text(sp.start, sp.seed),
                worker=sp.worker,
            )
        )

    def sent(self, seat: int, data: bytes) -> None:
        """A whole message as sent (`data` is its encoded line)."""
        if self.enabled:
            self.writer.write_raw(b'{"type":"send","seat":%d,"t":%.3f,"msg":' % (seat, self.t()), data)

    def request(self, seat: int, rid: int, events: list[Any], clock: Any) -> None:
        """A request, without the view and legal list the game re-creates."""
        if self.enabled:
            self.writer.write_line(
                _SEND_LINE(
                    seat=seat,
                    t=self.t(),
                    elided=ELIDED,
                    msg={"type": "request", "id": rid, "game_id": self.spec.game_id, "events": events, "clock": clock},
                )
            )

    def engine(self, state: GameState) -> None:
        """The deals and events the engine produced since the last call."""
        if not self.enabled:
            return
        decks = state.dealt_decks()
        while self.logged_deals < len(decks):
            d = decks[self.logged_deals]
            self.logged_deals += 1
            self.writer.write_line(
                _DEAL_LINE(
                    deal=self.deals_before + self.logged_deals, dealer=d.dealer, deck=[CARD_STR[c] for c in d.deck]
                )
            )
        events = state.events
        write_line = self.writer.write_line
        for aud, ev in events[self.logged_events :]:
            write_line(_EVENT_LINE(to=aud, event=ev))
        self.logged_events = len(events)

    def received(self, seat: int, line: bytes, at: float | None = None, **extra: Any) -> None:
        """A line a seat wrote (cut to the logged length), received now or `at` (a `t()` taken then)."""
        if self.enabled:
            self.writer.write_line(_RECV_LINE(seat=seat, t=self.t() if at is None else at, line=cut(line), **extra))

    def action(
        self,
        seat: int,
        rid: int | None,
        source: str,
        action: Any,
        elapsed: float | None,
        cpu: float | None,
        state: GameState,
    ) -> None:
        """An applied action, then what it made the engine do."""
        if not self.enabled:
            return
        think = None if elapsed is None else round(elapsed * 1000, 3)
        self.writer.write_line(
            _ACTION_LINE(
                seat=seat,
                id=rid,
                source=source,
                action=action,
                ms=think,
                cpu_ms=None if cpu is None else round(cpu * 1000, 3),
            )
        )
        self.engine(state)

    def failure(self, seat: int, reason: str, message: str, detail: str) -> None:
        self.writer.write(FailureRecord(seat=seat, reason=reason, message=message, detail=cut(detail)))

    def unlogged(self, seat: int, lines: int, size: int) -> None:
        if self.enabled:
            self.writer.write(UnloggedRecord(seat=seat, lines=lines, bytes=size))

    def result(self, result: LogResult) -> None:
        if self.enabled:
            self.writer.write(result)

    def close(self) -> None:
        self.writer.close()
