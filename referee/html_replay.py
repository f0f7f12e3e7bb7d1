"""A game log as ONE self-contained HTML page that replays the game.

`write_html(log_path, out_path)` reads a log (see `referee.gamelog`) and writes
a page with inline CSS and JS only (no network, no external scripts or fonts):
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
is the acting seat; every list of cards is one string `"~AsKd9h"`. A typical
Chicago game to 52 gives a 50-70 kB page (about 45 kB of it the page itself);
a 500-deal game (the `max_deals` cap, 4 players) about 0.7 MB. The page builds
its step list in one light pass and renders a step by replaying its deal, so
it opens at once and jumps anywhere quickly.

Seat views follow the audiences: seat s sees the events addressed to everyone
or to s, its own discards (its actions), and another seat's cards only once
they are shown (`hand_revealed`, a taken open card); the rest are card backs.

    python -m referee.html_replay game-00001.jsonl replay.html
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import msgspec

from referee.gamelog import read_log

DATA_VERSION = 1
CARD_LIST_MARK = "~"
_CARD = re.compile(r"^[2-9TJQKA][shdc]$")

# Pseudo record types (a leading '@' never clashes with an event type).
ACTION, FAILURE, RESULT = "@action", "@failure", "@result"


def _pack(value: Any) -> Any:
    """Lists of card strings become one string `~AsKd`; a string that starts with
    `~` gets one more (`~~...`) so the page can tell them apart. Recurses."""
    if isinstance(value, str):
        return CARD_LIST_MARK + value if value.startswith(CARD_LIST_MARK) else value
    if isinstance(value, list):
        if value and all(isinstance(v, str) and _CARD.match(v) for v in value):
            return CARD_LIST_MARK + "".join(value)
        return [_pack(v) for v in value]
    if isinstance(value, dict):
        return {k: _pack(v) for k, v in value.items()}
    return value


def build_replay_data(log_path: Path) -> dict[str, Any]:
    """The compact JSON-able replay of one log (raises CorruptLog for bad files)."""
    header, records = read_log(log_path)
    rows: list[tuple[str, int, dict[str, Any]]] = []
    result: dict[str, Any] | None = None
    for _no, rec in records:
        kind = rec.get("type")
        if kind == "event":
            ev = rec.get("event")
            if isinstance(ev, dict) and isinstance(ev.get("type"), str):
                fields = {k: v for k, v in ev.items() if k != "type"}
                rows.append((ev["type"], int(rec.get("to", -1)), fields))
        elif kind == "action":
            act = rec.get("action")
            source = rec.get("source", "bot")
            # Plays repeat the public card_played event; everything else is small
            # and some of it (exchange discards) is a seat's private knowledge.
            if isinstance(act, dict) and isinstance(act.get("type"), str) and (act["type"] != "play" or source != "bot"):
                fields = {k: v for k, v in act.items() if k != "type"}
                if source != "bot":
                    fields["source"] = source
                rows.append((ACTION + ":" + act["type"], int(rec.get("seat", -1)), fields))
        elif kind == "failure":
            rows.append((FAILURE, -1, {"seat": rec.get("seat"), "reason": rec.get("reason"),
                                       "message": rec.get("message")}))
        elif kind == "result":
            result = {k: rec.get(k) for k in ("winner", "scores", "placements", "reason", "forfeited")}
            rows.append((RESULT, -1, dict(result)))
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
        values = [_pack(fields.get(key)) for key in type_fields[name]]
        while values and values[-1] is None:
            values.pop()
        items.append([index[name], *values] if to == -1 else [~index[name], to, *values])
    title = header.game
    try:
        from referee.games import GAMES

        if header.game in GAMES:
            title = GAMES[header.game].title
    except Exception:  # noqa: BLE001 - the page must not depend on the engines
        pass
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
        "types": [[name, *fields] for name, fields in type_fields.items()],
        "items": items,
        "result": result,
    }


def _script_json(data: dict[str, Any]) -> str:
    """JSON safe inside <script>: no '</' (closing tag) and no '<!--'."""
    text = msgspec.json.encode(data).decode("utf-8")
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def render_html(data: dict[str, Any]) -> str:
    title = f"{data['title']} · game {data['game_id']} · " + " vs ".join(data["players"])
    parts = {"TITLE": _html_escape(title), "STYLE": _CSS, "SCRIPT": _JS, "DATA": _script_json(data)}
    # One pass, so a placeholder-like text inside a part (a bot's name) stays as it is.
    return re.sub(r"__(TITLE|STYLE|SCRIPT|DATA)__", lambda m: parts[m.group(1)], _TEMPLATE)


def write_html(log_path: Path, out_path: Path) -> None:
    """Write the replay page of the game in `log_path` to `out_path`."""
    data = build_replay_data(Path(log_path))
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(data), encoding="utf-8")


# --------------------------------------------------------------------- page

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>__STYLE__</style>
</head>
<body>
<header id="top">
  <h1 id="title"></h1>
  <div id="meta"></div>
</header>
<main id="layout">
  <section id="stage">
    <div id="table" class="table">
      <div id="center" class="center">
        <div id="info" class="info"></div>
        <div id="trick" class="trick"></div>
        <div id="extra" class="extra"></div>
      </div>
    </div>
    <div id="status" class="status" role="status" aria-live="polite"></div>
    <div id="controls" class="controls">
      <div class="btns">
        <button id="first" title="First (Home)">|&#x25C0; First</button>
        <button id="prev" title="Previous (&#x2190;)">&#x25C0; Prev</button>
        <button id="play" title="Play / pause (Space)">&#x25B6; Play</button>
        <button id="next" title="Next (&#x2192;)">Next &#x25B6;</button>
        <button id="last" title="Last (End)">Last &#x25B6;|</button>
        <select id="speed" title="Auto-advance speed (+ / -)">
          <option value="2000">0.5 /s</option>
          <option value="1000">1 /s</option>
          <option value="600" selected>1.7 /s</option>
          <option value="300">3 /s</option>
          <option value="120">8 /s</option>
        </select>
        <span id="stepinfo" class="stepinfo"></span>
      </div>
      <input id="scrub" type="range" min="0" max="0" value="0" aria-label="step">
      <div class="views"><span class="lbl">View:</span><span id="views"></span></div>
      <div class="keys">&#x2190;/&#x2192; step &middot; Space play/pause &middot; Home/End first/last &middot;
        PgUp/PgDn previous/next deal &middot; A all &middot; 0&ndash;3 seat view &middot; V next view &middot; +/&minus; speed</div>
    </div>
  </section>
  <aside id="side">
    <div class="panel"><h2>Scores</h2><table id="scoreboard"></table></div>
    <div class="panel"><h2>Score chart</h2><div id="chart"></div><div id="legend" class="legend"></div></div>
    <div class="panel"><h2>This deal</h2><ol id="dealog" class="dealog"></ol></div>
    <div class="panel"><h2>Deals</h2><ol id="deals" class="deals"></ol></div>
    <details class="panel"><summary>Rules and seed</summary><pre id="rules"></pre></details>
  </aside>
</main>
<script type="application/json" id="replay-data">__DATA__</script>
<script>__SCRIPT__</script>
</body>
</html>
"""

