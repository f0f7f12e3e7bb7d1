"""`chicago-referee bench`: the referee's speed against the physical limit.

Two bot processes (three for Ghost Hand Euchre; the same trivial bot, which
answers the first legal action) are started and handshaken once; then
rounds alternate between:

1. through the referee: whole games (engine, views, clocks, validation;
   logging off), the seats rotating each game;
2. raw game stream: the very request lines those games sent, pre-encoded,
   each written to the process of the seat to act and its reply read back,
   with no referee work at all: the physical limit of such a match. It is
   measured twice: through trio's own pipe streams (`send_all` and
   `receive_some`, a raw trio pipe round trip) and through the direct reads
   and writes the referee itself uses, which skip trio's extra scheduler
   pass per call and are the faster of the two;
3. raw, one process: one request line to one process, over and over (a lone
   process that never sleeps answers faster than two that take turns).

The referee's own time per decision is given twice: as its runner's clock
counts it (from a reply to the next request, the engine included), and as
all the CPU time it adds: this process's CPU per decision through the
referee less its CPU per round trip of the raw stream (the bots' work is
waiting here, not CPU time, so it drops out).

Rounds are interleaved (in alternating order) and the medians compared,
because these machines are shared and noisy: a quiet or busy second falls
on both sides alike. Quote the ratios, measured in one run; absolute rates
are not comparable.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec
import trio

from referee.errors import BotStartError, SandboxUnavailable
from referee.games import get_game
from referee.games.base import PUBLIC
from referee.games.rules import build_rules
from referee.play.game_spec import StartFailure, make_request
from referee.play.handle import BotHandle
from referee.play.match import MatchConfig, play_one
from referee.play.seeding import derive_seed
from referee.seats.bot_command import BotSpec
from referee.seats.bot_process import BotProcess
from referee.seats.clock import SeatClock
from referee.seats.sandbox import SANDBOX_PATH, SandboxLimits, sandbox_python
from referee.seats.sandbox.files import stage

_encoder = msgspec.json.Encoder()


@dataclass(frozen=True)
class Round:
    referee_per_s: float
    stream_per_s: float
    trio_stream_per_s: float
    single_per_s: float
    decisions: int
    overhead_us: float
    referee_cpu_us: float = 0.0  # this process's CPU time per decision through the referee
    stream_cpu_us: float = 0.0  # and per round trip of the raw game stream (direct)

    @property
    def ratio(self) -> float:
        return self.referee_per_s / self.stream_per_s


@dataclass(frozen=True)
class BenchResult:
    rounds: list[Round]

    @property
    def referee_per_s(self) -> float:
        return statistics.median(r.referee_per_s for r in self.rounds)

    @property
    def raw_stream_per_s(self) -> float:
        return statistics.median(r.stream_per_s for r in self.rounds)

    @property
    def trio_stream_per_s(self) -> float:
        return statistics.median(r.trio_stream_per_s for r in self.rounds)

    @property
    def ratio_trio(self) -> float:
        """Referee against the game stream over trio's own pipe streams."""
        return self.referee_per_s / self.trio_stream_per_s

    @property
    def raw_single_per_s(self) -> float:
        return statistics.median(r.single_per_s for r in self.rounds)

    @property
    def ratio(self) -> float:
        """Referee against the raw game stream (the physical limit of the match)."""
        return self.referee_per_s / self.raw_stream_per_s

    @property
    def ratio_single(self) -> float:
        return self.referee_per_s / self.raw_single_per_s

    @property
    def ratio_range(self) -> tuple[float, float]:
        ratios = [r.ratio for r in self.rounds]
        return min(ratios), max(ratios)

    @property
    def decisions(self) -> int:
        return sum(r.decisions for r in self.rounds)

    @property
    def overhead_us(self) -> float:
        """The referee's own time per decision, as its runner measures it."""
        return sum(r.overhead_us * r.decisions for r in self.rounds) / max(1, self.decisions)

    @property
    def own_cpu_us(self) -> float:
        """All the referee adds per decision, in CPU time: its process's CPU per
        decision less the raw stream's per round trip (medians). Waiting is not
        CPU time, so the bots' work drops out; what the runner's own clock
        leaves out (decoding the reply, the readiness poll, starting and ending
        games) is in."""
        return statistics.median(r.referee_cpu_us for r in self.rounds) - statistics.median(
            r.stream_cpu_us for r in self.rounds
        )


