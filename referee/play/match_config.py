"""What a match is: its bots, game and rules, games and seed, clock, policy,
sandbox and logs, checked before any bot starts.

Everything here fails fast, in one line that says what to fix: bots for a
seat count the game does not have, a start position that cannot occur, a
log folder that holds an earlier match's logs, or (with a sandbox) a machine
that cannot isolate bots or a bot whose folder would show what it must not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol.messages import TimeControl
from referee.errors import ConfigError
from referee.games.base import Deal, GameDef
from referee.play.game_spec import FailurePolicy
from referee.play.in_order import MAX_MATCH_GAMES
from referee.play.start import check_start
from referee.play.watch import WatchGames
from referee.seats.bot_command import BotSpec
from referee.seats.isolation import IsolatedBots
from referee.seats.sandbox import SandboxLimits


def check_log_dir(log_dir: Path) -> None:
    """A log folder must be a folder, and must not hold an earlier match's
    logs: the new games would overwrite some of them and mix with the rest."""
    if log_dir.exists() and not log_dir.is_dir():
        raise ConfigError(f"--log-dir {log_dir}: that is a file, not a folder; give a folder for the game logs")
    if log_dir.is_dir():
        earlier = sorted(p.name for p in log_dir.glob("game-*.jsonl"))
        if earlier:
            raise ConfigError(
                f"--log-dir {log_dir} already holds {len(earlier)} game logs of an earlier match ({earlier[0]}, ...): "
                "choose a new or empty folder (nothing was overwritten)"
            )


@dataclass(frozen=True)
class MatchConfig(IsolatedBots):
    game: GameDef
    rules: Any
    bots: list[BotSpec]
    games: int
    seed: int
    time_control: TimeControl = field(default_factory=TimeControl)
    policy: FailurePolicy = field(default_factory=FailurePolicy)
    deals: tuple[Deal, ...] = ()
    log_dir: Path | None = None
    sprt: tuple[float, float, float, float] | None = None
    sandbox: SandboxLimits | None = None  # None: bots run as the referee's user, unisolated
    hidden: tuple[Path, ...] = ()  # more paths no sandboxed bot may see (the deals file)
    start: str | None = None  # a position every game begins from (play/start.py); checked here, kept canonical
    concurrency: int = 1  # deal sets played at once, each slot with its own bot processes
    watch_games: WatchGames | None = None  # the live stream's hook into every game
    notes: tuple[str, ...] = field(default=(), init=False, compare=False)  # for the user: how bots are shown

    def __post_init__(self) -> None:
        n = len(self.bots)
        if n not in self.game.seat_counts:
            counts = " or ".join(str(c) for c in self.game.seat_counts)
            raise ConfigError(f"{self.game.title} needs {counts} bots, got {n}")
        if self.games < 1:
            raise ConfigError("--games must be at least 1")
        if self.start is not None:
            object.__setattr__(self, "start", check_start(self.start, self.game, n, self.rules, self.deals))
        if self.n_sets * self.set_size > MAX_MATCH_GAMES:
            raise ConfigError(
                f"--games {self.games}: a match plays at most {MAX_MATCH_GAMES:,} games (request ids "
                "must stay 32-bit); play several matches with different seeds"
            )
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.log_dir is not None:
            check_log_dir(self.log_dir)
        object.__setattr__(self, "notes", self.isolation_notes())

    @property
    def set_size(self) -> int:
        return len(self.bots)

    @property
    def n_sets(self) -> int:
        return -(-self.games // self.set_size)