_CSS = r"""
:root{--bg:#171b21;--panel:#232932;--line:#343c48;--text:#e9edf2;--muted:#9aa5b4;--gold:#ffd54f;
  --felt1:#2f9159;--felt2:#1d6b3c;--felt3:#124a29;--rim:#5b3a1c}
*{box-sizing:border-box}
html,body{margin:0;background:var(--bg);color:var(--text);font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,
  "Noto Sans","DejaVu Sans",sans-serif}
header{padding:8px 16px;border-bottom:1px solid var(--line);display:flex;gap:16px;align-items:baseline;flex-wrap:wrap}
h1{font-size:18px;margin:0}
#meta{color:var(--muted);font-size:13px}
#layout{display:flex;gap:14px;padding:12px 16px;align-items:flex-start}
#stage{flex:1 1 auto;min-width:640px;max-width:1000px}
aside{flex:0 0 330px;display:flex;flex-direction:column;gap:10px}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:8px 10px}
.panel h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:0 0 6px}
summary{cursor:pointer;color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.06em}
pre{font-size:11px;white-space:pre-wrap;color:var(--muted);margin:6px 0 0;max-height:240px;overflow:auto}
/* the table */
.table{position:relative;height:560px;border-radius:190px/150px;border:14px solid var(--rim);
  background:radial-gradient(ellipse at 50% 45%,var(--felt1) 0%,var(--felt2) 55%,var(--felt3) 100%);
  box-shadow:inset 0 0 40px rgba(0,0,0,.55),0 6px 18px rgba(0,0,0,.5)}
.seat{position:absolute;display:flex;flex-direction:column;align-items:center;gap:5px;transition:opacity .2s}
.seat.pos-bottom{left:50%;bottom:10px;transform:translateX(-50%)}
.seat.pos-top{left:50%;top:10px;transform:translateX(-50%)}
.seat.pos-left{left:18px;top:50%;transform:translateY(-50%)}
.seat.pos-right{right:18px;top:50%;transform:translateY(-50%)}
.n3 .seat.pos-left{top:30%}.n3 .seat.pos-right{top:30%}
.seat.pos-bottom .plate{order:2}
.seat.out{opacity:.45}
.plate{display:flex;align-items:center;gap:6px;background:rgba(10,20,14,.78);border:2px solid rgba(255,255,255,.15);
  border-radius:16px;padding:3px 10px 3px 6px;white-space:nowrap;transition:box-shadow .15s,border-color .15s}
.seat.actor .plate{border-color:var(--gold);box-shadow:0 0 0 2px var(--gold),0 0 18px rgba(255,213,79,.8)}
.dot{width:11px;height:11px;border-radius:50%;display:inline-block;flex:none}
.pname{font-weight:600}
.pname .sn{color:var(--muted);font-weight:700;margin-right:4px}
.seat.viewer .pname .sn{color:var(--gold)}
.pscore{font-weight:800;font-size:16px;min-width:22px;text-align:right;margin-left:4px}
.delta{font-weight:700;font-size:12px;color:#8f8;min-width:0}
.delta.neg{color:#ff8a80}
.badge{font-size:11px;font-weight:700;border-radius:8px;padding:0 5px;background:#eee;color:#222}
.badge.dealer{background:#fff;color:#1b5e20}
.badge.decl{background:var(--gold);color:#3e2a00}
.badge.fail{background:#e53935;color:#fff}
.badge.you{background:#5c6bc0;color:#fff}
.tricks{font-size:11px;color:#d8f0d8;letter-spacing:1px}
.badge.shown{background:#ffe082;color:#3e2a00}
.hand{display:flex;gap:3px;min-height:70px;align-items:flex-end}
.hand .empty{color:rgba(255,255,255,.35);font-size:12px;align-self:center}
.card.shown-card{box-shadow:0 0 0 2px #ffe082}
/* cards */
.card{position:relative;width:46px;height:66px;border-radius:6px;background:#fdfdfb;color:#161616;flex:none;
  box-shadow:0 1px 3px rgba(0,0,0,.55);border:1px solid #bbb;font-weight:800;user-select:none}
.card .r{position:absolute;left:4px;top:2px;font-size:17px;line-height:1;letter-spacing:-1px}
.card .s{position:absolute;left:5px;top:19px;font-size:13px;line-height:1}
.card .p{position:absolute;right:4px;bottom:2px;font-size:26px;line-height:1}
.card.red{color:#c8102e}
.card.back{background:repeating-linear-gradient(45deg,#23408e 0 5px,#2f56b3 5px 10px);border:3px solid #f4f4f4}
.card.new{box-shadow:0 0 0 2px #64b5f6,0 0 10px #64b5f6}
.card.known{outline:2px dashed #ffe082;outline-offset:-4px}
.card.win{box-shadow:0 0 0 3px var(--gold),0 0 14px var(--gold)}
.card.mini{width:32px;height:46px;border-radius:4px}
.card.mini .r{font-size:13px;left:3px;top:2px}.card.mini .s{font-size:10px;left:3px;top:15px}
.card.mini .p{font-size:17px;right:3px}
.card.mini.back{border-width:2px}
/* centre */
.center{position:absolute;left:50%;top:50%;transform:translate(-50%,-50%);width:300px;display:flex;flex-direction:column;
  align-items:center;gap:6px;pointer-events:none}
.info{background:rgba(0,0,0,.35);border-radius:10px;padding:2px 10px;font-size:13px;color:#e8f5e9;text-align:center}
.trick{position:relative;width:220px;height:170px}
.trick .slot{position:absolute;display:flex;flex-direction:column;align-items:center;gap:1px}
.trick .slot .who{font-size:10px;color:#e8f5e9;background:rgba(0,0,0,.35);border-radius:6px;padding:0 4px}
.trick .t-bottom{left:50%;bottom:0;transform:translateX(-50%)}
.trick .t-top{left:50%;top:0;transform:translateX(-50%)}
.trick .t-left{left:6px;top:50%;transform:translateY(-50%)}
.trick .t-right{right:6px;top:50%;transform:translateY(-50%)}
.n3 .trick .t-left{top:30%}.n3 .trick .t-right{top:30%}
.trick .tlabel{position:absolute;left:50%;top:50%;transform:translate(-50%,-50%);font-size:11px;color:#c8e6c9}
.extra{display:flex;gap:10px;align-items:center;font-size:12px;color:#e8f5e9;min-height:20px}
.pill{background:rgba(0,0,0,.35);border-radius:10px;padding:2px 8px;display:flex;align-items:center;gap:5px}
.pill .big{font-size:17px;font-weight:800;background:#fdfdfb;color:#161616;border-radius:4px;padding:0 4px;line-height:1.2}
.pill .big.red{color:#c8102e}
/* status and controls */
.status{margin-top:10px;background:#0f1318;border:1px solid var(--line);border-left:5px solid var(--gold);border-radius:6px;
  padding:9px 12px;font-size:18px;min-height:46px}
.ctx{color:var(--muted);font-size:.8em;margin-right:.6em}
.cs{font-weight:700;white-space:nowrap;background:#fdfdfb;color:#161616;border-radius:4px;padding:0 3px;margin:0 1px}
.cs.red{color:#c8102e}
.pn{font-weight:700}
.controls{margin-top:8px;display:flex;flex-direction:column;gap:6px}
.btns{display:flex;gap:6px;align-items:center;flex-wrap:wrap}
button,select{background:#2e3643;color:var(--text);border:1px solid #46505f;border-radius:6px;padding:6px 11px;
  font:inherit;cursor:pointer}
button:hover:not(:disabled){background:#3a4455}
button:disabled{opacity:.4;cursor:default}
button.on{background:#f0c23b;color:#2a1f00;border-color:#f0c23b;font-weight:700}
.stepinfo{color:var(--muted);margin-left:6px;font-variant-numeric:tabular-nums}
#scrub{width:100%}
.views{display:flex;gap:6px;align-items:center;flex-wrap:wrap}
.views .lbl{color:var(--muted)}
#views{display:flex;gap:4px;flex-wrap:wrap}
.keys{color:var(--muted);font-size:12px}
/* side panels */
#scoreboard{width:100%;border-collapse:collapse}
#scoreboard td{padding:3px 4px;border-bottom:1px solid var(--line)}
#scoreboard td.sc{text-align:right;font-weight:800;font-size:16px;font-variant-numeric:tabular-nums}
#scoreboard tr.lead td.sc{color:var(--gold)}
#scoreboard tr.actor td{background:rgba(255,213,79,.08)}
#chart svg{display:block;width:100%;height:auto;cursor:crosshair}
.legend{display:flex;gap:10px;flex-wrap:wrap;font-size:12px;color:var(--muted);margin-top:4px}
.dealog{margin:0;padding:0 0 0 26px;max-height:220px;overflow:auto;font-size:12.5px}
.dealog li{cursor:pointer;padding:1px 2px;border-radius:4px}
.dealog li.cur{background:rgba(255,213,79,.16);color:#fff}
.dealog li:hover{background:rgba(255,255,255,.07)}
.deals{margin:0;padding:0;list-style:none;max-height:260px;overflow:auto;position:relative}
.deals li button{width:100%;text-align:left;padding:3px 8px;border-radius:4px;border:0;background:transparent;
  display:flex;justify-content:space-between;gap:8px;font-size:12.5px}
.deals li button:hover{background:rgba(255,255,255,.07)}
.deals li.cur button{background:rgba(255,213,79,.18);color:#fff}
.deals .dsc{color:var(--muted);font-variant-numeric:tabular-nums}
@media (max-width:1100px){#layout{flex-direction:column}aside{flex-basis:auto;width:100%}}
"""