def game_stream(config: MatchConfig, games: Sequence[tuple[int, int]]) -> list[tuple[int, int, bytes]]:
    """(game index, seat, request line) exactly as the referee sends them in
    games with these (game id, seed) pairs, each seat answering with the first
    legal action (no failures, so no warnings)."""
    n = len(config.bots)
    out: list[tuple[int, int, bytes]] = []
    for index, (game_id, seed) in enumerate(games):
        state = config.game.new_state(config.rules, n, seed, config.deals)
        clocks = [SeatClock(config.time_control) for _ in range(n)]
        cursor = [0] * n
        rid = 0
        while not state.is_terminal():
            seat = state.current_player()
            legal = state.legal_actions()
            events = [ev for aud, ev in state.events[cursor[seat] :] if aud in (PUBLIC, seat)]
            cursor[seat] = len(state.events)
            rid += 1
            req = make_request(rid, game_id, events, state.view(seat), legal, clocks[seat].snapshot())
            out.append((index, seat, _encoder.encode(req) + b"\n"))
            state.apply_action(legal[0])
    return out


async def _stream_rate(
    procs: Sequence[BotProcess], stream: list[tuple[int, int, bytes]], rotations: Sequence[int]
) -> float:
    """Round trips/s of `stream`; in game i, seat s is process `(s + rotations[i]) % n`."""
    return (await _stream_rate_cpu(procs, stream, rotations))[0]


async def _stream_rate_cpu(
    procs: Sequence[BotProcess], stream: list[tuple[int, int, bytes]], rotations: Sequence[int]
) -> tuple[float, float]:
    """As `_stream_rate`, and this process's CPU microseconds per round trip."""
    n = len(procs)
    cpu = time.thread_time()
    t0 = trio.current_time()
    for index, seat, line in stream:
        proc = procs[(seat + rotations[index]) % n]
        await proc.send(line)
        await proc.receive_line()
    elapsed = trio.current_time() - t0
    return len(stream) / elapsed, (time.thread_time() - cpu) / len(stream) * 1e6


async def _trio_stream_rate(
    procs: Sequence[BotProcess], stream: list[tuple[int, int, bytes]], rotations: Sequence[int]
) -> float:
    """As `_stream_rate`, through trio's `send_all` and `receive_some`."""
    n = len(procs)
    t0 = trio.current_time()
    for index, seat, line in stream:
        proc = procs[(seat + rotations[index]) % n].proc
        assert proc.stdin is not None and proc.stdout is not None
        await proc.stdin.send_all(line)
        reply = await proc.stdout.receive_some(65536)
        while not reply.endswith(b"\n"):
            reply += await proc.stdout.receive_some(65536)
    return len(stream) / (trio.current_time() - t0)


async def _single_rate(proc: BotProcess, line: bytes, count: int) -> float:
    head, tail = line.split(b'"id":1,', 1)
    t0 = trio.current_time()
    for i in range(1, count + 1):
        await proc.send(head + b'"id":%d,' % i + tail)
        await proc.receive_line()
    return count / (trio.current_time() - t0)


async def _referee_rate(
    config: MatchConfig,
    handles: Sequence[BotHandle],
    games: Sequence[tuple[int, int]],
    rotations: Sequence[int],
    deal_set: int,
) -> tuple[float, int, float]:
    """(decisions/s, decisions, summed own time in us) of these games through the referee."""
    decisions, overhead = 0, 0.0
    t0 = trio.current_time()
    for (game_id, game_seed), rotation in zip(games, rotations):
        seats = list(handles[rotation:]) + list(handles[:rotation])
        rec = await play_one(config, game_id, deal_set, game_seed, seats)
        if rec.failures:
            f = rec.failures[0]
            raise BotStartError(f"the bench bot failed in seat {f.seat}: {f.reason}: {f.message}")
        decisions += rec.decisions
        overhead += rec.overhead_us * rec.decisions
    return decisions / (trio.current_time() - t0), decisions, overhead


