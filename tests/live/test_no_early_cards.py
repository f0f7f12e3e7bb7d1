"""No hidden card reaches a spectator early. A real match writes its stream;
the board then reads it as a dashboard would while the games are played
(the stream cut at many moments, with the clock at that moment), and the
replay data it would send a viewer is checked card by card: without a
reveal delay it names only cards the public stream had named by then; with
one, also hidden cards, but only those whose private record is at least the
delay old; once a game is over, every card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from livehelpers import cards_in, play_streamed_match, sample_bot

from referee.live.board import LiveBoard
from referee.live.stream import stream_paths

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")


@pytest.fixture(scope="module")
def streamed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[bytes], list[bytes]]:
    folder = tmp_path_factory.mktemp("live")
    play_streamed_match(folder, [sample_bot("greedy_bot"), sample_bot("random_bot")])
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
            data = board.table_data(gid)
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
            data = board.table_data(gid)
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
        data = board.table_data(gid)
        assert data is not None and data["live"]["over"]
        assert len(_private_items(data)) == sum(map(_on_page, _hidden_records(private, gid)))


def test_a_board_without_a_delay_keeps_no_hidden_record(streamed: tuple[list[bytes], list[bytes]]) -> None:
    board = _board_at(streamed, float("inf"), None)
    board_running = list(board.finished.values())
    assert board_running and all(not g.private for g in board_running)
