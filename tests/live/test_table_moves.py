"""The live table's rows, from a real match's stream: put together as the
browser does (live.js's own `compact`, run by node), they give exactly the
page data the server would make at that moment (with and without a reveal
delay); however many viewers watch a game, each row is encoded once; and
many dashboards share one summary per beat."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from livehelpers import ROOT, drive_streams, play_streamed_match, sample_bot, sse_events, stamp
from needs import needs_proc
from timing import scaled

import referee.live.tables as tables
from referee.live.app import LOG_WAIT_S
from referee.live.board import LiveBoard
from referee.live.stream import stream_paths
from referee.live.tables import table_data
from referee.seats.bot_command import resolve_command

pytestmark = needs_proc


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[bytes], list[bytes]]:
    folder = tmp_path_factory.mktemp("live-moves")
    play_streamed_match(folder, [resolve_command("greedy"), sample_bot("random_bot")], seed=8)
    public, private = stream_paths(folder / "match")
    return public.read_bytes().splitlines(), private.read_bytes().splitlines()


def _compact_in_node(cases: list[list[list[Any]]]) -> list[dict[str, Any]]:
    """live.js's `compact` applied to each list of rows, by node."""
    source = (ROOT / "referee" / "assets" / "live.js").read_text()
    match = re.search(r"^function compact\(rows\) \{.*?^\}", source, re.S | re.M)
    assert match, "live.js has no function compact(rows)"
    script = (
        match.group(0) + "\nvar cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        "process.stdout.write(JSON.stringify(cases.map(compact)));\n"
    )
    out = subprocess.run(
        ["node", "-e", script], input=json.dumps(cases), capture_output=True, text=True, timeout=scaled(60), check=True
    )
    return json.loads(out.stdout)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
@pytest.mark.parametrize("delay", [None, "third"])
def test_the_rows_make_the_page_data_the_server_would(
    streamed: tuple[list[bytes], list[bytes]], delay: str | None
) -> None:
    public, private = streamed
    times = sorted({stamp(x) for x in public})
    recs = [json.loads(x) for x in public]
    length = max(r["t"] for r in recs) - min(r["t"] for r in recs)
    reveal = None if delay is None else length / 6
    now = [times[0]]
    board = LiveBoard(reveal, clock=lambda: now[0])
    stamped = sorted([(stamp(x), 0, x) for x in public] + [(stamp(x), 1, x) for x in private])
    cases: list[list[list[Any]]] = []
    expected: list[dict[str, Any]] = []
    n = 0
    for m in times:  # one board fed moment by moment, as a viewer's sees it (every moment: enough cases however
        # coarse the clock that stamped the stream)
        now[0] = m
        while n < len(stamped) and stamped[n][0] <= m:
            (board.feed_private if stamped[n][1] else board.feed)(stamped[n][2])
            n += 1
        for gid in [*board.running, *board.finished]:
            g = board.game(gid)
            assert g is not None
            rows = [json.loads(r) for r in tables.table_rows(board, g)]
            cases.append(rows)
            expected.append(table_data(board, gid) or {})
    got = _compact_in_node(cases)
    assert len(got) == len(expected) > 20
    hidden = 0
    for mine, theirs in zip(got, expected):
        assert mine["types"] == theirs["types"] and mine["items"] == theirs["items"]
        hidden += sum(1 for item in mine["items"] if item[0] < 0)
    assert (hidden > 0) == (reveal is not None)


async def test_every_viewer_of_a_game_sends_the_same_rows_encoded_once(
    streamed: tuple[list[bytes], list[bytes]], autojump_clock: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    row = tables._row

    def counted(*args: Any) -> bytes | None:
        made.append(1)
        return row(*args)

    monkeypatch.setattr(tables, "_row", counted)
    moments = sorted({stamp(x) for x in streamed[0]})
    seen_one = await drive_streams(streamed, None, ["game/1/moves"], moments)
    once = len(made)
    made.clear()
    seen_four = await drive_streams(streamed, None, ["game/1/moves"] * 4, moments)
    assert once > 20 and len(made) == once  # four viewers: no more encoding than one
    one = b"".join(sent[0] for _, sent in seen_one)
    assert [b"".join(sent[k] for _, sent in seen_four) for k in range(4)] == [one] * 4
    names = [name for name, _ in sse_events(one)]
    assert names[0] == "start" and names[-1] == "over" and names.count("moves") >= 3


async def test_many_dashboards_share_one_summary_a_beat(
    streamed: tuple[list[bytes], list[bytes]], autojump_clock: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    summary = LiveBoard.summary

    def counted(self: LiveBoard, now: float | None = None) -> dict[str, Any]:
        made.append(1)
        return summary(self, now)

    monkeypatch.setattr(LiveBoard, "summary", counted)
    moments = sorted({stamp(x) for x in streamed[0]})[::5]
    seen = await drive_streams(streamed, None, ["summary/events"] * 6, moments)
    per_beat = [[len(sse_events(body)) for body in sent] for _, sent in seen]
    assert all(n <= 1 for beat in per_beat for n in beat), "a viewer got two summaries in one beat"
    assert sum(n for beat in per_beat for n in beat) >= 6 * (len(moments) - 1)
    assert len(made) <= len(moments) + 1  # one summary made a beat, shared by the six


async def test_over_waits_for_the_log_a_tournament_commits_a_moment_later(
    streamed: tuple[list[bytes], list[bytes]], autojump_clock: object, tmp_path: Path
) -> None:
    """A tournament's logs are known once the database has the game: `over` (after
    which the table shows the log, every card) waits for it, a bounded while."""
    first_end = next(stamp(x) for x in streamed[0] if json.loads(x)["type"] == "game_finished")
    moments = sorted({stamp(x) for x in streamed[0]})
    moments += [moments[-1]] * int(LOG_WAIT_S + 3)  # beats after the last line
    log = tmp_path / "game-1.jsonl"
    log.write_text("{}\n")

    async def over_after(log_of: Any) -> int:
        seen = await drive_streams(streamed, None, ["game/1/moves"], moments, db=object(), log_of=log_of)
        ended = next(k for k, (m, _) in enumerate(seen) if m >= first_end)
        over = next(k for k, (_, sent) in enumerate(seen) if any(n == "over" for n, _ in sse_events(sent[0])))
        return over - ended

    assert await over_after(lambda gid: log) <= 1  # known at once: no wait
    assert LOG_WAIT_S - 1 <= await over_after(lambda gid: None) <= LOG_WAIT_S + 2  # never known: a bounded wait
