"""`chicago-referee bench`: the referee's speed against the physical limit.

All figures come from one run with the same trivial bot (it answers the first
legal action):

1. raw, one process: one pre-encoded real request line written to a single
   bot process and its reply read back, over and over;
2. raw, game stream: the request lines of real games (events, view, legal
   list), pre-encoded, each written to the process of the seat to act, as a
   2-seat game alternates between two bot processes; no referee work at all;
3. through the referee: whole games (engine, views, clocks, validation;
   logging off).

(2) is the physical limit of a 2-seat match: two processes take turns, so
each wakes with colder caches than a lone process that never sleeps, which
makes the same bot slower per request. Quote the ratios, measured in one
run: these machines are shared and noisy, absolute rates are not.
Each figure is taken in steady state, after the processes have started.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import trio

from protocol.messages import Clock, Hello, Request
from referee.bot_process import BotProcess, BotSpec, start_bot
from referee.games import get_game
from referee.games.base import PUBLIC
from referee.games.rules import build_rules
from referee.match import MatchConfig, run_match
from referee.play import new_game

_encoder = msgspec.json.Encoder()


@dataclass(frozen=True)
class BenchResult:
    raw_single_per_s: float
    raw_stream_per_s: float
    referee_per_s: float
    referee_decisions: int
    overhead_us: float

    @property
    def ratio(self) -> float:
        """Referee against the raw game stream (the 2-seat physical limit)."""
        return self.referee_per_s / self.raw_stream_per_s if self.raw_stream_per_s else 0.0

    @property
    def ratio_single(self) -> float:
        return self.referee_per_s / self.raw_single_per_s if self.raw_single_per_s else 0.0


def game_stream(game: str, n_requests: int) -> list[tuple[int, bytes]]:
    """(seat, request line) of real 2-seat games played with the first legal action."""
    out: list[tuple[int, bytes]] = []
    seed = 0
    while len(out) < n_requests:
        state = new_game(game, 2, seed)
        seed += 1
        cursor = [0, 0]
        while not state.is_terminal() and len(out) < n_requests:
            seat = state.current_player()
            legal = state.legal_actions()
            events = [ev for aud, ev in state.events[cursor[seat]:] if aud in (PUBLIC, seat)]
            cursor[seat] = len(state.events)
            req = Request(id=len(out) + 1, game_id=1, events=events, view=state.view(seat), legal=list(legal),
                          clock=Clock(decision_ms=1000))
            out.append((seat, _encoder.encode(req) + b"\n"))
            state.apply_action(legal[0])
    return out


async def _handshake(bot: BotProcess, game: str) -> None:
    await bot.send(_encoder.encode(Hello(referee="bench", games=[game])) + b"\n")
    await bot.receive_line()


async def raw_single(spec: BotSpec, game: str, seconds: float) -> float:
    (_, template), = game_stream(game, 1)
    head, tail = template.split(b'"id":1,', 1)
    async with trio.open_nursery() as nursery:
        bot = await start_bot(nursery, spec)
        try:
            await _handshake(bot, game)
            count = 0
            t0 = trio.current_time()
            while trio.current_time() - t0 < seconds:
                count += 1
                await bot.send(head + b'"id":%d,' % count + tail)
                await bot.receive_line()
            return count / (trio.current_time() - t0)
        finally:
            await bot.close()


async def raw_stream(spec: BotSpec, game: str, stream: list[tuple[int, bytes]]) -> float:
    async with trio.open_nursery() as nursery:
        bots = [await start_bot(nursery, spec) for _ in range(2)]
        try:
            for bot in bots:
                await _handshake(bot, game)
            t0 = trio.current_time()
            for seat, line in stream:
                await bots[seat].send(line)
                await bots[seat].receive_line()
            return len(stream) / (trio.current_time() - t0)
        finally:
            for bot in bots:
                await bot.close()


async def referee_rate(spec: BotSpec, game: str, games: int, seed: int) -> tuple[float, int, float]:
    """Timed from the end of the first game (bots started) to the end of the last."""
    gdef = get_game(game)
    config = MatchConfig(game=gdef, rules=build_rules(gdef), games=games, seed=seed,
                         bots=[spec, BotSpec(name=spec.name + "#2", argv=spec.argv, cwd=spec.cwd)])
    finished: list[float] = []
    result = await run_match(config, lambda rec: finished.append(trio.current_time()))
    timed = result.records[1:]
    decisions = sum(r.decisions for r in timed)
    overhead = sum(r.overhead_us * r.decisions for r in timed) / max(1, decisions)
    return decisions / (finished[-1] - finished[0]), decisions, overhead


async def run_bench(spec: BotSpec, game: str = "chicago", seconds: float = 3.0, games: int = 20,
                    seed: int = 1) -> BenchResult:
    single = await raw_single(spec, game, seconds)
    rate, decisions, overhead = await referee_rate(spec, game, games, seed)
    stream = await raw_stream(spec, game, game_stream(game, decisions))
    return BenchResult(raw_single_per_s=single, raw_stream_per_s=stream, referee_per_s=rate,
                       referee_decisions=decisions, overhead_us=overhead)
