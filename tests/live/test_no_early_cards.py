"""No hidden card reaches a spectator early. A real match writes its stream;
the board then reads it as a dashboard would while the games are played
(the stream cut at many moments, with the clock at that moment), and the
replay data it would send a viewer is checked card by card: without a
reveal delay it names only cards the public stream had named by then; with
one, also hidden cards, but only those whose private record is at least the
delay old; once a game is over, every card. The live tables' streams
(`game/ID/moves`, `game/follow/moves`) are checked the same way, row by row
as they are sent, and the check is shown to catch a board that releases
hidden cards at once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from livehelpers import cards_in, drive_streams, play_streamed_match, sample_bot, sse_events
from needs import needs_proc

from referee.live.board import LiveBoard
from referee.live.stream import stream_paths
from referee.live.tables import table_data
from referee.seats.bot_command import resolve_command

pytestmark = needs_proc


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[bytes], list[bytes]]:
    folder = tmp_path_factory.mktemp("live")
    play_streamed_match(folder, [resolve_command("greedy"), sample_bot("random_bot")])
    public, private = stream_paths(folder / "match")
    return public.read_bytes().splitlines(), private.read_bytes().splitlines()


def _t(line: bytes) -> float:
    return float(json.loads(line)["t"])


def _board_at(lines: tuple[list[bytes], list[bytes]], now: float, delay: float | None) -> LiveBoard:
    """The board of a dashboard that read the stream as it stood at `now`."""
    board = LiveBoard(delay, clock=lambda: now)
    public, private = lines
    for line in public:
        if _t(line) <= now:
            board.feed(line)
    for line in private:
        if _t(line) <= now:
            board.feed_private(line)
    return board


def _moments(public: list[bytes], every: int = 1) -> list[float]:
    ts = sorted({_t(x) for x in public})
    return ts[::every] + ts[-1:]


def _on_page(r: dict[str, Any]) -> bool:
    """A private record the replay data carries (a bot's play repeats its public card_played)."""
    return r["type"] == "event" or (r["type"] == "action" and (r["action"]["type"] != "play" or r["source"] != "bot"))


def _private_items(data: dict[str, Any]) -> list[list[Any]]:
    return [item for item in data["items"] if item[0] < 0]


def _known_publicly(public: list[bytes], game_id: int, now: float) -> set[str]:
    seen: set[str] = set()
    for line in public:
        rec = json.loads(line)
        if rec.get("game_id") == game_id and rec["t"] <= now:
            seen |= cards_in(rec)
    return seen


def _hidden_records(private: list[bytes], game_id: int) -> list[dict[str, Any]]:
    return [r for r in map(json.loads, private) if r.get("game_id") == game_id and r["type"] != "run_started"]


def test_without_a_delay_only_public_cards_are_ever_shown(streamed: tuple[list[bytes], list[bytes]]) -> None:
    public, private = streamed
    checked = 0
    for now in _moments(public):
        board = _board_at(streamed, now, None)
        for gid in list(board.running):
            data = table_data(board, gid)
            assert data is not None
            assert not _private_items(data)
            hidden = set().union(*(cards_in(r) for r in _hidden_records(private, gid) if r["t"] <= now))
            early = (cards_in(data["items"]) & hidden) - _known_publicly(public, gid, now)
            assert not early, f"game {gid} at {now}: hidden cards {sorted(early)} shown"
            assert hidden - _known_publicly(public, gid, now), "some cards were hidden at that moment"
            checked += 1
    assert checked >= 5


def test_with_a_delay_a_hidden_card_shows_only_once_that_old(streamed: tuple[list[bytes], list[bytes]]) -> None:
    public, private = streamed
    recs = [json.loads(x) for x in public]
    starts = {r["game_id"]: r["t"] for r in recs if r["type"] == "game_started"}
    length = min(r["t"] - starts[r["game_id"]] for r in recs if r["type"] == "game_finished")
    delay = max(0.002, length / 3)  # several moments of each game fall inside and after the delay
    held = shown = 0
    for now in _moments(public):
        board = _board_at(streamed, now, delay)
        for gid in list(board.running):
            data = table_data(board, gid)
            assert data is not None
            due = [r for r in _hidden_records(private, gid) if r["t"] <= now - delay]
            young = [r for r in _hidden_records(private, gid) if now - delay < r["t"] <= now]
            assert len(_private_items(data)) == sum(map(_on_page, due))
            allowed = _known_publicly(public, gid, now).union(*(cards_in(r) for r in due))
            early = cards_in(data["items"]) - allowed
            assert not early, f"game {gid} at {now}: cards {sorted(early)} shown before {delay:.2f} s"
            held += bool(young)
            shown += bool(due)
    assert held and shown, "the moments cover both cards held back and cards shown"


def test_a_finished_game_shows_every_card(streamed: tuple[list[bytes], list[bytes]]) -> None:
    public, private = streamed
    board = _board_at(streamed, _t(public[-1]), 3600.0)
    assert board.finished and not board.running
    for gid in board.finished:
        data = table_data(board, gid)
        assert data is not None and data["live"]["over"]
        assert len(_private_items(data)) == sum(map(_on_page, _hidden_records(private, gid)))


def test_a_board_without_a_delay_keeps_no_hidden_record(streamed: tuple[list[bytes], list[bytes]]) -> None:
    board = _board_at(streamed, float("inf"), None)
    board_running = list(board.finished.values())
    assert board_running and all(not g.private for g in board_running)


# ------------------------------------------------------------ the live tables' streams


def _delay_for(public: list[bytes]) -> float:
    recs = [json.loads(x) for x in public]
    starts = {r["game_id"]: r["t"] for r in recs if r["type"] == "game_started"}
    length = min(r["t"] - starts[r["game_id"]] for r in recs if r["type"] == "game_finished")
    return max(0.002, length / 3)  # several moments of each game fall inside and after the delay


def _all_moments(streamed: tuple[list[bytes], list[bytes]]) -> list[float]:
    return sorted({_t(x) for x in streamed[0]} | {_t(x) for x in streamed[1]})


def _check_moves(
    streamed: tuple[list[bytes], list[bytes]], seen: list[tuple[float, list[bytes]]], delay: float | None
) -> dict[str, int]:
    """Every row a table stream sent names only cards a spectator could know
    at that moment; raises AssertionError at the first that does not."""
    public, private = streamed
    ended = {r["game_id"]: r["t"] for r in map(json.loads, public) if r["type"] == "game_finished"}
    counts = {"rows": 0, "hidden_before_end": 0, "held": 0, "games": 0}
    current: dict[int, int] = {}  # viewer -> the game its rows are of
    for now, sent in seen:
        for k, body in enumerate(sent):
            for name, data in sse_events(body):
                if name == "start":
                    current[k] = json.loads(data)["game_id"]
                    counts["games"] += 1
                    assert "seed" not in data.decode() or json.loads(data)["seed"] == "not shown during play"
                if name != "moves":
                    continue
                gid = current[k]
                over = ended.get(gid, float("inf")) <= now
                hidden = _hidden_records(private, gid)
                due = (
                    hidden
                    if over and delay is not None
                    else [r for r in hidden if delay is not None and r["t"] <= now - delay]
                )
                allowed = _known_publicly(public, gid, now).union(*(cards_in(r) for r in due))
                for row in json.loads(data):
                    counts["rows"] += 1
                    early = cards_in(row[5]) - allowed
                    assert not early, f"game {gid} at {now}: row {row[3]} showed {sorted(early)} early"
                    if row[4] != -1:
                        assert delay is not None, f"game {gid}: a hidden row without a reveal delay"
                        counts["hidden_before_end"] += not over
                if not over and delay is not None and len(due) < len([r for r in hidden if r["t"] <= now]):
                    counts["held"] += 1
    return counts


async def test_the_table_streams_without_a_delay_carry_the_public_view_only(
    streamed: tuple[list[bytes], list[bytes]], autojump_clock: object
) -> None:
    seen = await drive_streams(streamed, None, ["game/follow/moves", "game/1/moves"], _all_moments(streamed))
    counts = _check_moves(streamed, seen, None)
    assert counts["games"] >= 3 and counts["rows"] > 50, counts  # the follower saw both games, the other one


async def test_the_table_streams_show_a_hidden_card_only_once_that_old(
    streamed: tuple[list[bytes], list[bytes]], autojump_clock: object
) -> None:
    delay = _delay_for(streamed[0])
    seen = await drive_streams(streamed, delay, ["game/follow/moves", "game/2/moves"], _all_moments(streamed))
    counts = _check_moves(streamed, seen, delay)
    assert counts["hidden_before_end"] and counts["held"], counts  # cards were shown by the delay, others held


async def test_the_check_catches_a_board_that_shows_hidden_cards_at_once(
    streamed: tuple[list[bytes], list[bytes]], autojump_clock: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LiveBoard, "due", lambda self, g, start, now=None: len(g.private))
    delay = _delay_for(streamed[0])
    seen = await drive_streams(streamed, delay, ["game/follow/moves"], _all_moments(streamed))
    with pytest.raises(AssertionError, match="early"):
        _check_moves(streamed, seen, delay)
