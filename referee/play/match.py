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
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import trio

from referee.play.game_spec import GameRecord, GameSpec
from referee.play.handle import BotHandle
from referee.play.in_order import InOrder, request_id_base
from referee.play.match_config import MatchConfig
from referee.play.runner import log_path_for
from referee.play.seeding import derive_seed
from referee.play.session import discard_logs, play_game
from referee.play.summary import MatchResult, summarize
from referee.seats.bot_command import BotSpec
from referee.seats.sandbox import describe

__all__ = ["MatchConfig", "MatchResult", "play_one", "run_match", "seat_rotations", "summarize", "unique_names"]


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
                    for h in seats:
                        await h.fresh_for(base)
                    record = await play_one(config, game_id, k, seed, seats, base)
                    for h in seats:
                        h.last_id = base + record.requests
                    results.finished(k, record)
        finally:
            with trio.CancelScope(shield=True):
                for h in handles:
                    await h.close()

    async with trio.open_nursery() as games:
        for _ in range(min(config.concurrency, config.n_sets)):
            games.start_soon(slot)
    for rec in results.unemitted():  # finished after the SPRT stop: dropped, logs too
        discard_logs(rec.log_path, len(rec.seat_names))
    result = summarize(config, results.emitted)
    result.stopped = results.stopped
    return result


async def play_one(
    config: MatchConfig, game_id: int, deal_set: int, seed: int, seats: list[BotHandle], id_base: int | None = None
) -> GameRecord:
    """One game of the match on its bot processes (a game cut short leaves no log behind)."""
    spec = GameSpec(
        game=config.game,
        rules=config.rules,
        n_players=len(seats),
        seed=seed,
        game_id=game_id,
        time_control=config.time_control,
        policy=config.policy,
        deals=config.deals,
        match_seed=config.seed,
        deal_set=deal_set,
        request_id_base=request_id_base(game_id) if id_base is None else id_base,
        isolation=describe(config.sandbox),
        start=config.start,
    )
    names = [h.spec.name for h in seats]
    watch = config.watch_games(spec, names) if config.watch_games is not None else None
    return await play_game(spec, seats, names, log=log_path_for(config.log_dir, game_id), watch=watch)
