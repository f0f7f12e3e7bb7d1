"""A finished game's page shows every card (its log) only once it and every
game of its deal set are over: its siblings are dealt the same cards. And no
log is served for a game the board has not seen finish, however early its
log file exists.

A real match (two bots, one deal set of two games, played one after the
other: the moment game 1 is over, game 2 is being played with its cards) and
a real tournament (three bots, two deal sets of six games); the dashboard's
source is asked, moment by moment of the match's stream, for every game's
page and its `over` data, with every log complete on disk from the start."""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio
from livehelpers import play_streamed_match, sample_bot, stamp
from needs import needs_proc
from tournament_runs import play, write_config

from referee.live.board import LiveBoard
from referee.live.follow import DbStandings
from referee.live.source import LiveSource
from referee.live.stream import stream_paths
from referee.play.runner import log_path_for
from referee.seats.bot_command import resolve_command
from referee.tournament.config import load_config
from referee.tournament.executors import Placement
from referee.tournament.schedule import schedule_for

pytestmark = needs_proc


def _page_data(page: bytes) -> dict[str, Any]:
    html = gzip.decompress(page).decode()
    text = html.split('id="replay-data">', 1)[1].split("</script>", 1)[0]
    return dict(json.loads(text.replace("<\\/", "</")))


def _hidden_items(data: dict[str, Any]) -> int:
    return sum(1 for item in data["items"] if item[0] < 0)  # an item seen by one seat only


async def test_a_finished_game_shows_its_cards_only_once_its_deal_set_is_over(tmp_path: Path) -> None:
    await trio.to_thread.run_sync(
        play_streamed_match, tmp_path, [resolve_command("greedy"), sample_bot("random_bot")], 2, 9
    )
    public, _private = stream_paths(tmp_path / "match")
    lines = public.read_bytes().splitlines()
    records = [json.loads(x) for x in lines]
    started = {r["game_id"]: r["t"] for r in records if r["type"] == "game_started"}
    ended = {r["game_id"]: r["t"] for r in records if r["type"] == "game_finished"}
    assert sorted(ended) == [1, 2] and ended[1] <= started[2]  # one after the other: game 2 plays game 1's cards
    logs = {gid: log_path_for(tmp_path, gid) for gid in (1, 2)}
    assert all(p is not None and p.is_file() for p in logs.values())

    board = LiveBoard(None)
    source = LiveSource(board=board, title="test", log_of=lambda gid: log_path_for(tmp_path, gid))
    moments = sorted({stamp(x) for x in lines})
    critical = {started[2], ended[1], ended[2]}
    checked: dict[str, int] = {"before the set is over": 0, "game 2 before it started": 0, "after": 0}
    fed = 0
    for m in [t for k, t in enumerate(moments) if k % 7 == 0 or t in critical] + [moments[-1]]:
        while fed < len(lines) and stamp(lines[fed]) <= m:
            board.feed(lines[fed])
            fed += 1
        board.bump()
        settled = m >= ended[2]
        for gid in (1, 2, 3):
            page = await source.page(gid)
            final = await source.final_data(gid)
            if board.game(gid) is None:  # not yet on the board (its log is complete on disk all the same)
                assert page is None and final is None, (gid, m)
                checked["game 2 before it started"] += gid == 2
                continue
            assert page is not None
            data = _page_data(page)
            if settled:
                assert _hidden_items(data) > 0 and "live" not in data  # the log: every card
                assert final is not None and json.loads(final) == data
                checked["after"] += 1
            else:
                assert _hidden_items(data) == 0 and "live" in data, (gid, m)  # the board's public view
                assert final is None, (gid, m)
                checked["before the set is over"] += gid == 1 and m >= ended[1]
    assert all(checked.values()), checked


@pytest.mark.slow
async def test_a_tournament_game_shows_its_cards_once_the_database_has_its_whole_deal_set(tmp_path: Path) -> None:
    marker = f"settled-{uuid.uuid4().hex}"
    t = load_config(write_config(tmp_path, marker, ["a", "b", "c"], deal_sets=2))
    schedule = schedule_for(t)
    set_of = {g.game_id: g.deal_set for g in schedule}
    per_set = len(schedule) // 2
    db = tmp_path / "t.db"
    seen: list[tuple[set[int], dict[int, bool]]] = []

    def on_game(_store: Any, _runner: Any) -> Any:
        def look(_row: Any) -> None:  # a game's row was just committed
            standings = DbStandings(db)
            standings.refresh()
            seen.append((set(standings.deal_sets), {gid: standings.settled(gid) for gid in set_of}))

        return look

    outcome, _ = await play(t, db, Placement(), 3, on_game)
    assert outcome.status == "completed" and len(seen) == len(schedule) == 2 * per_set
    waiting = 0
    for recorded, settled in seen:
        done = {d: sum(1 for g in recorded if set_of[g] == d) for d in (0, 1)}
        for gid in set_of:
            assert settled[gid] == (gid in recorded and done[set_of[gid]] == per_set), (gid, sorted(recorded))
        waiting += sum(1 for gid in recorded if not settled[gid])
    assert waiting > 0 and all(
        seen[-1][1].values()
    )  # games held back while their siblings played; all shown at the end
