"""The live stream a real match writes: the public file carries exactly the
events the log addresses to everyone, in order, and nothing else of the
game; the private file (mode 0600) carries the rest; the two together put
every event back in the log's order; failures reach the public file as a
reason code only."""

from __future__ import annotations

import stat
from pathlib import Path

from livehelpers import misbehaving_bot, play_streamed_match, sample_bot, stream_lines
from logfiles import read_json_log
from needs import needs_proc

from referee.live.stream import STREAM_VERSION, stream_paths
from referee.seats.bot_command import resolve_command

pytestmark = needs_proc


def _log_events(path: Path) -> list[tuple[int, dict]]:
    _, records = read_json_log(path)
    return [(rec["to"], rec["event"]) for _, rec in records if rec["type"] == "event"]


def test_public_and_private_streams_split_the_log_by_audience(tmp_path: Path) -> None:
    records = play_streamed_match(tmp_path, [resolve_command("greedy"), sample_bot("random_bot")])
    public, private = stream_lines(tmp_path)
    assert public[0]["type"] == "run_started" and public[0]["v"] == STREAM_VERSION
    assert public[-1] == {"type": "run_ended", "t": public[-1]["t"], "status": "completed"}
    assert stat.S_IMODE(stream_paths(tmp_path / "match")[1].stat().st_mode) == 0o600
    for rec in records:
        gid = rec.game_id
        log = _log_events(Path(rec.log_path))
        mine = [r for r in public if r.get("game_id") == gid]
        secret = [r for r in private if r.get("game_id") == gid]
        assert [r["i"] for r in mine] == list(range(len(mine)))  # numbered without gaps
        assert mine[0]["type"] == "game_started" and mine[0]["seats"] == rec.seat_names
        # Public: exactly the log's events for everyone, in order, and no hidden one.
        assert [r["event"] for r in mine if r["type"] == "event"] == [e for to, e in log if to == -1]
        assert {r["type"] for r in mine} <= {"game_started", "event", "decision", "failure", "game_finished"}
        assert not any("to" in r or "action" in r for r in mine)
        assert sum(r["type"] == "decision" for r in mine) == rec.decisions
        end = mine[-1]
        assert end["type"] == "game_finished" and end["scores"] == rec.scores and end["winner"] == rec.winner
        # Private: every other event, with its audience, and the seats' actions.
        hidden = [(to, e) for to, e in log if to != -1]
        assert hidden, "a Chicago game deals hidden hands"
        assert [(r["to"], r["event"]) for r in secret if r["type"] == "event"] == hidden
        assert sum(r["type"] == "action" for r in secret) == rec.decisions
        # Together, ordered by their keys, they are the log's event sequence.
        keyed = [((r["i"], 1, 0), (-1, r["event"])) for r in mine if r["type"] == "event"]
        keyed += [((r["at"], 0, r["j"]), (r["to"], r["event"])) for r in secret if r["type"] == "event"]
        assert [x for _, x in sorted(keyed, key=lambda kv: kv[0])] == log


def test_a_failure_reaches_the_public_stream_as_its_reason_only(tmp_path: Path) -> None:
    # The illegal bot plays a card it does not hold; the message names the cards it does hold.
    records = play_streamed_match(tmp_path, [misbehaving_bot("illegal"), sample_bot("random_bot")], games=1)
    failures = [f for rec in records for f in rec.failures]
    assert failures and failures[0].reason == "illegal_action", failures
    public, _ = stream_lines(tmp_path)
    told = [r for r in public if r["type"] == "failure"]
    assert [(r["seat"], r["reason"]) for r in told] == [(f.seat, f.reason) for f in failures]
    assert all(set(r) == {"type", "t", "game_id", "seat", "reason", "i"} for r in told)
    assert failures[0].message not in (tmp_path / "match.live.ndjson").read_text()


def test_stream_files_sit_beside_the_database() -> None:
    public, private = stream_paths(Path("results/x/tournament.db"))
    assert public == Path("results/x/tournament.live.ndjson")
    assert private == Path("results/x/tournament.live-private.ndjson")
