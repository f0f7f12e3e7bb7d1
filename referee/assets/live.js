// The live dashboard and the live table: no build step, no network beyond this server.
(function () {
'use strict';
var $ = function (id) { return document.getElementById(id); };
// Names are text from bots: markup escaped, the characters that steer or hide (controls, bidi
// overrides, zero-width) shown as escapes, and each name isolated (<bdi>) from the scores beside it.
var HIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
function shown(t) { return String(t).replace(HIDDEN, function (c) { return '\\u' + ('0000' + c.charCodeAt(0).toString(16)).slice(-4); }); }
function esc(t) { return shown(t === null || t === undefined ? '' : t).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
function bdi(t) { return '<bdi>' + esc(t) + '</bdi>'; }
function num(x, d) { return x === null || x === undefined ? '\u2013' : (+x).toFixed(d); }
function pct(x) { return x === null || x === undefined ? '\u2013' : (100 * x).toFixed(1) + '%'; }
function dur(s) {
  if (s === null || s === undefined) return '\u2013';
  s = Math.round(s); var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), x = s % 60;
  return (h ? h + 'h ' : '') + (h || m ? m + 'm ' : '') + x + 's';
}
function fails(f) { var k = Object.keys(f || {}); return k.length ? k.sort().map(function (r) { return r + ' ' + f[r]; }).join(', ') : ''; }
function connected(ok) { var c = $('conn'); c.textContent = ok ? 'live' : 'reconnecting\u2026'; c.className = 'conn ' + (ok ? 'ok' : 'bad'); }

// ------------------------------------------------------------ the dashboard
var LAST = null;
function standingsRows(d) {
  var s = d.standings, head, rows = [];
  if (s) {
    var wld = s.table_size === 2 ? 'W-L-D' : 'pair W-L-D';
    head = ['#', 'bot', 'Elo', '\u00b195%', 'games', 'points', 'score %', wld, '1st %', 'avg place', 'failures'];
    s.standings.forEach(function (b) {
      rows.push({bot: b.bot, cells: [esc(b.rank), b.bot, esc(num(b.elo, 0)) + (b.flag ? ' <span class="flag">' + esc(b.flag) + '</span>' : ''),
        esc(num(b.err95, 0)), esc(b.games), esc(b.points), esc(pct(b.score)), esc(b.pair_wins + '-' + b.pair_losses + '-' + b.pair_draws),
        esc(pct(b.games ? b.wins / b.games : null)), esc(num(b.avg_place, 2)), esc(fails(b.failures))]});
    });
    $('standings-note').textContent = s.ratings_note || '';
  } else {
    head = ['#', 'bot', 'games', 'wins', 'win %', 'points', 'failures'];
    (d.tally || []).forEach(function (b, i) {
      rows.push({bot: b.bot, cells: [i + 1, b.bot, esc(b.games), esc(b.wins), esc(pct(b.games ? b.wins / b.games : null)), esc(b.points),
        esc(fails(b.failures))]});
    });
    $('standings-note').textContent = 'Counted from the games finished while the stream was written.';
  }
  return {head: head, rows: rows};
}
function renderDashboard(d) {
  var p = d.progress, run = d.run || {};
  document.title = shown(d.title || 'chicago-referee') + ': live';
  $('title').textContent = shown(d.title || 'chicago-referee live');
  $('runinfo').textContent = [run.source, run.game, run.status ? 'run ' + run.status : (run.source ? 'running' : 'no live stream yet'),
    d.reveal_delay !== null && d.reveal_delay !== undefined ? 'all cards after ' + d.reveal_delay + ' s' : 'public view'].filter(Boolean).join(' \u00b7 ');
  $('finished').textContent = p.finished; $('scheduled').textContent = p.scheduled || '\u2013';  // an arena plays on: no total
  $('running-count').textContent = p.running;
  $('rate').textContent = p.per_minute === null ? '\u2013' : p.per_minute.toFixed(1);
  $('eta').textContent = p.eta_s === null ? (p.scheduled && p.finished >= p.scheduled ? 'done' : '\u2013') : dur(p.eta_s);
  $('bar-fill').style.width = (p.scheduled ? Math.min(100, 100 * p.finished / p.scheduled) : 0) + '%';
  var st = standingsRows(d), prev = {};
  if (LAST) standingsRows(LAST).rows.forEach(function (r) { prev[r.bot] = r.cells.join('|'); });
  $('standings').tHead.innerHTML = '<tr>' + st.head.map(function (h, i) { return '<th' + (i === 1 ? ' class="l"' : '') + '>' + esc(h) + '</th>'; }).join('') + '</tr>';
  $('standings').tBodies[0].innerHTML = st.rows.map(function (r) {
    var changed = LAST && prev[r.bot] !== r.cells.join('|');
    return '<tr data-bot="' + esc(r.bot) + '"' + (changed ? ' class="fresh"' : '') + '>' + r.cells.map(function (c, i) {
      return '<td' + (i === 1 ? ' class="l"' : '') + '>' + (i === 1 ? bdi(c) : c) + '</td>';
    }).join('') + '</tr>';
  }).join('');
  $('running').tBodies[0].innerHTML = d.running.map(function (g) {
    return '<tr data-game="' + esc(g.game_id) + '"><td>' + esc(g.game_id) + '</td><td class="l">' + g.seats.map(bdi).join(' vs ') +
      '</td><td>' + esc(g.scores.join(' : ')) + '</td><td>' + esc(g.decisions) + '</td><td><a class="watch" href="game/' + esc(g.game_id) + '">watch</a></td></tr>';
  }).join('');
  $('running-empty').hidden = d.running.length > 0;
  $('recent').tBodies[0].innerHTML = d.recent.map(function (g) {
    var res = g.winner !== null && g.winner !== undefined ? bdi(g.seats[g.winner]) + ' won' : 'no winner';
    if (g.reason) res += ' (' + esc(String(g.reason).replace(/_/g, ' ')) + ')';
    return '<tr data-game="' + esc(g.game_id) + '"><td>' + esc(g.game_id) + '</td><td class="l">' + g.seats.map(bdi).join(' vs ') +
      '</td><td>' + esc((g.scores || []).join(' : ')) + '</td><td class="l">' + res + '</td><td><a class="replay" href="game/' + esc(g.game_id) + '">replay</a></td></tr>';
  }).join('');
  var s = d.standings;
  if (s && s.los) {
    var names = s.standings.map(function (b) { return b.bot; }).filter(function (n) { return s.los[n]; });
    $('los').innerHTML = '<tr><th></th>' + names.map(function (n) { return '<th>' + bdi(n) + '</th>'; }).join('') + '</tr>' +
      names.map(function (a) {
        return '<tr><th class="l">' + bdi(a) + '</th>' + names.map(function (b) {
          var x = a === b ? null : s.los[a][b];
          return '<td class="' + (x >= 0.95 ? 'los-hi' : x !== null && x <= 0.05 ? 'los-lo' : '') + '">' + (a === b ? '' : pct(x)) + '</td>';
        }).join('') + '</tr>';
      }).join('');
    $('los-panel').hidden = false;
  }
  if (s && s.crosstable) {
    var all = s.standings.map(function (b) { return b.bot; });
    $('crosstable').innerHTML = '<tr><th></th>' + all.map(function (n) { return '<th>' + bdi(n) + '</th>'; }).join('') + '</tr>' +
      all.map(function (a) {
        return '<tr><th class="l">' + bdi(a) + '</th>' + all.map(function (b) {
          var w = (s.crosstable[a] || {})[b];
          return '<td>' + (a === b ? '' : w ? esc(w.w + '-' + w.l + '-' + w.d) : '-') + '</td>';
        }).join('') + '</tr>';
      }).join('');
    $('cross-panel').hidden = false;
  }
  LAST = d;
}
function dashboard() {
  var es = new EventSource('summary/events');
  es.addEventListener('summary', function (e) { connected(true); renderDashboard(JSON.parse(e.data)); });
  es.onerror = function () { connected(false); };
}

// ------------------------------------------------------------ the live table
// The replay page's frame comes once (assets/replay-shell.html); the game's
// rows come as server-sent events, only the new ones each time; the table is
// the frame with the data put in, rebuilt at most once a second. A finished
// game shows its own log's page (every card).
var MARK = '@@LIVE-DATA@@', ASSETS_MARK = '@@ASSETS@@';
function compact(rows) {  // rows [a, b, c, type, to, fields] -> the replay page's types and items
  rows.sort(function (x, y) { return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
  var fields = {}, order = [], items = [];
  rows.forEach(function (r) {
    var f = fields[r[3]];
    if (!f) { f = fields[r[3]] = []; order.push(r[3]); }
    Object.keys(r[5]).forEach(function (k) { if (f.indexOf(k) < 0) f.push(k); });
  });
  var index = {};
  order.forEach(function (t, i) { index[t] = i; });
  rows.forEach(function (r) {
    var v = fields[r[3]].map(function (k) { return r[5][k] === undefined ? null : r[5][k]; });
    while (v.length && v[v.length - 1] === null) v.pop();
    items.push(r[4] === -1 ? [index[r[3]]].concat(v) : [~index[r[3]], r[4]].concat(v));
  });
  return {types: order.map(function (t) { return [t].concat(fields[t]); }), items: items};
}
function table() {
  var base = location.pathname.replace(/\/+$/, ''), gid = base.split('/').pop(), follow = gid === 'follow';
  var shown = null, loading = false, shell = null, meta = null, rows = [], dirty = false, timer = null, built = 0;
  var finished = false, hold = 0, es = null;
  var HOLD_MS = 4000;  // following: a finished game stays on the table this long
  $('title').textContent = follow ? 'following the games in progress' : 'game ' + gid;
  function frame(src, then) {
    loading = true;
    var f = document.createElement('iframe');
    f.className = 'next'; f.title = 'game ' + (meta ? meta.game_id : gid);
    f.addEventListener('load', function () {
      if (shown) { if (shown.dataset.blob) URL.revokeObjectURL(shown.dataset.blob); shown.remove(); }
      f.className = ''; f.id = 'live-frame'; shown = f; loading = false;
      if (then) then();
    });
    f.src = src;
    $('frames').appendChild(f);
  }
  function fill(data, then) {  // the replay frame with `data` put in, at its newest step
    var json = JSON.stringify(data).replace(/<\//g, '<\\/').replace(/<!--/g, '<\\u0021--');
    var i = shell.indexOf(MARK);
    var url = URL.createObjectURL(new Blob([shell.slice(0, i), json, shell.slice(i + MARK.length)], {type: 'text/html'}));
    frame(url + '#999999', function () { shown.dataset.blob = url; then(); });
  }
  function build() {
    timer = null;
    if (finished || !shell || !meta || !dirty) return;
    var wait = Math.max(built + 1000, hold) - Date.now();  // at most once a second, however fast the game moves
    if (loading) wait = Math.max(wait, 100);
    if (wait > 0) { timer = setTimeout(build, wait); return; }
    dirty = false; built = Date.now();
    var data = {}, c = compact(rows.slice()), m = meta;
    Object.keys(m).forEach(function (k) { data[k] = m[k]; });
    data.types = c.types; data.items = c.items; data.result = null; data.cut_off = false;
    fill(data, function () {
      $('mode').textContent = m.reveal_delay !== null && m.reveal_delay !== undefined ?
        'live \u00b7 hidden cards shown once ' + m.reveal_delay + ' s old' : 'live \u00b7 public view: hidden cards stay hidden';
      if (follow) $('title').textContent = 'following the games in progress \u00b7 game ' + m.game_id;
    });
  }
  function later() { dirty = true; if (!timer) build(); }
  function finalPage(m, note) {  // a finished or older game: its log's data (every card) once its deal set is over, else the board's
    finished = true;
    if (!follow) es.close();
    if (timer) { clearTimeout(timer); timer = null; }
    if (follow && Date.now() < hold) return;  // still showing the last one: this game is skipped
    hold = Date.now() + HOLD_MS;
    var id = m.game_id === undefined ? gid : m.game_id;
    var got = m.data ? Promise.resolve(m.data) : fetch(base.replace(/[^\/]+$/, id) + '/data').then(function (r) {
      return r.json().then(function (j) { return r.ok ? j : {error: j.error || 'not available'}; });  // 404, or 503: busy
    });
    got.then(function (data) {
      (function wait() {
        if (loading || !shell) { setTimeout(wait, 100); return; }
        if (data.error) { $('mode').textContent = data.error; return; }
        fill(data, function () {
          $('mode').textContent = data.live ? 'finished: the public view, until every game of its deal set is over' : note;
        });
      })();
    }).catch(function () { connected(false); });
  }
  // The frame is a blob: document, where relative URLs mean nothing: its style and script come by full URL.
  var assets = new URL('../assets', location.href).href;
  fetch('../assets/replay-shell.html').then(function (r) { return r.text(); }).then(function (t) {
    shell = t.split(ASSETS_MARK).join(assets); later();
  });
  es = new EventSource(base + '/moves');
  es.addEventListener('start', function (e) {  // a game begins (or again, after a reconnect)
    connected(true);
    meta = JSON.parse(e.data); rows = []; finished = false; later();
  });
  es.addEventListener('moves', function (e) { connected(true); rows.push.apply(rows, JSON.parse(e.data)); later(); });
  es.addEventListener('over', function (e) { finalPage(JSON.parse(e.data), 'finished: every card is shown'); });
  es.addEventListener('gone', function (e) { finalPage(JSON.parse(e.data), 'an earlier game: its log, if it has one'); });
  es.onerror = function () { if (!finished || follow) connected(false); };
}

if ($('frames')) table(); else dashboard();
})();
