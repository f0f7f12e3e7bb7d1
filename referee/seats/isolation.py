"""The one isolation gate: every way of running bots asks it before any game.

A sandboxed run fails closed: if this machine cannot isolate bots (or give
the freezer a sandbox asks for), or a bot's folder would show what no bot
may see (the referee's own files, the run's config, logs, deals or results),
it refuses before any bot starts, saying why. `match`, `play`, `check`, a
tournament's coordinator and each of its workers (pool or Dask) call it, as
the sandbox itself does again at each start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from referee.seats.bot_command import BotSpec
from referee.seats.sandbox import SandboxLimits, check_bot, forbidden_paths, require_freezer, require_sandbox


def require_isolation(
    limits: SandboxLimits | None, bots: Sequence[BotSpec] = (), hidden: Sequence[Path | str] = ()
) -> tuple[str, ...]:
    """Nothing without a sandbox. With one: SandboxUnavailable if this machine
    cannot give it, or if a bot's folder holds one of `hidden` or the
    referee's own files; else a line for the user about each bot whose folder
    its sandbox shows as a copy."""
    if limits is None:
        return ()
    require_sandbox()
    require_freezer(limits)
    forbidden = forbidden_paths([Path(p) for p in hidden])
    notes = (check_bot(spec.argv, spec.cwd, spec.name, forbidden) for spec in bots)
    return tuple(dict.fromkeys(note for note in notes if note))


def isolated(bots: Sequence[BotSpec], limits: SandboxLimits | None, hidden: Sequence[Path | str]) -> list[BotSpec]:
    """The bots as they are started: in the sandbox, if any, which hides `hidden` from them."""
    if limits is None:
        return list(bots)
    paths = tuple(str(p) for p in hidden)
    return [replace(b, sandbox=limits, hidden=paths) for b in bots]


class IsolatedBots:
    """What a config that starts bots (a match's, a table's) offers about
    their isolation; its `bots`, `sandbox`, `hidden` and `log_dir` are the
    config's own fields."""

    bots: list[BotSpec]
    sandbox: SandboxLimits | None
    hidden: tuple[Path, ...]
    log_dir: Path | None

    @property
    def hidden_paths(self) -> tuple[Path, ...]:
        """What no sandboxed bot may see: the deals and position files, the logs."""
        return (*self.hidden, *([self.log_dir] if self.log_dir else []))

    def isolation_notes(self) -> tuple[str, ...]:
        """The isolation gate for these bots (see `require_isolation`)."""
        return require_isolation(self.sandbox, self.bots, self.hidden_paths)

    def seat_specs(self) -> list[BotSpec]:
        """The bots as they are started: with the config's sandbox, if any."""
        return isolated(self.bots, self.sandbox, self.hidden_paths)
