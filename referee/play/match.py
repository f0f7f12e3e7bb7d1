"""A match: 2-4 bots play games in deal sets, with statistics at the end.

A deal set is one seed (so one deck sequence) played once under each seat
rotation: with 2 bots both seatings, with 3-4 bots every cyclic rotation, so
every bot sits in every seat equally often and card luck largely cancels.
Bot processes live for the whole match and are restarted after a crash.
With `concurrency` N, N slots play deal sets at once, each with its own bot
processes; results are taken in schedule order (`play/in_order.py`), so a
concurrent match gives the same games, logs and statistics as a sequential one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
import trio

from protocol.messages import PROTOCOL_VERSION, BotHello, Bye, Hello, TimeControl
from referee import __version__
from referee.errors import BotError, ConfigError, ProtocolViolation
from referee.games import GAMES
from referee.games.base import Deal, GameDef
from referee.logs.gamelog import GameLogWriter
from referee.logs.records import PlayerInfo
from referee.play.in_order import MAX_MATCH_GAMES, InOrder, request_id_base
from referee.play.replies import decode_hello
from referee.play.game_spec import FailurePolicy, GameRecord, GameSpec
from referee.play.runner import GameRunner, log_path_for
from referee.play.seeding import derive_seed
from referee.play.start import check_start
from referee.play.watch import WatchGames
from referee.seats.bot_process import BotProcess, BotSpec, start_bot
from referee.seats.sandbox import (
    SandboxLimits,
    check_bot,
    describe,
    forbidden_paths,
    require_freezer,
    require_sandbox,
)
from referee.stats.ratings import (
    MatchStats,
    Ratings,
    SprtResult,
    comparisons_from_scores,
    fit_ratings,
    set_counts,
    set_stats,
    sprt,
)

_BYE = msgspec.json.encode(Bye()) + b"\n"


def seat_rotations(n: int) -> list[list[int]]:
    """Rotation r puts bot (s + r) % n in seat s: each bot sits in each seat once."""
    return [[(s + r) % n for s in range(n)] for r in range(n)]


def unique_names(specs: list[BotSpec]) -> list[BotSpec]:
    """Distinct labels: `js/chicago_bot` vs `c/chicago_bot`, else `name#2`."""
    programs = {spec.name: {s.argv for s in specs if s.name == spec.name} for spec in specs}
    seen: Counter[str] = Counter()
    out = []
    for spec in specs:
        name = spec.name
        if len(programs[name]) > 1:
            script = next((a for a in reversed(spec.argv) if Path(a).name.startswith(name)), spec.argv[-1])
            folder = Path(script).parent.name
            name = f"{folder}/{name}" if folder else name  # no folder tells them apart (`pimc`, `pimc --budget-ms 50`)
        seen[name] += 1
        if seen[name] > 1:
            name = f"{name}#{seen[name]}"
        out.append(replace(spec, name=name))
    return out


class BotHandle:
    """One bot of a match: started on demand, handshaken, restarted after a crash."""

    def __init__(self, spec: BotSpec, nursery: trio.Nursery) -> None:
        self.spec = spec
        self.nursery = nursery
        self.proc: BotProcess | None = None
        self.hello: BotHello | None = None
        self.starts = 0
        self.last_id = 0  # the last request id its process was sent

    async def fresh_for(self, base: int) -> None:
        """A game whose ids start after `base` needs a process that never saw a
        larger id (after an over-long game): else the new ids would look stale."""
        if self.last_id > base:
            await self.close()

    async def ensure(self, tc: TimeControl, games: list[str]) -> tuple[str, str, str] | None:
        """Running and handshaken, or (reason, message, detail) why not."""
        if self.proc is not None and not self.proc.dead and self.proc.proc.poll() is None:
            return None
        await self.close()
        self.starts += 1
        try:
            self.proc = await start_bot(self.nursery, self.spec)
        except BotError as exc:
            await self.close()
            return ("startup_failure", str(exc), "")
        proc = self.proc
        hello = Hello(referee=f"chicago-referee {__version__}", games=games)
        spawned = trio.current_time()  # the startup clock runs from the process, not from a queue

        def took() -> str:
            return f"{trio.current_time() - spawned:.2f} s after the process started"

        try:
            with trio.fail_after(tc.startup_ms / 1000):
                await proc.send(msgspec.json.encode(hello) + b"\n")
                line = await proc.receive_line()
            reply = decode_hello(line)
        except trio.TooSlowError:
            detail = proc.stderr_text()
            await self.close()
            return ("startup_failure", f"no hello reply within the {tc.startup_ms} ms startup limit ({took()})", detail)
        except ProtocolViolation as exc:  # an over-long line, or a line that is no hello
            detail = exc.detail
            note = proc.exit_note()
            await self.close()
            if exc.reason == "line_too_long":
                return ("startup_failure", f"{exc}{note} during the handshake ({took()})", detail or proc.stderr_text())
            return ("startup_failure", f"{exc} ({exc.reason}, {took()})", detail)
        except BotError as exc:
            detail = exc.detail or proc.stderr_text()
            note = proc.exit_note()
            await self.close()
            return ("startup_failure", f"{exc}{note} during the handshake ({took()})", detail)
        if reply.protocol != PROTOCOL_VERSION:
            await self.close()
            return ("startup_failure", f"bot speaks protocol {reply.protocol}, referee speaks {PROTOCOL_VERSION}", "")
        self.hello = reply
        return None

    async def close(self) -> None:
        self.last_id = 0
        if self.proc is not None:
            proc, self.proc = self.proc, None
            await proc.close(_BYE)


def check_isolation(bots: Sequence[BotSpec], sandbox: SandboxLimits | None, hidden: Sequence[Path],
                    log_dir: Path | None) -> tuple[str, ...]:
    """With a sandbox: fail closed, before any game, if the machine cannot
    isolate or a bot's folder would show what no bot may see. Returns a line
    for the user about each bot whose folder its sandbox shows as a copy."""
    if sandbox is None:
        return ()
    require_sandbox()
    require_freezer(sandbox)
    forbidden = forbidden_paths([*hidden, *([log_dir] if log_dir else [])])
    notes = (check_bot(spec.argv, spec.cwd, spec.name, forbidden) for spec in bots)
    return tuple(dict.fromkeys(note for note in notes if note))


def sandboxed(bots: Sequence[BotSpec], sandbox: SandboxLimits | None, hidden: Sequence[Path],
              log_dir: Path | None) -> list[BotSpec]:
    """The bots as they are started: with the sandbox, if any, and what it must hide."""
    if sandbox is None:
        return list(bots)
    paths = tuple(str(p) for p in (*hidden, *([log_dir] if log_dir else [])))
    return [replace(b, sandbox=sandbox, hidden=paths) for b in bots]


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
                "choose a new or empty folder (nothing was overwritten)")


@dataclass(frozen=True)
class MatchConfig:
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
            raise ConfigError(f"--games {self.games}: a match plays at most {MAX_MATCH_GAMES:,} games (request ids "
                              "must stay 32-bit); play several matches with different seeds")
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.log_dir is not None:
            check_log_dir(self.log_dir)
        object.__setattr__(self, "notes", check_isolation(self.bots, self.sandbox, self.hidden, self.log_dir))

    def seat_specs(self) -> list[BotSpec]:
        """The bots as they are started: with this match's sandbox, if any."""
        return sandboxed(self.bots, self.sandbox, self.hidden, self.log_dir)

    @property
    def set_size(self) -> int:
        return len(self.bots)

    @property
    def n_sets(self) -> int:
        return -(-self.games // self.set_size)


@dataclass
class BotSummary:
    name: str
    command: list[str]
    games: int = 0
    wins: int = 0
    score_sum: int = 0
    deals: int = 0
    place_sum: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    asked: int = 0  # requests it answered (or let time out)
    think_ms: float = 0.0  # wall time of those decisions
    cpu_ms: float | None = None  # their CPU time; None: not measured

    def as_dict(self) -> dict[str, Any]:
        g = max(1, self.games)
        n = max(1, self.asked)
        return {
            "name": self.name, "command": self.command, "games": self.games, "wins": self.wins,
            "win_rate": round(self.wins / g, 4), "avg_score": round(self.score_sum / g, 3),
            "points_per_deal": round(self.score_sum / max(1, self.deals), 4),
            "avg_place": round(self.place_sum / g, 3), "failures": dict(sorted(self.failures.items())),
            "decisions": self.asked, "ms_per_decision": round(self.think_ms / n, 3),
            "cpu_ms_per_decision": None if self.cpu_ms is None else round(self.cpu_ms / n, 3),
        }


@dataclass
class MatchResult:
    config: MatchConfig
    records: list[GameRecord]
    bots: list[BotSummary]
    stats: MatchStats | None = None
    pentanomial: list[int] | None = None
    ratings: Ratings | None = None
    sprt: SprtResult | None = None
    stopped: str = ""

    def bot_index(self, name: str) -> int:
        return [b.name for b in self.bots].index(name)


def summarize(config: MatchConfig, records: list[GameRecord]) -> MatchResult:
    names = [b.name for b in config.bots]
    bots = [BotSummary(name=b.name, command=list(b.argv)) for b in config.bots]
    for rec in records:
        for seat, name in enumerate(rec.seat_names):
            b = bots[names.index(name)]
            b.games += 1
            b.wins += rec.winner == seat
            b.score_sum += rec.scores[seat]
            b.deals += rec.deals
            b.place_sum += rec.placements[seat]
            if seat < len(rec.asked):
                b.asked += rec.asked[seat]
                b.think_ms += rec.think_ms[seat]
                cpu = rec.cpu_ms[seat]
                if cpu is not None:
                    b.cpu_ms = (b.cpu_ms or 0.0) + cpu
        for f in rec.failures:
            bots[names.index(rec.seat_names[f.seat])].failures[f.reason] += 1
    result = MatchResult(config=config, records=records, bots=bots)
    sets: dict[int, list[GameRecord]] = {}
    for rec in records:
        sets.setdefault(rec.deal_set or 0, []).append(rec)
    complete = [v for v in sets.values() if len(v) == config.set_size]
    if len(names) == 2 and complete:
        set_scores = [sum(_score_for(r, names[0]) for r in v) / len(v) for v in complete]
        result.stats = set_stats(set_scores, games_per_set=2)
        result.pentanomial = set_counts(set_scores, games_per_set=2)
        if config.sprt is not None:
            e0, e1, a, b = config.sprt
            result.sprt = sprt(e0, e1, a, b, result.pentanomial)
    elif len(names) > 2 and records:
        comps = []
        for rec in records:
            table = {name: -rec.placements[seat] for seat, name in enumerate(rec.seat_names)}
            comps.extend(comparisons_from_scores(table, cluster=rec.deal_set))
        result.ratings = fit_ratings(comps, names, prior=2.0)
    return result


def _score_for(rec: GameRecord, name: str) -> float:
    seat = rec.seat_names.index(name)
    if rec.winner is None:
        return 0.5 if rec.placements[seat] == 1 else 0.0
    return 1.0 if rec.winner == seat else 0.0


async def run_match(config: MatchConfig, on_game: Callable[[GameRecord], None] | None = None) -> MatchResult:
    """Play the whole match; `on_game` is called after every finished game."""
    async with trio.open_nursery() as nursery:
        return await _run_match(config, on_game, nursery)


async def _run_match(
    config: MatchConfig, on_game: Callable[[GameRecord], None] | None, nursery: trio.Nursery
) -> MatchResult:
    specs = config.seat_specs()
    rotations = seat_rotations(len(specs))

    def emit(rec: GameRecord) -> None:
        if on_game is not None:
            on_game(rec)

    def stop_after(k: int) -> str:
        if config.sprt is None or len(specs) != 2:
            return ""
        res = summarize(config, results.emitted)
        if res.sprt is not None and res.sprt.decision is not None:
            games.cancel_scope.cancel()  # the games in flight are of later sets: a sequential run never played them
            return f"SPRT accepted {res.sprt.decision} after {k + 1} deal sets"
        return ""

    results: InOrder[GameRecord] = InOrder(config.n_sets, config.set_size, emit, stop_after)

    async def slot() -> None:
        handles = [BotHandle(spec, nursery) for spec in specs]
        try:
            while (k := results.take()) is not None:
                seed = derive_seed(config.seed, "deal-set", k)
                for r, rotation in enumerate(rotations):
                    game_id = k * len(rotations) + r + 1
                    base = request_id_base(game_id)
                    seats = [handles[i] for i in rotation]
                    start_failures = {}
                    for seat, h in enumerate(seats):
                        await h.fresh_for(base)
                        err = await h.ensure(config.time_control, games_known)
                        if err is not None:
                            start_failures[seat] = err
                    record = await play_one(config, game_id, k, seed, seats, start_failures, base)
                    for h in seats:
                        h.last_id = base + record.requests
                    results.finished(k, record)
        finally:
            with trio.CancelScope(shield=True):
                for h in handles:
                    await h.close()

    games_known = list(GAMES)
    async with trio.open_nursery() as games:
        for _ in range(min(config.concurrency, config.n_sets)):
            games.start_soon(slot)
    for rec in results.unemitted():  # finished after the SPRT stop: dropped, logs too
        discard_logs(rec.log_path, len(rec.seat_names))
    result = summarize(config, results.emitted)
    result.stopped = results.stopped
    return result


async def play_one(
    config: MatchConfig, game_id: int, deal_set: int, seed: int,
    seats: list[BotHandle], start_failures: dict[int, tuple[str, str, str]], id_base: int | None = None,
) -> GameRecord:
    """One game on the match's bot processes; a game cut short (cancelled) leaves no log behind."""
    spec = GameSpec(
        game=config.game, rules=config.rules, n_players=len(seats), seed=seed, game_id=game_id,
        time_control=config.time_control, policy=config.policy, deals=config.deals,
        match_seed=config.seed, deal_set=deal_set,
        request_id_base=request_id_base(game_id) if id_base is None else id_base,
        isolation=describe(config.sandbox), start=config.start,
    )
    names = [h.spec.name for h in seats]
    players = [PlayerInfo(seat=i, name=h.spec.name, argv=list(h.spec.argv)) for i, h in enumerate(seats)]
    log_path = log_path_for(config.log_dir, game_id)
    log = GameLogWriter(log_path)
    procs = [None if i in start_failures else h.proc for i, h in enumerate(seats)]
    for seat, proc in enumerate(procs):
        if proc is not None:
            proc.stderr_file = stderr_path(log_path, seat).name if log_path is not None else ""
    watch = config.watch_games(spec, names) if config.watch_games is not None else None
    runner = GameRunner(spec, procs, names, log, watch)
    try:
        record = await runner.run(players, start_failures)
    except BaseException:
        log.close()
        for proc in procs:
            if proc is not None:
                proc.take_game_stderr()
                proc.stderr_file = ""
        discard_logs(str(log_path) if log_path is not None else None, len(seats))
        raise
    if log_path is not None:
        save_stderr(log_path, [h.proc for h in seats])
    return record


def stderr_path(log_path: Path, seat: int) -> Path:
    """`game-00001.jsonl` -> `game-00001.seat0.stderr`, beside the log."""
    return log_path.with_name(f"{log_path.name.split('.')[0]}.seat{seat}.stderr")


def discard_logs(log_path: str | None, n_seats: int) -> None:
    """Remove a game's log and stderr files: a game the results do not count."""
    if log_path is None:
        return
    path = Path(log_path)
    path.unlink(missing_ok=True)
    for seat in range(n_seats):
        stderr_path(path, seat).unlink(missing_ok=True)


def save_stderr(log_path: Path, procs: list[BotProcess | None]) -> None:
    """Keep each seat's stderr of this game (its last 1 MB) beside the game log."""
    for seat, proc in enumerate(procs):
        if proc is not None:
            data = proc.take_game_stderr()
            proc.stderr_file = ""
            if data:
                stderr_path(log_path, seat).write_bytes(data)