_JS = r"""
(function () {
'use strict';
var D = JSON.parse(document.getElementById('replay-data').textContent);
var N = D.n, NAMES = D.players;
var SUIT = {s: '\u2660', h: '\u2665', d: '\u2666', c: '\u2663'};
var SUITNAME = {s: 'spades', h: 'hearts', d: 'diamonds', c: 'clubs'};
var RED = {h: 1, d: 1};
var RANKS = '23456789TJQKA', SUIT_ORDER = {s: 0, h: 1, c: 2, d: 3};
var COLORS = ['#f6c344', '#4fc3f7', '#f06292', '#aed581'];
var POS = {2: ['bottom', 'top'], 3: ['bottom', 'left', 'right'], 4: ['bottom', 'left', 'top', 'right']}[N] ||
  ['bottom', 'left', 'top', 'right'];
var $ = function (id) { return document.getElementById(id); };

// ------------------------------------------------------------ decoding
function unpack(v) {
  if (typeof v === 'string' && v.charAt(0) === '~') {
    if (v.charAt(1) === '~') return v.slice(1);  // a plain string that starts with '~'
    var out = [];
    for (var i = 1; i < v.length; i += 2) out.push(v.substr(i, 2));
    return out;
  }
  if (Array.isArray(v)) return v.map(unpack);
  if (v && typeof v === 'object') { var o = {}; for (var k in v) o[k] = unpack(v[k]); return o; }
  return v;
}
var RAW = D.items, CACHE = new Array(RAW.length), NITEMS = RAW.length;
function typeName(i) { var a = RAW[i]; return D.types[a[0] < 0 ? ~a[0] : a[0]][0]; }
function decode(a) {
  var priv = a[0] < 0, t = D.types[priv ? ~a[0] : a[0]], off = priv ? 1 : 0, o = {type: t[0], to: priv ? a[1] : -1};
  for (var i = 1; i < t.length; i++) o[t[i]] = i + off < a.length ? unpack(a[i + off]) : null;
  if (o.type.indexOf('@action:') === 0) {  // {type: '@action', seat, source, action: {type, ...fields}}
    var act = {type: o.type.slice(8)}, src = o.source;
    for (i = 1; i < t.length; i++) if (t[i] !== 'source') act[t[i]] = o[t[i]];
    o = {type: '@action', to: o.to, seat: o.to, source: src || 'bot', action: act};
  }
  return o;
}
function item(i) { return i < 0 ? null : CACHE[i] || (CACHE[i] = decode(RAW[i])); }

// ------------------------------------------------------------ steps
// A step is one public happening; private events and score changes join the
// step before them, actions join the step after them.
var STEPS = [], DEFAULTED = {};  // item index of an event caused by a referee's default action
(function () {
  var pend = null, owed = {}, nowed = 0;
  for (var i = 0; i < NITEMS; i++) {
    var type = typeName(i);
    if (type.indexOf('@action') === 0) {
      if (pend === null) pend = i;
      var act = item(i);
      if (act.source !== 'bot' && !owed[act.seat]) { owed[act.seat] = true; nowed++; }
      continue;
    }
    if (nowed && RAW[i][0] >= 0) {
      var ev = item(i);
      if (typeof ev.seat === 'number' && owed[ev.seat]) { DEFAULTED[i] = true; owed[ev.seat] = false; nowed--; }
    }
    var starts = RAW[i][0] >= 0 && type !== 'score';
    if (type === '@result' && STEPS.length && typeName(STEPS[STEPS.length - 1].main) === 'game_ended') starts = false;
    if (!STEPS.length) starts = true;
    if (starts) {
      var a = pend !== null ? pend : i;
      if (STEPS.length) STEPS[STEPS.length - 1].b = a;
      STEPS.push({a: a, b: NITEMS, main: i, deal: 0});
    }
    pend = null;
  }
  if (!STEPS.length) STEPS.push({a: 0, b: NITEMS, main: -1, deal: 0});
})();

// ------------------------------------------------------------ state
function zeros() { var a = []; for (var i = 0; i < N; i++) a.push(0); return a; }
function lists() { var a = []; for (var i = 0; i < N; i++) a.push([]); return a; }
function fresh() {
  return {deal: 0, dealer: null, active: null, tiebreak: false, stock: null, owe: 0,
    hands: lists(), known: (function () { var k = []; for (var v = 0; v < N; v++) k.push(lists()); return k; })(),
    shown: [], trick: [], trickNo: 0, trickWin: null, tricksWon: zeros(), pending: lists(), lastDisc: lists(),
    newCards: lists(), open: null, round: 0, phase: '', declarer: null, contract: null, trump: null,
    bids: [], swapped: null, scores: zeros(), delta: zeros(), over: false, winner: null, reason: '',
    failed: [], cut: null, lastOpen: null};
}
function clone(s) { return JSON.parse(JSON.stringify(s)); }
function remove(list, cards) { cards.forEach(function (c) { var i = list.indexOf(c); if (i >= 0) list.splice(i, 1); }); }
function sees(item, v) { return v < 0 || item.to === -1 || item.to === v; }
function draw(st, n) {
  if (st.stock === null) return;
  var take = Math.min(st.stock, n); st.stock -= take; st.owe += n - take;
}
function setHand(st, item, seat, cards) {
  st.hands[seat] = cards.slice();
  for (var v = 0; v < N; v++) st.known[v][seat] = sees(item, v) ? cards.slice() : [];
  st.newCards[seat] = cards.slice();
}
function apply(st, it) {
  var s = it.seat, v;
  switch (it.type) {
  case 'first_dealer_cut':
    st.cut = it; st.dealer = it.dealer; break;
  case 'deal_started':
    // Scores, failures and pending discards carry over: the log writes the
    // game's first action before the events that opened the game.
    var keep = {scores: st.scores, failed: st.failed, delta: st.delta, pending: st.pending};
    var f = fresh(); for (var k in f) st[k] = f[k];
    for (k in keep) st[k] = keep[k];
    st.deal = it.deal; st.dealer = it.dealer; st.active = it.active; st.tiebreak = !!it.tiebreak;
    st.stock = typeof it.stock_size === 'number' ? it.stock_size : null;
    st.phase = D.game === 'ghost_euchre' ? 'bidding' : (st.stock !== null ? 'exchange' : '');
    break;
  case 'hand_dealt': case 'ghost_hand_taken':
    setHand(st, it, s, it.cards || []); break;
  case 'drew':
    var cards = it.cards || [];
    st.hands[s] = st.hands[s].concat(cards);
    st.newCards[s] = st.newCards[s].concat(cards);
    for (v = 0; v < N; v++) if (sees(it, v)) st.known[v][s] = st.known[v][s].concat(cards);
    break;
  case '@action':
    var act = it.action || {};
    if (act.type === 'exchange') st.pending[s] = (act.discard || []).slice();
    break;
  case 'exchanged':
    var disc = st.pending[s].length === it.count ? st.pending[s] : [];
    remove(st.hands[s], disc);
    st.lastDisc[s] = disc; st.pending[s] = [];
    for (v = 0; v < N; v++) {
      if (v === s) remove(st.known[v][s], disc);
      else if (it.count) st.known[v][s] = [];
    }
    if (st.shown[s] && it.count) st.shown[s] = null;
    st.round = it.round; st.phase = 'exchange';
    draw(st, it.count || 0);
    break;
  case 'stock_reshuffled':
    st.stock = it.stock_size - st.owe; st.owe = 0; break;
  case 'open_card':
    st.open = {seat: s, card: it.card}; break;
  case 'open_card_decision':
    if (st.open) {
      if (it.take) {
        st.hands[s].push(st.open.card); st.newCards[s].push(st.open.card);
        for (v = 0; v < N; v++) st.known[v][s].push(st.open.card);
      } else draw(st, 1);
      st.lastOpen = st.open;
    }
    st.open = null; break;
  case 'hand_revealed':
    st.shown[s] = {cards: it.cards || [], reason: it.reason};
    for (v = 0; v < N; v++) if (sees(it, v)) {
      (it.cards || []).forEach(function (c) {
        if (st.hands[s].indexOf(c) >= 0 && st.known[v][s].indexOf(c) < 0) st.known[v][s].push(c);
      });
    }
    break;
  case 'showdown':
    st.phase = it.round === 0 ? 'final showdown' : 'showdown'; break;
  case 'chicago_decision':
    if (it.call) st.declarer = s;
    st.phase = 'chicago'; break;
  case 'card_played':
    if (it.trick !== st.trickNo) { st.trick = []; st.trickNo = it.trick; st.trickWin = null; }
    st.trick.push({seat: s, card: it.card});
    remove(st.hands[s], [it.card]);
    for (v = 0; v < N; v++) remove(st.known[v][s], [it.card]);
    st.phase = 'trick'; break;
  case 'trick_won':
    st.tricksWon[s] += 1; st.trickWin = {seat: s, card: it.card}; break;
  case 'score':
    st.delta[s] += it.points; st.scores[s] = it.total; break;
  case 'deal_ended':
    if (it.scores) st.scores = it.scores.slice();
    st.phase = 'deal over'; break;
  case 'game_ended':
    if (it.scores) st.scores = it.scores.slice();
    st.over = true; st.winner = it.winner; st.reason = it.reason; st.phase = 'game over'; break;
  case '@result':
    if (it.scores) st.scores = it.scores.slice();
    st.over = true; st.winner = it.winner; st.reason = it.reason; st.phase = 'game over'; break;
  case '@failure':
    if (typeof s === 'number' && st.failed.indexOf(s) < 0) st.failed.push(s); break;
  // Ghost Hand Euchre
  case 'bid_made':
    st.bids.push({seat: s, bid: it.bid}); break;
  case 'ghost_swapped':
    st.swapped = s;
    for (v = 0; v < N; v++) if (v !== s) st.known[v][s] = [];
    break;
  case 'all_passed':
    st.phase = 'all passed'; break;
  case 'trump_named':
    st.declarer = s; st.contract = it.contract; st.trump = it.suit; st.phase = 'trick'; break;
  case 'hand_scored':
    if (it.scores) st.scores = it.scores.slice();
    st.phase = 'hand scored'; break;
  default:
    break;  // unknown events only show up in the status line
  }
}

// One light pass over the game (only what outlives a deal: scores, failures,
// pending discards): a checkpoint before every deal and the scores after it.
// Rendering a step replays its deal from the checkpoint.
var DEALS = [];      // {deal, step, dealer, scores (after), tiebreak}
var CHECK = {};      // step index of a deal_started -> what carries over into it
var FINAL = null;
var CARRY = {score: 1, deal_ended: 1, game_ended: 1, hand_scored: 1, '@result': 1, '@failure': 1, '@action:exchange': 1};
(function () {
  var st = fresh(), cur = null;
  for (var k = 0; k < STEPS.length; k++) {
    var main = STEPS[k].main;
    if (main >= 0 && typeName(main) === 'deal_started') {
      CHECK[k] = {scores: st.scores.slice(), failed: st.failed.slice(), pending: clone(st.pending)};
      var m = item(main);
      cur = {deal: m.deal, step: k, dealer: m.dealer, scores: st.scores.slice(), tiebreak: !!m.tiebreak};
      DEALS.push(cur);
    }
    for (var i = STEPS[k].a; i < STEPS[k].b; i++) {
      if (CARRY[typeName(i)]) { apply(st, item(i)); if (cur) cur.scores = st.scores.slice(); }
    }
    STEPS[k].deal = DEALS.length;
  }
  FINAL = st;
})();
function checkpointOf(k) {
  var d = STEPS[k].deal;
  return d ? DEALS[d - 1].step : 0;
}

// ------------------------------------------------------------ text
function esc(t) { return String(t).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
function rankText(r) { return r === 'T' ? '10' : r; }
function cardText(c) { return rankText(c.charAt(0)) + (SUIT[c.charAt(1)] || c.charAt(1)); }
function C(c) { return '<span class="cs' + (RED[c.charAt(1)] ? ' red' : '') + '">' + cardText(c) + '</span>'; }
function CS(list) { return (list || []).map(C).join(' '); }
function P(s) {
  if (typeof s !== 'number' || s < 0 || s >= N) return esc(String(s));
  return '<span class="pn" style="color:' + COLORS[s] + '">P' + s + '</span>';
}
function PS(list) { return (list || []).map(P).join(', '); }
function suitText(x) { return '<span class="cs' + (RED[x] ? ' red' : '') + '">' + (SUIT[x] || esc(x)) + '</span>'; }
function bidText(b) { return b === 'moon' ? 'the moon (all 6)' : String(b); }
function signed(n) { return (n > 0 ? '+' : n < 0 ? '\u2212' : '\u00b1') + Math.abs(n); }
var REASONS = {break_up: 'breaking up a scoring hand', scoring_hand: 'scoring hand', final_showdown: 'final showdown',
  last_trick: 'last trick', showdown: 'showdown', chicago: 'Chicago', chicago_failed: 'failed Chicago',
  target: 'target reached', tricks: 'tricks', contract_made: 'contract made', set: 'set', moon: 'moon',
  moon_failed: 'moon failed', renege: 'renege', forfeit: 'forfeit', tiebreak: 'tie-break', hand_limit: 'hand limit',
  deal_limit: 'deal limit', royal_flush: 'royal flush'};
function reasonText(r) { return REASONS[r] || String(r || '').replace(/_/g, ' '); }
function genericText(it) {
  var parts = [];
  for (var k in it) if (k !== 'type' && k !== 'to' && it[k] !== null && it[k] !== undefined) {
    var val = it[k];
    parts.push(k + '=' + esc(typeof val === 'object' ? JSON.stringify(val) : String(val)));
  }
  return '<span class="ctx">' + esc(it.type) + '</span> ' + parts.join(' ');
}

var PRIVATE_SHOWN = {hand_dealt: 1, drew: 1, ghost_hand_taken: 1};  // described with the public event before them
function describe(k, st, view) {
  var step = STEPS[k], m = item(step.main);
  if (!m) return 'no events in this log';
  var extra = [], scores = [], got = {}, res = null, i;
  for (i = step.a; i < step.b; i++) {
    var it = item(i);
    if (it.type === 'score') scores.push(it);
    if (it.type === '@result' && i !== step.main) res = it;
    if (it.to !== -1 && i !== step.main && !PRIVATE_SHOWN[it.type] && it.type !== '@action' && sees(it, view)) extra.push(genericText(it));
    if ((it.type === 'drew' || it.type === 'hand_dealt' || it.type === 'ghost_hand_taken') && i !== step.main) {
      if (sees(it, view)) got[it.seat] = (got[it.seat] || []).concat(it.cards || []);
    }
  }
  var t, s = m.seat;
  if (!sees(m, view)) {
    t = '<span class="ctx">private</span> ' + esc(m.type) + (typeof s === 'number' ? ' for ' + P(s) : '');
  } else switch (m.type) {
  case 'first_dealer_cut':
    var rounds = m.rounds || [];
    t = rounds.length ? 'cut for the deal: ' + rounds.map(function (r) {
      return r.map(function (pc) { return P(pc.seat) + ' ' + C(pc.card); }).join(', ');
    }).join(' \u2192 ') + ' \u2014 ' + P(m.dealer) + ' deals first' : P(m.dealer) + ' deals first';
    break;
  case 'deal_started':
    t = '<b>Deal ' + m.deal + '</b>: ' + P(m.dealer) + ' deals' + (m.tiebreak ? ' \u2014 tie-break between ' + PS(m.active) : '');
    var mine = Object.keys(got).filter(function (x) { return view >= 0 && +x === view; });
    if (mine.length) t += '; you get ' + CS(got[view]);
    break;
  case 'hand_dealt': case 'ghost_hand_taken':
    t = P(s) + (m.type === 'hand_dealt' ? ' is dealt ' : ' holds the ghost hand ') + CS(m.cards); break;
  case 'exchanged':
    t = '<span class="ctx">exchange ' + m.round + '</span> ' + P(s) + (m.count ? ' discards ' + m.count : ' stands pat');
    if (m.count && (view < 0 || view === s) && st.lastDisc[s].length) t += ' (' + CS(st.lastDisc[s]) + ')';
    if (got[s]) t += ', draws ' + CS(got[s]);
    break;
  case 'drew':
    t = P(s) + ' draws ' + CS(m.cards); break;
  case 'stock_reshuffled':
    t = 'the discards are shuffled into a new stock of ' + m.stock_size; break;
  case 'open_card':
    t = P(s) + '\u2019s open card: ' + C(m.card) + ' \u2014 take it or draw face down?'; break;
  case 'open_card_decision':
    var oc = st.lastOpen ? C(st.lastOpen.card) : 'the open card';
    t = m.take ? P(s) + ' takes ' + oc : P(s) + ' declines ' + oc + ' and draws face down' + (got[s] ? ': ' + CS(got[s]) : '');
    break;
  case 'hand_revealed':
    t = P(s) + ' shows ' + CS(m.cards) + ' (' + reasonText(m.reason) + ')'; break;
  case 'showdown':
    var what = m.round === 0 ? 'final showdown' : 'showdown ' + m.round;
    if (m.winners && m.winners.length) {
      t = what + ': ' + PS(m.winners) + ' score' + (m.winners.length > 1 ? '' : 's') + ' ' + m.points +
        (m.description ? ' (' + esc(m.description) + ')' : m.category ? ' (' + esc(m.category) + ')' : '');
    } else if (m.tied && m.tied.length) {
      t = what + ': exact tie between ' + PS(m.tied) + (m.description ? ' (' + esc(m.description) + ')' : '') + ', nobody scores';
    } else t = what + ': nobody scores';
    scores = [];
    break;
  case 'chicago_decision':
    t = m.call ? P(s) + ' calls <b>Chicago!</b>' : P(s) + ' does not call Chicago'; break;
  case 'card_played':
    t = P(s) + ' plays ' + C(m.card) + ' <span class="ctx" style="margin-left:.5em">trick ' + m.trick + '</span>'; break;
  case 'trick_won':
    t = P(s) + ' wins trick ' + m.trick + ' with ' + C(m.card); break;
  case 'score':
    t = ''; break;
  case 'deal_ended':
    t = 'deal ' + m.deal + ' over \u2014 ' + (m.scores || []).map(function (x, j) { return P(j) + ' ' + x; }).join(' \u00b7 ');
    break;
  case 'game_ended': case '@result':
    var w = m.winner;
    t = '<b>Game over</b>: ' + (typeof w === 'number' ? P(w) + ' (' + esc(NAMES[w]) + ') wins' : 'no single winner') +
      ' \u2014 ' + (m.scores || []).join(' : ') + ' (' + reasonText(m.reason) + ')';
    if (m.forfeited && m.forfeited.length) t += '; forfeited: ' + PS(m.forfeited);
    if (res && (res.reason !== m.reason || (res.scores || []).join() !== (m.scores || []).join() || res.winner !== m.winner)) {
      t += ' <span class="ctx">referee’s result:</span> ' + (typeof res.winner === 'number' ? P(res.winner) + ' wins' : 'no single winner') +
        ' — ' + (res.scores || []).join(' : ') + ' (' + reasonText(res.reason) + ')' +
        (res.forfeited && res.forfeited.length ? '; forfeited: ' + PS(res.forfeited) : '');
    }
    break;
  case '@failure':
    t = '<span class="ctx">failure</span> ' + P(s) + ' ' + esc(reasonText(m.reason)) + (m.message ? ': ' + esc(m.message) : ''); break;
  case 'bid_made':
    t = m.bid === null || m.bid === undefined ? P(s) + ' passes' : P(s) + ' bids ' + bidText(m.bid); break;
  case 'ghost_swapped':
    t = P(s) + ' swaps for the ghost hand (the old hand is dead)' + (got[s] ? ': ' + CS(got[s]) : ''); break;
  case 'all_passed':
    t = 'everyone passed \u2014 no score; the deal passes to ' + P(m.next_dealer); break;
  case 'trump_named':
    t = P(s) + ' names ' + suitText(m.suit) + ' ' + (SUITNAME[m.suit] || '') + ' trump, contract ' + bidText(m.contract); break;
  case 'renege':
    t = P(s) + ' reneged in trick ' + m.trick + ' with ' + C(m.card) + ' (' + suitText(m.led_suit) + ' led): ' + signed(-m.penalty);
    break;
  case 'hand_scored':
    t = 'hand scored: ' + P(m.declarer) + ' bid ' + bidText(m.contract) + ' in ' + suitText(m.trump) + ', took ' +
      (m.tricks_won ? m.tricks_won[m.declarer] : '?') + ' \u2014 <b>' + (m.made ? 'made' : 'set') + '</b>; ' +
      (m.points || []).map(function (x, j) { return P(j) + ' ' + signed(x); }).join(', ');
    scores = [];
    break;
  default:
    t = genericText(m);
  }
  if (scores.length) {
    var sc = scores.map(function (x) { return P(x.seat) + ' ' + signed(x.points) + ' (' + reasonText(x.reason) + ') \u2192 ' + x.total; });
    t += (t ? ' \u00b7 ' : '') + sc.join(', ');
  }
  if (DEFAULTED[step.main]) extra.push('the referee\u2019s default action for ' + P(m.seat));
  if (extra.length) t += ' <span class="ctx">[' + extra.join('; ') + ']</span>';
  return t;
}
function actorOf(m) {
  if (!m) return null;
  if (typeof m.seat === 'number' && m.type !== 'stock_reshuffled') return m.seat;
  if (m.type === 'deal_started') return m.dealer;
  if (m.type === 'first_dealer_cut') return m.dealer;
  if (m.type === 'showdown' && m.winners && m.winners.length) return m.winners[0];
  if ((m.type === 'game_ended' || m.type === '@result') && typeof m.winner === 'number') return m.winner;
  if (m.type === 'hand_scored') return m.declarer;
  return null;
}

// ------------------------------------------------------------ cards
function sortCards(cards) {
  return cards.slice().sort(function (a, b) {
    var d = SUIT_ORDER[a.charAt(1)] - SUIT_ORDER[b.charAt(1)];
    return d || RANKS.indexOf(b.charAt(0)) - RANKS.indexOf(a.charAt(0));
  });
}
function faceHTML(c, seat, cls) {
  var r = c.charAt(0), su = c.charAt(1);
  return '<div class="card face' + (RED[su] ? ' red' : '') + (cls ? ' ' + cls : '') + '" data-card="' + esc(c) +
    '" data-seat="' + seat + '" title="' + esc(cardText(c)) + '"><span class="r">' + rankText(r) + '</span><span class="s">' +
    (SUIT[su] || su) + '</span><span class="p">' + (SUIT[su] || su) + '</span></div>';
}
function backHTML(seat, cls) { return '<div class="card back' + (cls ? ' ' + cls : '') + '" data-seat="' + seat + '"></div>'; }

// ------------------------------------------------------------ page state
var cur = 0, view = -1, timer = null, hashTimer = null;
var seatEls = [];
function build() {
  $('title').textContent = D.title + ' \u00b7 game ' + D.game_id;
  $('meta').textContent = NAMES.map(function (n, i) { return 'P' + i + ' ' + n; }).join(' \u00b7 ') +
    ' \u00b7 seed ' + D.seed + (D.rules && D.rules.target_score ? ' \u00b7 target ' + D.rules.target_score : '');
  $('rules').textContent = JSON.stringify({game: D.game, referee: D.referee, seed: D.seed, match_seed: D.match_seed,
    deal_set: D.deal_set, players: NAMES, rules: D.rules}, null, 1);
  var table = $('table');
  table.classList.add('n' + N);
  for (var s = 0; s < N; s++) {
    var el = document.createElement('div');
    el.className = 'seat';
    el.setAttribute('data-seat', s);
    el.innerHTML = '<div class="plate"><span class="dot" style="background:' + COLORS[s] + '"></span>' +
      '<span class="pname"><span class="sn">P' + s + '</span>' + esc(NAMES[s] || '?') + '</span><span class="badges"></span>' +
      '<span class="tricks"></span><span class="pscore" data-seat="' + s + '">0</span><span class="delta"></span></div>' +
      '<div class="hand" data-seat="' + s + '"></div>';
    table.appendChild(el);
    seatEls.push(el);
  }
  var vs = $('views'), html = '<button id="view-all" data-view="-1">All</button>';
  for (s = 0; s < N; s++) html += '<button id="view-' + s + '" data-view="' + s + '" title="' + esc(NAMES[s]) + '">Seat ' + s + '</button>';
  vs.innerHTML = html;
  var sb = '';
  for (s = 0; s < N; s++) sb += '<tr data-seat="' + s + '"><td><span class="dot" style="background:' + COLORS[s] + '"></span></td><td>P' + s +
    '</td><td>' + esc(NAMES[s]) + '</td><td class="sc" data-role="score" data-seat="' + s + '">0</td></tr>';
  $('scoreboard').innerHTML = sb;
  var dl = '';
  DEALS.forEach(function (d, i) {
    dl += '<li data-deal="' + (i + 1) + '"><button data-deal="' + (i + 1) + '" data-step="' + d.step + '"><span>Deal ' + d.deal +
      (d.tiebreak ? ' (tie-break)' : '') + ' \u00b7 P' + d.dealer + ' deals</span><span class="dsc">' + (d.scores || []).join(' : ') + '</span></button></li>';
  });
  $('deals').innerHTML = dl;
  $('scrub').max = STEPS.length - 1;
  buildChart();
  $('legend').innerHTML = NAMES.map(function (n, i) {
    return '<span><span class="dot" style="background:' + COLORS[i] + '"></span> P' + i + ' ' + esc(n) + '</span>';
  }).join('');
}

// ------------------------------------------------------------ chart
var CH = {w: 320, h: 170, l: 34, r: 8, t: 8, b: 20};
function buildChart() {
  var pts = [zeros()];
  DEALS.forEach(function (d) { pts.push(d.scores || pts[pts.length - 1]); });
  var fin = FINAL && FINAL.scores;
  if (fin && pts.length > 1 && pts[pts.length - 1].join() !== fin.join()) pts[pts.length - 1] = fin.slice();
  var lo = 0, hi = 1, target = D.rules && D.rules.target_score;
  pts.forEach(function (p) { p.forEach(function (x) { lo = Math.min(lo, x); hi = Math.max(hi, x); }); });
  if (target && target <= hi * 1.5) hi = Math.max(hi, target);
  var nx = Math.max(1, pts.length - 1), W = CH.w - CH.l - CH.r, H = CH.h - CH.t - CH.b;
  CH.nx = nx;
  var X = function (i) { return CH.l + W * i / nx; }, Y = function (v) { return CH.t + H * (1 - (v - lo) / (hi - lo)); };
  var svg = '<svg id="chart-svg" viewBox="0 0 ' + CH.w + ' ' + CH.h + '" role="img" aria-label="scores per deal">';
  svg += '<rect x="' + CH.l + '" y="' + CH.t + '" width="' + W + '" height="' + H + '" fill="#1a1f27" stroke="#3a4350"/>';
  [lo, hi].concat(lo < 0 ? [0] : []).forEach(function (v) {
    svg += '<text x="' + (CH.l - 4) + '" y="' + (Y(v) + 4) + '" fill="#9aa5b4" font-size="10" text-anchor="end">' + v + '</text>';
  });
  if (lo < 0) svg += '<line x1="' + CH.l + '" x2="' + (CH.l + W) + '" y1="' + Y(0) + '" y2="' + Y(0) + '" stroke="#556"/>';
  if (target && target <= hi) svg += '<line x1="' + CH.l + '" x2="' + (CH.l + W) + '" y1="' + Y(target) + '" y2="' + Y(target) +
    '" stroke="#ffd54f" stroke-dasharray="4 3" opacity=".6"/><text x="' + (CH.l + 3) + '" y="' + (Y(target) - 3) +
    '" fill="#ffd54f" font-size="9" opacity=".8">target ' + target + '</text>';
  svg += '<text x="' + CH.l + '" y="' + (CH.h - 6) + '" fill="#9aa5b4" font-size="10">0</text>';
  svg += '<text x="' + (CH.l + W) + '" y="' + (CH.h - 6) + '" fill="#9aa5b4" font-size="10" text-anchor="end">deal ' + (pts.length - 1) + '</text>';
  for (var s = 0; s < N; s++) {
    var line = pts.map(function (p, i) { return X(i).toFixed(1) + ',' + Y(p[s]).toFixed(1); }).join(' ');
    svg += '<polyline points="' + line + '" fill="none" stroke="' + COLORS[s] + '" stroke-width="' + (pts.length > 120 ? 1.2 : 2) +
      '" stroke-linejoin="round"/>';
    if (pts.length <= 60) pts.forEach(function (p, i) {
      if (i) svg += '<circle cx="' + X(i).toFixed(1) + '" cy="' + Y(p[s]).toFixed(1) + '" r="2.2" fill="' + COLORS[s] + '"/>';
    });
  }
  svg += '<line id="chart-now" x1="0" x2="0" y1="' + CH.t + '" y2="' + (CH.t + H) + '" stroke="#fff" stroke-width="1" opacity=".55"/>';
  svg += '</svg>';
  $('chart').innerHTML = svg;
  CH.X = X;
}

// ------------------------------------------------------------ render
var LAST = null;  // the last state computed: one Next continues it instead of replaying the deal
function stateAt(k) {
  var start = checkpointOf(k), st, log, j;
  if (LAST && LAST.view === view && LAST.k === k - 1 && checkpointOf(k - 1) === start) {
    st = LAST.st; log = LAST.log; j = k;
  } else {
    var c = CHECK[start];
    st = fresh(); log = []; j = start;
    if (c) { st.scores = c.scores.slice(); st.failed = c.failed.slice(); st.pending = clone(c.pending); }
  }
  for (; j <= k; j++) {
    st.delta = zeros(); st.newCards = lists();
    for (var i = STEPS[j].a; i < STEPS[j].b; i++) apply(st, item(i));
    log.push({step: j, html: describe(j, st, view)});
  }
  LAST = {k: k, view: view, st: st, log: log};
  return {st: st, log: log};
}
// Scrolling reads layout: once per frame, not once per step (holding an arrow key stays fast).
var scrollPending = false;
function syncScroll() {
  scrollPending = false;
  var ol = $('dealog'); ol.scrollTop = ol.scrollHeight;
  var box = $('deals'), li = box.querySelector('li.cur');
  if (li && (li.offsetTop < box.scrollTop || li.offsetTop + li.offsetHeight > box.scrollTop + box.clientHeight))
    box.scrollTop = li.offsetTop - box.clientHeight / 2;
}
function posOf(seat) { var base = view >= 0 ? view : 0; return POS[(seat - base + N) % N]; }

function render() {
  var r = stateAt(cur), st = r.st, m = item(STEPS[cur].main), actor = actorOf(m);
  // seats
  for (var s = 0; s < N; s++) {
    var el = seatEls[s], pos = posOf(s);
    el.className = 'seat pos-' + pos + (s === actor ? ' actor' : '') + (s === view ? ' viewer' : '') +
      (st.active && st.active.indexOf(s) < 0 ? ' out' : '');
    var badges = '';
    if (s === view) badges += '<span class="badge you">you</span>';
    if (st.dealer === s && st.deal) badges += '<span class="badge dealer" title="dealer">D</span>';
    if (st.declarer === s) badges += '<span class="badge decl">' + (D.game === 'chicago' ? 'Chicago' : 'declarer ' + esc(bidText(st.contract))) + '</span>';
    if (st.swapped === s) badges += '<span class="badge">ghost</span>';
    if (st.failed.indexOf(s) >= 0) badges += '<span class="badge fail" title="failure">!</span>';
    if (st.active && st.active.indexOf(s) < 0) badges += '<span class="badge">sits out</span>';
    el.querySelector('.pscore').textContent = st.scores[s];
    var dl = el.querySelector('.delta');
    dl.textContent = st.delta[s] ? signed(st.delta[s]) : '';
    dl.className = 'delta' + (st.delta[s] < 0 ? ' neg' : '');
    var tw = st.tricksWon[s];
    el.querySelector('.tricks').textContent = tw ? new Array(tw + 1).join('\u25cf') : '';
    el.querySelector('.tricks').title = tw + (tw === 1 ? ' trick' : ' tricks');
    var hand = sortCards(st.hands[s]), h = '';
    var own = view < 0 || view === s;
    hand.forEach(function (c) {
      var fresh_ = st.newCards[s].indexOf(c) >= 0;
      if (own) h += faceHTML(c, s, fresh_ ? 'new' : '');
      else if (st.known[view][s].indexOf(c) >= 0) h += faceHTML(c, s, 'known');
      else h += backHTML(s, '');
    });
    if (!hand.length && st.shown[s]) {  // shown after the tricks: the final showdown
      h = st.shown[s].cards.map(function (c) { return faceHTML(c, s, 'shown-card'); }).join('');
    }
    if (st.shown[s]) badges += '<span class="badge shown">shown: ' + esc(reasonText(st.shown[s].reason)) + '</span>';
    el.querySelector('.badges').innerHTML = badges;
    var hel = el.querySelector('.hand');
    hel.innerHTML = h || '<span class="empty">' + (st.deal ? 'no cards' : '') + '</span>';
    hel.setAttribute('data-count', hand.length);
  }
  // centre
  var info = [];
  if (st.deal) info.push('Deal ' + st.deal + (st.tiebreak ? ' (tie-break)' : ''));
  if (st.phase === 'exchange' && st.round) info.push('exchange ' + st.round + (D.rules && D.rules.exchanges ? '/' + D.rules.exchanges : ''));
  else if (st.phase === 'trick' && st.trickNo) info.push('trick ' + st.trickNo);
  else if (st.phase) info.push(st.phase);
  if (st.stock !== null && st.deal) info.push('stock ' + st.stock);
  $('info').textContent = info.join(' \u00b7 ');
  var th = '';
  if (st.trick.length) {
    st.trick.forEach(function (pc) {
      var win = st.trickWin && st.trickWin.card === pc.card;
      th += '<div class="slot t-' + posOf(pc.seat) + '">' + faceHTML(pc.card, pc.seat, win ? 'win' : '') +
        '<span class="who">P' + pc.seat + '</span></div>';
    });
  } else if (!st.deal && st.cut && st.cut.rounds && st.cut.rounds.length) {
    st.cut.rounds[st.cut.rounds.length - 1].forEach(function (pc) {
      th += '<div class="slot t-' + posOf(pc.seat) + '">' + faceHTML(pc.card, pc.seat, pc.seat === st.cut.dealer ? 'win' : '') +
        '<span class="who">P' + pc.seat + ' cuts</span></div>';
    });
  }
  $('trick').innerHTML = th;
  var ex = '';
  if (st.open) ex += '<span class="pill">open card for P' + st.open.seat + ' ' + faceHTML(st.open.card, st.open.seat, 'mini') + '</span>';
  if (st.trump) ex += '<span class="pill">trump <span class="big ' + (RED[st.trump] ? 'red' : '') + '">' + SUIT[st.trump] +
    '</span> P' + st.declarer + ' bid ' + esc(bidText(st.contract)) + '</span>';
  if (D.game === 'ghost_euchre' && st.deal) {
    ex += '<span class="pill">' + (st.swapped === null ? 'ghost hand' : 'dead hand') + ' ' + backHTML(-1, 'mini') + '</span>';
    if (!st.trump && st.bids.length) {
      var hb = null; st.bids.forEach(function (b) { if (b.bid !== null && b.bid !== undefined) hb = b; });
      if (hb) ex += '<span class="pill">high bid ' + esc(bidText(hb.bid)) + ' by P' + hb.seat + '</span>';
    }
  }
  $('extra').innerHTML = ex;
  // status, counters, scoreboard
  var stt = $('status');
  stt.innerHTML = r.log[r.log.length - 1].html;
  stt.style.borderLeftColor = actor !== null && actor >= 0 && actor < N ? COLORS[actor] : '#ffd54f';
  stt.setAttribute('data-type', m ? m.type : '');
  $('stepinfo').textContent = 'step ' + (cur + 1) + ' / ' + STEPS.length;
  $('scrub').value = cur;
  $('first').disabled = $('prev').disabled = cur === 0;
  $('next').disabled = $('last').disabled = cur === STEPS.length - 1;
  var best = Math.max.apply(null, st.scores);
  for (s = 0; s < N; s++) {
    var row = $('scoreboard').rows[s];
    row.cells[3].textContent = st.scores[s];
    row.className = (st.scores[s] === best && best > 0 ? 'lead' : '') + (s === actor ? ' actor' : '');
  }
  document.body.setAttribute('data-step', cur);
  document.body.setAttribute('data-view', view);
  document.body.setAttribute('data-deal', st.deal);
  // this deal's log
  var ol = $('dealog'), lastLi = ol.lastElementChild;
  if (lastLi && +lastLi.getAttribute('data-step') === cur - 1 && ol.children.length === r.log.length - 1) {
    lastLi.className = '';
    var li = document.createElement('li');
    li.setAttribute('data-step', cur); li.className = 'cur'; li.innerHTML = r.log[r.log.length - 1].html;
    ol.appendChild(li);
  } else {
    ol.innerHTML = r.log.map(function (e) {
      return '<li data-step="' + e.step + '"' + (e.step === cur ? ' class="cur"' : '') + '>' + e.html + '</li>';
    }).join('');
  }
  // deal list and chart marker
  var dealIdx = STEPS[cur].deal, lis = $('deals').children, prevCur = $('deals').querySelector('li.cur');
  if (prevCur) prevCur.classList.remove('cur');
  if (dealIdx) lis[dealIdx - 1].classList.add('cur');
  if (!scrollPending) { scrollPending = true; requestAnimationFrame(syncScroll); }
  var now = $('chart-now');
  if (now) {
    var done = st.phase === 'deal over' || st.over || !dealIdx ? dealIdx : dealIdx - 0.5;
    var x = CH.X(Math.min(done, CH.nx)); now.setAttribute('x1', x); now.setAttribute('x2', x);
  }
  // views
  var vb = $('views').children;
  for (var i = 0; i < vb.length; i++) vb[i].classList.toggle('on', +vb[i].getAttribute('data-view') === view);
  clearTimeout(hashTimer);  // the URL keeps the step and view (debounced: browsers throttle history updates)
  hashTimer = setTimeout(function () {
    try { history.replaceState(null, '', '#' + cur + (view >= 0 ? '/' + view : '')); } catch (e) { /* file:// may refuse */ }
  }, 400);
}

// ------------------------------------------------------------ controls
function go(k) { cur = Math.max(0, Math.min(STEPS.length - 1, k)); render(); if (cur === STEPS.length - 1) stop(); }
function setView(v) { view = v >= -1 && v < N ? v : -1; render(); }
function stop() { if (timer) { clearInterval(timer); timer = null; } $('play').innerHTML = '&#x25B6; Play'; $('play').classList.remove('on'); }
function play() {
  if (timer) { stop(); return; }
  if (cur === STEPS.length - 1) go(0);
  $('play').innerHTML = '|| Pause'; $('play').classList.add('on');
  timer = setInterval(function () { go(cur + 1); }, +$('speed').value);
}
function dealJump(d) {
  var idx = STEPS[cur].deal;
  if (d < 0) {  // previous: start of this deal, or the one before if already there
    var here = idx ? DEALS[idx - 1].step : 0;
    go(cur > here ? here : idx > 1 ? DEALS[idx - 2].step : 0);
  } else go(idx < DEALS.length ? DEALS[idx].step : STEPS.length - 1);
}
function speed(dir) {
  var sel = $('speed'); sel.selectedIndex = Math.max(0, Math.min(sel.options.length - 1, sel.selectedIndex + dir));
  if (timer) { stop(); play(); }
}
function on(id, fn) { $(id).addEventListener('click', function (e) { fn(e); if (this.blur) this.blur(); }); }
on('first', function () { stop(); go(0); });
on('prev', function () { stop(); go(cur - 1); });
on('next', function () { go(cur + 1); });
on('last', function () { stop(); go(STEPS.length - 1); });
on('play', play);
$('speed').addEventListener('change', function () { if (timer) { stop(); play(); } this.blur(); });
$('scrub').addEventListener('input', function () { go(+this.value); });
$('views').addEventListener('click', function (e) {
  var b = e.target.closest('button'); if (b) { setView(+b.getAttribute('data-view')); b.blur(); }
});
$('deals').addEventListener('click', function (e) {
  var b = e.target.closest('button'); if (b) { stop(); go(+b.getAttribute('data-step')); b.blur(); }
});
$('dealog').addEventListener('click', function (e) {
  var li = e.target.closest('li'); if (li) { stop(); go(+li.getAttribute('data-step')); }
});
$('chart').addEventListener('click', function (e) {
  var svg = $('chart-svg'); if (!svg || !DEALS.length) return;
  var rect = svg.getBoundingClientRect(), x = (e.clientX - rect.left) * CH.w / rect.width;
  var i = Math.round((x - CH.l) / (CH.w - CH.l - CH.r) * CH.nx);
  i = Math.max(1, Math.min(DEALS.length, i));
  stop(); go(DEALS[i - 1].step);
});
document.addEventListener('keydown', function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  var tag = e.target && e.target.tagName;
  if (tag === 'SELECT' || (tag === 'INPUT' && /Arrow|Home|End|Page/.test(e.key))) return;
  var k = e.key, done = true;
  if (k === 'ArrowRight') go(cur + 1);
  else if (k === 'ArrowLeft') { stop(); go(cur - 1); }
  else if (k === ' ' || k === 'Spacebar') play();
  else if (k === 'Home') { stop(); go(0); }
  else if (k === 'End') { stop(); go(STEPS.length - 1); }
  else if (k === 'PageDown') { stop(); dealJump(1); }
  else if (k === 'PageUp') { stop(); dealJump(-1); }
  else if (k === 'a' || k === 'A') setView(-1);
  else if (k === 'v' || k === 'V') setView(view + 1 >= N ? -1 : view + 1);
  else if (/^[0-9]$/.test(k) && +k < N) setView(+k);
  else if (k === '+' || k === '=') speed(1);
  else if (k === '-' || k === '_') speed(-1);
  else done = false;
  if (done) e.preventDefault();
});

// ------------------------------------------------------------ start
build();
(function () {
  var m = /^#(\d+)(?:\/(\d+))?$/.exec(location.hash || '');
  if (m) { cur = Math.min(STEPS.length - 1, +m[1]); if (m[2] !== undefined && +m[2] < N) view = +m[2]; }
})();
render();
window.replay = {
  steps: STEPS.length, deals: DEALS.length, go: go, setView: setView,
  step: function () { return cur; }, view: function () { return view; },
  finalScores: function () { return FINAL.scores.slice(); },
  types: function () { return STEPS.map(function (s) { return s.main >= 0 ? typeName(s.main) : null; }); }
};
})();
"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m referee.html_replay LOG.jsonl OUT.html", file=sys.stderr)
        return 2
    write_html(Path(args[0]), Path(args[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
