"""A game log as ONE self-contained HTML page that replays the game.

`write_html(log_path, out_path)` reads a log (see `referee.logs.gamelog`) and writes
a page with inline CSS and JS only (no network, no external scripts or fonts;
a served page links the same two files instead, `render_html(data, assets)`):
the table with every seat's cards, the current trick, the scores, a status
line for the current action, step controls with keyboard shortcuts, a
per-seat view (a seat sees only events addressed to it or to everyone), a
list of deals to jump to and an inline-SVG chart of the scores per deal.

The page embeds a compact form of the log, not the JSONL: no messages, no
timings, no deck orders; only events, the actions a viewer needs (exchange
discards, the referee's default actions; not the bots' plays, which repeat
`card_played`), failures and the result. Each record is an array
`[type index, field values...]` (public) or `[~type index, seat, field
values...]` (seen by that seat only) against a table of type names with their
field names; an action is the pseudo type `@action:<its type>` whose audience
is the acting seat; every list of cards is one string `"~AsKd9h"`. A game
started from a position begins with the table at its start (`start_html.py`). A typical
Chicago game to 52 gives a 50-70 kB page (about 45 kB of it the page itself);
a 500-deal game (the `max_deals` cap, 4 players) about 0.7 MB. The page builds
its step list in one light pass and renders a step by replaying its deal, so
it opens at once and jumps anywhere quickly.

Seat views follow the audiences: seat s sees the events addressed to everyone
or to s, its own discards (its actions), and another seat's cards only once
they are shown (`hand_revealed`, a taken open card); the rest are card backs.

    python -m referee.replay.html game-00001.jsonl replay.html
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from referee.games import GAMES
from referee.logs.gamelog import read_log
from referee.logs.records import ActionRecord, EventRecord, FailureRecord, LogHeader, LogResult, Record
from referee.replay.start_html import start_records
from referee.visible import visible

DATA_VERSION = 1
CARD_LIST_MARK = "~"
_ASSETS = Path(__file__).resolve().parents[1] / "assets"  # the page's HTML, CSS and JavaScript
_CARD = re.compile(r"^[2-9TJQKA][shdc]$")

# Pseudo record types (a leading '@' never clashes with an event type).
ACTION, FAILURE, RESULT = "@action", "@failure", "@result"
RESULT_FIELDS = ("winner", "scores", "placements", "reason", "forfeited")


def pack_cards(value: Any) -> Any:
    """Lists of card strings become one string `~AsKd`; a string that starts with
    `~` gets one more (`~~...`) so the page can tell them apart. Recurses."""
    if isinstance(value, str):
        return CARD_LIST_MARK + value if value.startswith(CARD_LIST_MARK) else value
    if isinstance(value, list):
        if value and all(isinstance(v, str) and _CARD.match(v) for v in value):
            return CARD_LIST_MARK + "".join(value)
        return [pack_cards(v) for v in value]
    if isinstance(value, dict):
        return {k: pack_cards(v) for k, v in value.items()}
    return value


def build_replay_data(log_path: Path, data: bytes | None = None) -> dict[str, Any]:
    """The compact JSON-able replay of one log (raises CorruptLog for bad files);
    `data`: the log's bytes when they are not the file's own (a copy with parts left out)."""
    header, records = read_log(log_path, cut_ok=True, data=data)  # a cut-off game is shown as far as it goes
    return replay_data(header, records, str(log_path))


def replay_row(rec: Record) -> tuple[str, int, dict[str, Any]] | None:
    """One log record as a row of the page (type name, audience, fields), or
    None for what the page leaves out (messages, a bot's plays)."""
    match rec:
        case EventRecord(to=to, event=ev) if isinstance(ev, dict) and isinstance(ev.get("type"), str):
            return ev["type"], to, {k: v for k, v in ev.items() if k != "type"}
        case ActionRecord(seat=seat, source=source, action=act) if isinstance(act, dict) and isinstance(
            act.get("type"), str
        ):
            # Plays repeat the public card_played event; everything else is small
            # and some of it (exchange discards) is a seat's private knowledge.
            if act["type"] == "play" and source == "bot":
                return None
            fields = {k: v for k, v in act.items() if k != "type"}
            if source != "bot":
                fields["source"] = source
            return ACTION + ":" + act["type"], seat, fields
        case FailureRecord(seat=seat, reason=reason, message=message):
            return FAILURE, -1, {"seat": seat, "reason": reason, "message": message}
        case LogResult():
            return RESULT, -1, {k: getattr(rec, k) for k in RESULT_FIELDS}
    return None


def replay_data(header: LogHeader, records: Sequence[tuple[int, Record]], where: str = "game") -> dict[str, Any]:
    """The compact replay of a header and its records: a log read from a file,
    or the part of a game being played that a spectator may see."""
    rows = start_records(header, where)  # a game started from a position: the table at its start
    result: dict[str, Any] | None = None
    for _no, rec in records:
        row = replay_row(rec)
        if row is None:
            continue
        rows.append(row)
        if row[0] == RESULT:
            result = dict(row[2])
    # One field list per type: the union of the keys, in first-seen order.
    type_fields: dict[str, list[str]] = {}
    for name, _to, fields in rows:
        known = type_fields.setdefault(name, [])
        for key in fields:
            if key not in known:
                known.append(key)
    index = {name: i for i, name in enumerate(type_fields)}
    items = []
    for name, to, fields in rows:
        values = [pack_cards(fields.get(key)) for key in type_fields[name]]
        while values and values[-1] is None:
            values.pop()
        items.append([index[name], *values] if to == -1 else [~index[name], to, *values])
    game = GAMES.get(header.game)  # a log of a game this referee does not know is shown plainly
    title = game.title if game is not None else header.game
    rules = msgspec.to_builtins(header.rules)
    return {
        "v": DATA_VERSION,
        "game": header.game,
        "title": title,
        "game_id": header.game_id,
        "seed": str(header.seed),  # 63-bit: JS numbers would round it
        "match_seed": None if header.match_seed is None else str(header.match_seed),
        "deal_set": header.deal_set,
        "referee": header.referee,
        "n": header.n_players,
        "players": [p.name for p in sorted(header.players, key=lambda p: p.seat)],
        "rules": rules,
        "hints": dict(game.page.hints) if game is not None else {},
        "types": [[name, *fields] for name, fields in type_fields.items()],
        "items": items,
        "result": result,
        "cut_off": result is None,
    }


def _script_json(data: dict[str, Any]) -> str:
    """JSON safe inside <script>: no '</' (closing tag) and no '<!--'."""
    text = msgspec.json.encode(data).decode("utf-8")
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _title(data: dict[str, Any]) -> str:
    return f"{data['title']} · game {data['game_id']} · " + " vs ".join(visible(n) for n in data["players"])


def render_html(data: dict[str, Any]) -> str:
    """The self-contained replay page of `data` (its style and script inline)."""
    return page_html(_title(data), _script_json(data))


def linked_page_html(data: dict[str, Any], assets: str, top: str = "") -> str:
    """The page with its style and script as files under the URL `assets`, for a
    server whose Content-Security-Policy allows no inline script or style;
    `top` is markup of the server's own put first in the body."""
    return page_html(_title(data), _script_json(data), assets, top)


def page_html(title: str, data_text: str, assets: str | None = None, top: str = "") -> str:
    """The page around a data text already safe inside <script> (a live table
    fills a page made with a marker in its place in the browser): its style
    and script inline, or as files under the URL `assets`."""
    if assets is None:
        style, script = f"<style>{_asset('replay.css')}</style>", f"<script>{_asset('replay.js')}</script>"
    else:
        where = _html_escape(assets)
        style = f'<link rel="stylesheet" href="{where}/replay.css">'
        script = f'<script src="{where}/replay.js"></script>'
    parts = {"TITLE": _html_escape(title), "STYLE": style, "SCRIPT": script, "DATA": data_text}
    template = _asset("replay.html").replace("<body>", "<body>" + top, 1)
    # One pass, so a placeholder-like text inside a part (a bot's name) stays as it is.
    return re.sub(r"__(TITLE|STYLE|SCRIPT|DATA)__", lambda m: parts[m.group(1)], template)


def write_html(log_path: Path, out_path: Path) -> None:
    """Write the replay page of the game in `log_path` to `out_path`."""
    data = build_replay_data(Path(log_path))
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(data), encoding="utf-8")
