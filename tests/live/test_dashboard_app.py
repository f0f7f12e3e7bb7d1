"""The dashboard's routes, served by the real server on a stream a real match
wrote: the summary counts the match, the public stream comes back as
server-sent events numbered from the first line, a game's page and the live
table's frame are the same with and without gzip, a finished game's moves
stream ends with `over`, static files may be kept by the browser while game
state may not, and anything else is a plain 404 (to the browser that came
in through the printed URL; to any other, a 403)."""

from __future__ import annotations

import gzip
import json
import urllib.request
from pathlib import Path

import trio
from livehelpers import get, play_streamed_match, sample_bot, sse_events
from needs import needs_proc
from timing import scaled
from webclient import enter, opener

from referee.live.serve import open_dashboard, stream_source
from referee.live.tables import DATA_MARK
from referee.seats.bot_command import resolve_command

pytestmark = needs_proc


def _first_bytes(url: str, n: int) -> bytes:
    with opener.open(url, timeout=scaled(30)) as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        return resp.read(n)


def _page(url: str, gzipped: bool) -> bytes:
    req = urllib.request.Request(url, headers={"accept-encoding": "gzip"} if gzipped else {})
    with opener.open(req, timeout=scaled(30)) as resp:
        body = resp.read()
        return gzip.decompress(body) if resp.headers.get("content-encoding") == "gzip" else body


def _cache_control(url: str) -> str:
    with opener.open(url, timeout=scaled(30)) as resp:
        return str(resp.headers["cache-control"])


def _whole_stream(url: str) -> bytes:
    with opener.open(url, timeout=scaled(30)) as resp:
        return resp.read()  # the server ends it


async def test_the_routes_of_a_served_stream(tmp_path: Path) -> None:
    await trio.to_thread.run_sync(play_streamed_match, tmp_path, [resolve_command("greedy"), sample_bot("random_bot")])
    source, public, private = stream_source(tmp_path / "match.live.ndjson", None)
    urls: list[str] = []
    async with open_dashboard(source, public, private, open_browser=False, on_url=urls.append) as served:
        assert served.url.startswith("http://127.0.0.1:") and urls == [served.url]
        url = await trio.to_thread.run_sync(enter, served.url)
        with trio.fail_after(scaled(30)):
            while source.board.finished_this_run < 2:
                await trio.sleep(0.05)
        summary = json.loads((await trio.to_thread.run_sync(get, url + "summary"))[1])
        assert summary["progress"]["finished"] == 2 and summary["run"]["source"] == "match"
        assert sorted(r["bot"] for r in summary["tally"]) == ["greedy", "random"]
        assert sum(r["games"] for r in summary["tally"]) == 4
        head = await trio.to_thread.run_sync(_first_bytes, url + "events", 200)
        first = public.read_bytes().splitlines()[0]
        assert head.startswith(b"id: 1\ndata: " + first[:150])
        plain = await trio.to_thread.run_sync(_page, url + "game/1/page", False)
        zipped = await trio.to_thread.run_sync(_page, url + "game/1/page", True)
        assert plain == zipped and b"replay-data" in plain
        shell = await trio.to_thread.run_sync(_page, url + "assets/replay-shell.html", False)
        assert shell == await trio.to_thread.run_sync(_page, url + "assets/replay-shell.html", True)
        assert shell.count(DATA_MARK.encode()) == 1 and b"replay-data" in shell
        assert "max-age" in await trio.to_thread.run_sync(_cache_control, url + "assets/live.js")
        assert "no-store" in await trio.to_thread.run_sync(_cache_control, url + "summary")
        events = sse_events(await trio.to_thread.run_sync(_whole_stream, url + "game/1/moves"))
        names = [name for name, _ in events]
        assert names[0] == "start" and names[-1] == "over" and "moves" in names
        over = json.loads(events[-1][1])
        in_page = plain.split(b'id="replay-data">', 1)[1].split(b"</script>", 1)[0].replace(b"<\\/", b"</")
        assert over["game_id"] == 1 and over["data"] == json.loads(in_page)  # the log's data, as its page has it
        assert over["data"]["result"] is not None and any(item[0] < 0 for item in over["data"]["items"])
        rows = [row for name, data in events if name == "moves" for row in json.loads(data)]
        assert rows[-1][3] == "@result" and all(row[4] == -1 for row in rows)  # no reveal delay: public rows only
        assert [n for n, _ in sse_events(await trio.to_thread.run_sync(_whole_stream, url + "game/99/moves"))] == [
            "gone"
        ]
        for route in ("game/99/page", "game/x", "game/1/nope", "nope", "not-the-token/summary"):
            assert (await trio.to_thread.run_sync(get, url + route))[0] == 404, route
