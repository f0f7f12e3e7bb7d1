"""`chicago-referee bench`: the referee's speed against the physical limit.

Both figures come from one run with the same trivial bot: (1) a raw Trio
pipe round trip, a pre-encoded real request line written to the bot and its
reply read back, as fast as possible; (2) whole games through the referee
(engine, views, clocks, validation, logging off), timed after the first game
so that neither figure includes starting the bot processes. The ratio is what to quote:
these machines are shared and noisy, absolute rates are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import trio

from protocol.messages import Clock, Hello, Request
from referee.bot_process import BotSpec, start_bot
from referee.games import get_game
from referee.games.base import PUBLIC
from referee.games.rules import build_rules
from referee.match import MatchConfig, run_match
from referee.play import new_game


@dataclass(frozen=True)
class BenchResult:
    raw_per_s: float
    referee_per_s: float
    referee_decisions: int
    overhead_us: float

    @property
    def ratio(self) -> float:
        return self.referee_per_s / self.raw_per_s if self.raw_per_s else 0.0


def _sample_request(game: str) -> bytes:
    state = new_game(game, 2, 1)
    seat = state.current_player()
    events = [ev for aud, ev in state.events if aud in (PUBLIC, seat)]
    req = Request(id=1, game_id=1, events=events, view=state.view(seat), legal=list(state.legal_actions()),
                  clock=Clock(decision_ms=1000))
    return msgspec.json.encode(req)


async def raw_round_trips(spec: BotSpec, game: str, seconds: float) -> float:
    template = _sample_request(game)
    head, tail = template.split(b'"id":1,', 1)
    async with trio.open_nursery() as nursery:
        bot = await start_bot(nursery, spec)
        try:
            await bot.send(msgspec.json.encode(Hello(referee="bench", games=[game])) + b"\n")
            await bot.receive_line()
            count = 0
            t0 = trio.current_time()
            while trio.current_time() - t0 < seconds:
                count += 1
                await bot.send(head + b'"id":%d,' % count + tail + b"\n")
                await bot.receive_line()
            return count / (trio.current_time() - t0)
        finally:
            await bot.close()


async def referee_rate(spec: BotSpec, game: str, games: int, seed: int) -> tuple[float, int, float]:
    """Steady state, like the raw figure: timed from the end of the first game
    (bots started and handshaken) to the end of the last."""
    gdef = get_game(game)
    config = MatchConfig(game=gdef, rules=build_rules(gdef), games=games, seed=seed,
                         bots=[spec, BotSpec(name=spec.name + "#2", argv=spec.argv, cwd=spec.cwd)])
    finished: list[float] = []
    result = await run_match(config, lambda rec: finished.append(trio.current_time()))
    timed = result.records[1:]
    decisions = sum(r.decisions for r in timed)
    overhead = sum(r.overhead_us * r.decisions for r in timed) / max(1, decisions)
    return decisions / (finished[-1] - finished[0]), decisions, overhead


async def run_bench(spec: BotSpec, game: str = "chicago", seconds: float = 3.0, games: int = 20, seed: int = 1) -> BenchResult:
    raw = await raw_round_trips(spec, game, seconds)
    rate, decisions, overhead = await referee_rate(spec, game, games, seed)
    return BenchResult(raw_per_s=raw, referee_per_s=rate, referee_decisions=decisions, overhead_us=overhead)
