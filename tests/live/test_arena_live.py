"""The arena's games on its live dashboard: fed in process, no card of a
unit's games shown until the reveal delay or the unit's end, and nothing
that grows with the games.

Real games of real bot processes, watched through `ArenaLive` as the arena's
executor watches them; the arena's word on whether the unit still plays is a
set the test holds."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import trio
from livehelpers import GAME, RULES, cards_in, sample_bot
from needs import needs_proc
from timing import scaled

from protocol.messages import TimeControl
from referee.live.arena_feed import FINAL_BASE, ArenaLive, live_game_id, unit_of
from referee.live.tables import table_data
from referee.play.game_spec import GameSpec
from referee.play.match import MatchConfig, run_match
from referee.seats.bot_command import resolve_command

pytestmark = needs_proc
UNIT = 7


def _play_unit(live: ArenaLive, games: int = 2, final: bool = False) -> None:
    """A match of `games` games (one deal set under each rotation), watched as
    unit `UNIT`'s games, or as the final's."""

    def watch(spec: GameSpec, names: list[str]) -> Any:
        return live.watch_final(spec, names) if final else live.watch_games(replace(spec, deal_set=UNIT), names)

    config = MatchConfig(
        game=GAME,
        rules=RULES,
        bots=[resolve_command("greedy"), sample_bot("random_bot")],
        games=games,
        seed=11,
        time_control=TimeControl(decision_ms=2000, startup_ms=10000),
        watch_games=watch,
    )

    async def bounded() -> None:
        with trio.fail_after(scaled(120)):
            await run_match(config, lambda _record: None)

    trio.run(bounded)


def _hidden_items(data: dict[str, Any]) -> list[Any]:
    return [item for item in data["items"] if item[0] < 0]  # seen by one seat only


def test_a_units_cards_stay_hidden_until_it_is_over_then_all_show() -> None:
    running = {UNIT}
    live = ArenaLive("arena-test", GAME.name, reveal_delay=3600.0, unit_running=lambda u: u in running)
    _play_unit(live)
    board = live.board
    ids = [live_game_id(UNIT, 0), live_game_id(UNIT, 1)]
    assert ids == [71, 72] and all(unit_of(i) == UNIT for i in ids)
    assert sorted(board.finished) == ids and not board.running
    assert board.info["source"] == "arena" and board.info["name"] == "arena-test"
    assert board.finished_ids == {}  # the arena's rule decides: no per-game record that grows for weeks

    played_public: dict[int, set[str]] = {}
    for gid in ids:
        data = table_data(board, gid)
        assert data is not None and data["live"]["over"]
        assert data["live"]["hidden_shown"] == 0 and data["live"]["hidden_held"] > 0
        assert _hidden_items(data) == []
        played_public[gid] = cards_in(data["items"])

    running.clear()  # the unit is over: its siblings played the same cards, and none plays any more
    for gid in ids:
        data = table_data(board, gid)
        assert data is not None
        assert data["live"]["hidden_held"] == 0 and data["live"]["hidden_shown"] > 0
        hidden = _hidden_items(data)
        assert hidden, "a finished unit shows every seat's cards"
        assert cards_in(hidden) - played_public[gid], "the hands show cards that were never played in public"


def test_without_a_reveal_delay_no_hidden_card_is_even_kept() -> None:
    live = ArenaLive("arena-test", GAME.name, reveal_delay=None, unit_running=lambda _u: False)
    _play_unit(live)
    assert len(live.board.finished) == 2
    for g in live.board.finished.values():
        assert g.private == []
        data = table_data(live.board, g.game_id)
        assert data is not None and _hidden_items(data) == [] and data["live"]["hidden_held"] == 0


def test_a_closed_feed_leaves_no_game_running() -> None:
    live = ArenaLive("arena-test", GAME.name, reveal_delay=None)

    async def start_then_stop() -> None:
        config = MatchConfig(
            game=GAME,
            rules=RULES,
            bots=[resolve_command("greedy"), sample_bot("random_bot")],
            games=1,
            seed=3,
            time_control=TimeControl(decision_ms=2000, startup_ms=10000),
            watch_games=lambda spec, names: live.watch_games(replace(spec, deal_set=UNIT), names),
        )
        with trio.move_on_after(scaled(30)):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run_match, config, lambda _record: None)
                while not live.board.running:
                    await trio.sleep(0.01)
                nursery.cancel_scope.cancel()  # the server stops with a game under way
        live.close()

    trio.run(start_then_stop)
    assert live.board.running == {} and live.board.info.get("status") == "stopped"


def test_the_finals_games_show_their_cards_once_the_final_is_over() -> None:
    final_running = [True]
    live = ArenaLive("arena-test", GAME.name, reveal_delay=3600.0, final_running=lambda: final_running[0])
    _play_unit(live, final=True)
    ids = sorted(live.board.finished)
    assert ids == [FINAL_BASE + 1, FINAL_BASE + 2]  # apart from every unit's games
    assert all(_hidden_items(table_data(live.board, gid) or {"items": []}) == [] for gid in ids)
    final_running[0] = False
    for gid in ids:
        data = table_data(live.board, gid)
        assert data is not None and _hidden_items(data) and data["live"]["hidden_held"] == 0