async def run_bench(
    spec: BotSpec,
    game: str = "chicago",
    rounds: int = 12,
    games_per_round: int = 4,
    seed: int = 1,
    sandbox: SandboxLimits | None = None,
) -> BenchResult:
    gdef = get_game(game)
    n = 2 if 2 in gdef.seat_counts else min(gdef.seat_counts)
    bots = [spec] + [replace(spec, name=f"{spec.name}#{i + 1}") for i in range(1, n)]
    config = MatchConfig(
        game=gdef, rules=build_rules(gdef), games=rounds * games_per_round, seed=seed, bots=bots, sandbox=sandbox
    )
    results: list[Round] = []
    async with trio.open_nursery() as nursery:
        handles = [BotHandle(b, nursery) for b in config.seat_specs()]
        try:
            for h in handles:
                _refuse_failed_start(h, await h.ensure(config.time_control, [gdef.name]))
            procs = [h.proc for h in handles if h.proc is not None]
            for r in range(rounds + 1):  # round 0 warms up and is not counted
                games = [
                    (r * games_per_round + g + 1, derive_seed(seed, "bench", r * games_per_round + g))
                    for g in range(games_per_round)
                ]
                rotations = [g % n for g in range(games_per_round)]
                stream = game_stream(config, games)

                # Alternate the order, so that neither side always runs right
                # after the other (warm caches, a machine speeding up).
                if r % 2:
                    cpu = time.thread_time()
                    referee, decisions, overhead = await _referee_rate(config, handles, games, rotations, r)
                    referee_cpu = time.thread_time() - cpu
                raw, raw_cpu = await _stream_rate_cpu(procs, stream, rotations)
                raw_trio = await _trio_stream_rate(procs, stream, rotations)
                if not r % 2:
                    cpu = time.thread_time()
                    referee, decisions, overhead = await _referee_rate(config, handles, games, rotations, r)
                    referee_cpu = time.thread_time() - cpu
                single = await _single_rate(procs[0], stream[0][2], len(stream))
                if r:
                    results.append(
                        Round(
                            referee_per_s=referee,
                            stream_per_s=raw,
                            trio_stream_per_s=raw_trio,
                            single_per_s=single,
                            decisions=decisions,
                            overhead_us=overhead / max(1, decisions),
                            referee_cpu_us=referee_cpu / max(1, decisions) * 1e6,
                            stream_cpu_us=raw_cpu,
                        )
                    )
        finally:
            with trio.CancelScope(shield=True):
                for h in handles:
                    await h.close()
    return BenchResult(rounds=results)


@dataclass(frozen=True)
class SandboxBench:
    """The sandbox's cost, measured against no sandbox in one run."""

    plain_per_s: list[float]
    sandboxed_per_s: list[float]
    plain_start_ms: list[float]
    sandboxed_start_ms: list[float]  # the k-th was measured next to the k-th plain one
    decisions: int
    load: tuple[float, float] = (0.0, 0.0)  # the 1-minute load average before and after

    @property
    def ratio(self) -> float:
        """Sandboxed decisions/s over unsandboxed (median of the rounds' ratios)."""
        return statistics.median(s / p for s, p in zip(self.sandboxed_per_s, self.plain_per_s))

    @property
    def start_differences_ms(self) -> list[float]:
        """Each sandboxed start-up (spawn to hello reply) minus the unsandboxed
        one measured next to it, sorted."""
        return sorted(s - p for s, p in zip(self.sandboxed_start_ms, self.plain_start_ms))

    @property
    def added_start_ms(self) -> float:
        """The median of those differences: a pair shares the machine's moment,
        so a load that comes and goes falls on both of its starts."""
        return statistics.median(self.start_differences_ms)

    @property
    def added_start_quartiles(self) -> tuple[float, float]:
        diffs = self.start_differences_ms
        if len(diffs) < 2:
            return diffs[0], diffs[0]
        q1, _, q3 = statistics.quantiles(diffs, n=4)
        return q1, q3


async def _start_ms(handle: BotHandle, config: MatchConfig) -> float:
    t0 = trio.current_time()
    failure = await handle.ensure(config.time_control, [config.game.name])
    elapsed = (trio.current_time() - t0) * 1000
    _refuse_failed_start(handle, failure)
    return elapsed


def _refuse_failed_start(handle: BotHandle, failure: StartFailure | None) -> None:
    """A bench needs every bot running: one line on why one is not, with its last words."""
    if failure is None:
        return
    said = failure.detail.strip().splitlines()[-1:]
    raise BotStartError(
        f"bot {handle.spec.name!r} did not start: {failure.message}" + "".join(f"; it said: {line}" for line in said)
    )


