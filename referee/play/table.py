"""A table with one person and 1-3 bots: `chicago-referee play`.

The person's seat is a `HumanSeat`; the bots are ordinary bot processes
(started, handshaken and restarted as in a match). Every game goes through
the same `GameRunner` as a match, so its log verifies and replays like any
other. The person has no time limit unless one is given; the log's header
marks their seat as human. With a sandbox the bots run isolated exactly as in
a match (the person's seat is the referee itself and needs none).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from protocol.messages import TimeControl
from referee.errors import ConfigError
from referee.games.base import Deal, GameDef
from referee.play.game_spec import FailurePolicy, GameRecord, GameSpec
from referee.play.handle import BotHandle
from referee.play.match_config import MatchConfig, check_log_dir
from referee.play.runner import log_path_for
from referee.play.seeding import derive_seed
from referee.play.session import play_game
from referee.play.start import check_start
from referee.play.summary import MatchResult, summarize
from referee.seats.bot_command import BotSpec
from referee.seats.human import HumanSeat, Player, engine_judge
from referee.seats.isolation import IsolatedBots
from referee.seats.sandbox import SandboxLimits, describe

NO_LIMIT_MS = 30 * 24 * 3600 * 1000
"""A person's decision limit when none is asked for: in effect none (30 days)."""

NO_LIMIT = TimeControl(decision_ms=NO_LIMIT_MS)


@dataclass(frozen=True)
class TableConfig(IsolatedBots):
    game: GameDef
    rules: Any
    bots: list[BotSpec]
    seed: int
    human_seat: int = 0
    human_name: str = "human"
    games: int = 1
    time_control: TimeControl = field(default_factory=TimeControl)
    human_time: TimeControl | None = None
    policy: FailurePolicy = field(default_factory=FailurePolicy)
    deals: tuple[Deal, ...] = ()
    log_dir: Path | None = None
    sandbox: SandboxLimits | None = None  # the bots' isolation; None: they run as the referee's user
    hidden: tuple[Path, ...] = ()  # more paths no sandboxed bot may see (the deals file)
    start: str | None = None  # a position every game begins from (play/start.py); checked here, kept canonical
    notes: tuple[str, ...] = field(default=(), init=False, compare=False)  # for the user: how bots are shown

    def __post_init__(self) -> None:
        n = self.n_players
        if n not in self.game.seat_counts:
            counts = " or ".join(str(c - 1) for c in self.game.seat_counts)
            raise ConfigError(f"{self.game.title} with you at the table needs {counts} bots, got {len(self.bots)}")
        if self.start is not None:
            object.__setattr__(self, "start", check_start(self.start, self.game, n, self.rules, self.deals))
        if not 0 <= self.human_seat < n:
            raise ConfigError(f"--seat {self.human_seat} is not a seat of this table: choose 0-{n - 1}")
        if self.games < 1:
            raise ConfigError("--games must be at least 1")
        if self.log_dir is not None:
            check_log_dir(self.log_dir)
        object.__setattr__(self, "notes", self.isolation_notes())

    @property
    def n_players(self) -> int:
        return len(self.bots) + 1

    def seat_names(self) -> list[str]:
        names = [b.name for b in self.bots]
        names.insert(self.human_seat, self.human_name)
        return names

    def as_match(self) -> MatchConfig:
        """The same table as a match config (for the match table of a summary)."""
        specs = list(self.bots)
        specs.insert(self.human_seat, BotSpec(name=self.human_name, argv=()))
        return MatchConfig(
            game=self.game,
            rules=self.rules,
            bots=specs,
            games=self.games,
            seed=self.seed,
            time_control=self.time_control,
            policy=self.policy,
            deals=self.deals,
        )


async def play_table(
    config: TableConfig,
    player: Player,
    again: Callable[[list[GameRecord]], Awaitable[bool]],
    on_game: Callable[[GameRecord], None] | None = None,
) -> MatchResult:
    """Play `config.games` games, then more while `again` says so; the result
    counts every game as a match would."""
    records: list[GameRecord] = []
    async with trio.open_nursery() as nursery:
        handles = [BotHandle(spec, nursery) for spec in config.seat_specs()]
        human = HumanSeat(config.human_name, player, nursery)
        requests = 0
        try:
            planned = config.games
            while True:
                k = len(records)
                record = await _play_game(config, k, handles, human, requests)
                requests += record.requests
                records.append(record)
                if on_game is not None:
                    on_game(record)
                if len(records) >= planned:
                    if not await again(records):
                        break
                    planned += 1
        finally:
            with trio.CancelScope(shield=True):
                await human.close()
                for h in handles:
                    await h.close()
            nursery.cancel_scope.cancel()  # a question still open to the person ends with the table
    return summarize(config.as_match(), records)


async def _play_game(
    config: TableConfig, k: int, handles: list[BotHandle], human: HumanSeat, request_id_base: int
) -> GameRecord:
    seed = derive_seed(config.seed, "deal-set", k)
    n, me = config.n_players, config.human_seat
    seat_tcs: list[TimeControl | None] = [None] * n
    seat_tcs[me] = config.human_time or NO_LIMIT
    spec = GameSpec(
        game=config.game,
        rules=config.rules,
        n_players=n,
        seed=seed,
        game_id=k + 1,
        time_control=config.time_control,
        policy=config.policy,
        deals=config.deals,
        match_seed=config.seed,
        deal_set=k,
        seat_time_controls=tuple(seat_tcs),
        request_id_base=request_id_base,
        isolation=describe(config.sandbox),
        start=config.start,
    )
    bots = iter(handles)
    seats = [human if seat == me else next(bots) for seat in range(n)]

    def judge(state: Any) -> None:
        human.judge_for = engine_judge(state)

    return await play_game(spec, seats, config.seat_names(), log=log_path_for(config.log_dir, k + 1), on_state=judge)
