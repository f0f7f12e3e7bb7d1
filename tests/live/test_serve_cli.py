"""`serve` beside a real tournament, both as the real commands in
subprocesses: while `tournament tournaments/sample.toml` runs, `serve` on its
database prints an http://127.0.0.1:PORT/TOKEN/ URL, good once, its page and data answer,
list the bots, and follow the games as they finish; it keeps answering once
the tournament is over, and Ctrl-C ends it with one line. Bounded: every
wait has a generous limit, and both processes are stopped at the end."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from livehelpers import ROOT, cli, get, get_json, stop, wait_for_url
from needs import needs_proc
from timing import scaled, wait_until
from webclient import enter

pytestmark = needs_proc
LIMIT_S = scaled(240)


def _sandbox_works() -> bool:
    from referee.seats.sandbox import require_sandbox

    try:
        require_sandbox()
    except Exception:
        return False
    return shutil.which("node") is not None


@pytest.mark.skipif(not _sandbox_works(), reason="tournaments/sample.toml needs bubblewrap and node")
def test_serve_follows_the_sample_tournament_while_it_runs(tmp_path: Path) -> None:
    db = tmp_path / "sample.db"
    tour = cli("tournament", str(ROOT / "tournaments" / "sample.toml"), "--db", str(db))
    serve = None
    said: list[str] = []
    try:
        deadline = time.monotonic() + LIMIT_S
        while not db.exists() and time.monotonic() < deadline and tour.poll() is None:
            time.sleep(0.05)
        serve = cli("serve", str(db), "--no-open", "--port", "0")
        first = wait_for_url(serve, seen=said)
        url = enter(first)
        status, page = get(url)
        assert status == 200 and b"Standings" in page and b"live.js" in page
        finished: list[int] = []
        bots: list[str] = []
        while time.monotonic() < deadline:
            s = get_json(url + "summary")
            bots = s["progress"].get("bots") or []
            if not finished or s["progress"]["finished"] != finished[-1]:
                finished.append(s["progress"]["finished"])
            if tour.poll() is not None and s["run"].get("status"):
                break
            time.sleep(0.3)
        assert tour.wait(LIMIT_S) == 0, tour.stderr.read() if tour.stderr else ""
        assert sorted(bots) == ["first-legal", "greedy", "js-heuristic", "random"]
        assert len(finished) >= 3 and finished == sorted(finished), finished  # it followed the games
        end = time.monotonic() + scaled(30)  # the last rows are committed a moment after the stream tells of them
        done = get_json(url + "summary")
        while done["progress"]["finished"] < 36 and time.monotonic() < end:
            time.sleep(0.2)
            done = get_json(url + "summary")
        assert done["progress"]["finished"] == done["progress"]["scheduled"] == 36
        assert done["run"]["status"] == "completed" and not done["running"]
        assert len(done["standings"]["standings"]) == 4
        assert get(url + "nope")[0] == 404 and get(first)[0] == 200  # the browser that came in first: its pages
        assert get(url.rstrip("/") + "/wrong-token/")[0] == 404
    finally:
        stop(tour)
        if serve is not None:
            code = stop(serve)
            wait_until(lambda: "interrupted" in "".join(said), 10)  # the reader threads take the last lines
            assert code == 130 and "Traceback" not in "".join(said) and "interrupted" in "".join(said)


def test_serve_refuses_a_missing_database_in_one_line(tmp_path: Path) -> None:
    proc = cli("serve", str(tmp_path / "none.db"), "--no-open")
    _out, err = proc.communicate(timeout=scaled(60))
    assert proc.returncode == 2
    assert "no such results database" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_match_serve_shows_the_match_while_it_plays(tmp_path: Path) -> None:
    slow = ROOT / "tests" / "bots" / "reader_delay.py"
    logs = tmp_path / "logs"
    proc = cli(
        "match",
        f"{slow} live-match-slow delay=0.05 requests=1000000",
        str(ROOT / "sample_bots" / "python" / "random_bot.py"),
        "-n",
        "2",
        "--rule",
        "target_score=15",
        "--log-dir",
        str(logs),
        "--serve",
        "--no-open",
    )
    said: list[str] = []
    try:
        url = enter(wait_for_url(proc, seen=said))
        summary = get_json(url + "summary")
        assert summary["run"]["source"] == "match" and summary["run"]["scheduled"] == 2
        assert sorted(summary["run"]["bots"]) == ["random_bot", "reader_delay"]
        assert proc.wait(LIMIT_S) == 0, "".join(said)
    finally:
        stop(proc)
    assert (logs / "match.live.ndjson").is_file() and (logs / "match.live-private.ndjson").is_file()
    assert sorted(p.name for p in logs.glob("game-*.jsonl")) == ["game-00001.jsonl", "game-00002.jsonl"]