def plain_twin(spec: BotSpec, home: Path) -> BotSpec:
    """The bot as the sandbox runs it, minus the sandbox: the same interpreter
    (a sandboxed .py bot gets the system Python) and the same short environment
    (a host's environment can slow an interpreter's start: node reads the CA
    files it names), so that a comparison measures the sandbox alone."""
    argv = list(spec.argv)
    env = {"PATH": SANDBOX_PATH, "LANG": os.environ.get("LANG", "C.UTF-8"), "HOME": str(home), "TMPDIR": str(home)}
    if argv[0] == sys.executable:
        python = sandbox_python()
        if python is None:
            raise SandboxUnavailable("bench --sandbox: no system python of the referee's version for .py bots")
        argv = [python, "-s", *argv[1:]]  # the library the sandbox shows, at its host path
        env.update(PYTHONPATH=str(stage() / "lib"), PYTHONDONTWRITEBYTECODE="1")
    return replace(spec, argv=tuple(argv), env=tuple(env.items()))


async def run_sandbox_bench(
    spec: BotSpec,
    game: str = "chicago",
    rounds: int = 12,
    games_per_round: int = 4,
    limits: SandboxLimits | None = None,
    starts: int = 48,
    seed: int = 1,
) -> SandboxBench:
    """Whole games through the referee with and without the sandbox, rounds
    interleaved in alternating order; and start-ups of each kind, alternating."""
    with tempfile.TemporaryDirectory() as home:
        return await _sandbox_bench(
            plain_twin(spec, Path(home)), spec, game, rounds, games_per_round, limits or SandboxLimits(), starts, seed
        )


async def _sandbox_bench(
    twin: BotSpec,
    spec: BotSpec,
    game: str,
    rounds: int,
    games_per_round: int,
    limits: SandboxLimits,
    starts: int,
    seed: int,
) -> SandboxBench:
    gdef = get_game(game)
    n = 2 if 2 in gdef.seat_counts else min(gdef.seat_counts)
    plain = MatchConfig(
        game=gdef,
        rules=build_rules(gdef),
        games=rounds * games_per_round,
        seed=seed,
        bots=[twin] + [replace(twin, name=f"{twin.name}#{i + 1}") for i in range(1, n)],
    )
    boxed = replace(
        plain, sandbox=limits, bots=[spec] + [replace(spec, name=f"{spec.name}#{i + 1}") for i in range(1, n)]
    )
    configs = {False: plain, True: boxed}
    load_before = os.getloadavg()[0]
    async with trio.open_nursery() as nursery:
        start_ms = await _start_times(nursery, configs, starts)
        rates, decisions = await _game_rates(nursery, configs, rounds, games_per_round, seed, n)
    return SandboxBench(
        plain_per_s=rates[False],
        sandboxed_per_s=rates[True],
        plain_start_ms=start_ms[False],
        sandboxed_start_ms=start_ms[True],
        decisions=decisions,
        load=(load_before, os.getloadavg()[0]),
    )


async def _start_times(nursery: trio.Nursery, configs: dict[bool, MatchConfig], starts: int) -> dict[bool, list[float]]:
    """Start-ups of one bot, plain and sandboxed alternating; the first of
    each warms up and is not counted."""
    start_ms: dict[bool, list[float]] = {False: [], True: []}
    for k in range(starts + 1):
        for sandboxed in (k % 2 == 0, k % 2 == 1):
            config = configs[sandboxed]
            handle = BotHandle(config.seat_specs()[0], nursery)
            try:
                ms = await _start_ms(handle, config)
            finally:
                await handle.close()
            if k:
                start_ms[sandboxed].append(ms)
    return start_ms


async def _game_rates(
    nursery: trio.Nursery, configs: dict[bool, MatchConfig], rounds: int, games_per_round: int, seed: int, n: int
) -> tuple[dict[bool, list[float]], int]:
    """Decisions per second of whole games, rounds interleaved in alternating
    order (the first round warms up); and how many decisions were counted."""
    rates: dict[bool, list[float]] = {False: [], True: []}
    decisions = 0
    sets = {kind: [BotHandle(b, nursery) for b in config.seat_specs()] for kind, config in configs.items()}
    try:
        for sandboxed, handles in sets.items():
            for h in handles:
                await _start_ms(h, configs[sandboxed])
        for r in range(rounds + 1):
            games = [
                (r * games_per_round + g + 1, derive_seed(seed, "bench", r * games_per_round + g))
                for g in range(games_per_round)
            ]
            rotations = [g % n for g in range(games_per_round)]
            for sandboxed in (False, True) if r % 2 else (True, False):
                rate, count, _ = await _referee_rate(configs[sandboxed], sets[sandboxed], games, rotations, r)
                if r:
                    rates[sandboxed].append(rate)
                    decisions += count
    finally:
        with trio.CancelScope(shield=True):
            for handles in sets.values():
                for h in handles:
                    await h.close()
    return rates, decisions
