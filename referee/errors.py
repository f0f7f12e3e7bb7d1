"""The one error family of the referee.

Everything the referee raises on purpose derives from `RefereeError`, so the
CLI can print it as a one-line message instead of a traceback. trio and
msgspec errors are translated into these at the boundary (`raise ... from`).
"""

from __future__ import annotations


class RefereeError(Exception):
    """Base of every expected error: bad input, bad bot, bad config, bad log."""


class ConfigError(RefereeError):
    """A rules option, time control, deal file or tournament config is invalid."""


class IllegalAction(RefereeError):
    """An action is not legal in the current state; the message says why."""


class CorruptLog(RefereeError):
    """A game log cannot be read or does not re-simulate; names file and line."""


class BotError(RefereeError):
    """A bot misbehaved. `reason` is the stable reason code written to logs."""

    reason = "bot_error"

    def __init__(self, message: str, *, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class BotStartError(BotError):
    reason = "startup_failure"


class BotCrashed(BotError):
    reason = "crash"


class Resigned(BotError):
    """A person at the table gave up the game; the seat forfeits under any policy."""

    reason = "resigned"


class ProtocolViolation(BotError):
    """Malformed JSON, schema violation, over-long line or stale request id."""

    reason = "protocol_violation"

    def __init__(self, message: str, *, detail: str = "", reason: str | None = None) -> None:
        super().__init__(message, detail=detail)
        if reason is not None:
            self.reason = reason


class ResultsError(RefereeError):
    """A results database is unreadable or damaged, or changed behind the referee's back."""


class SandboxUnavailable(RefereeError):
    """A sandboxed run was asked for and this machine cannot isolate bots (or
    a bot cannot be isolated as given); the message says what is missing."""


class ClusterError(RefereeError):
    """A worker cannot play a game as the coordinator asked (its copy of a bot
    differs, it cannot isolate), or the cluster lost a game too often."""


class SubmissionRefused(RefereeError):
    """An arena submission cannot be taken: a hostile or oversized archive, a
    limit of its user; the message names the member or the limit, in one line.
    `status` is the HTTP status the arena answers with (400 unless said)."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class ActionRefused(RefereeError):
    """A host's control (pause, close, disqualify, a user, the final) or an
    owner's version switch that cannot be done as asked; the line says why.
    `status` is the HTTP status the admin API answers with (400 unless said)."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status
