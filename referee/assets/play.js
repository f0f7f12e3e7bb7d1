// The browser seat. Every state arrives as one snapshot over server-sent events;
// choices go back with POST. The page never holds a card the seat may not see:
// other hands are drawn as backs from their card counts.
(function () {
'use strict';
var SUIT = {s: '\u2660', h: '\u2665', d: '\u2666', c: '\u2663'};
var SUITNAME = {s: 'spades', h: 'hearts', d: 'diamonds', c: 'clubs'};
var RED = {h: 1, d: 1};
var RANKS = '23456789TJQKA', SUIT_ORDER = {s: 0, h: 1, d: 2, c: 3};
var BASE = location.pathname.replace(/[^\/]*$/, '');
var $ = function (id) { return document.getElementById(id); };
var S = null, picked = {}, pickedFor = null, sending = false;
var CSRF = document.querySelector('meta[name="csrf-token"]').getAttribute('content');

// Text from bots is shown, never obeyed: markup escaped, the characters that steer or hide
// (controls, bidi overrides, zero-width) shown as escapes, and names isolated (<bdi>).
var HIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
function shown(t) { return String(t).replace(HIDDEN, function (c) { return '\\u' + ('0000' + c.charCodeAt(0).toString(16)).slice(-4); }); }
function esc(t) { return shown(t).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
function bdi(t) { return '<bdi>' + esc(t) + '</bdi>'; }
function dot(s) { return '<span class="dot pc' + (+s % 4) + '"></span>'; }
function rankText(r) { return r === 'T' ? '10' : r; }
function sortCards(cards) {
  return cards.slice().sort(function (a, b) {
    return SUIT_ORDER[a.charAt(1)] - SUIT_ORDER[b.charAt(1)] || RANKS.indexOf(b.charAt(0)) - RANKS.indexOf(a.charAt(0));
  });
}
function faceHTML(c, cls) {
  var r = c.charAt(0), su = c.charAt(1);
  return '<div class="card face' + (RED[su] ? ' red' : '') + (cls ? ' ' + cls : '') + '" data-card="' + esc(c) +
    '" title="' + esc(c) + '"><span class="r">' + rankText(r) + '</span><span class="s">' + SUIT[su] +
    '</span><span class="p">' + SUIT[su] + '</span></div>';
}
function backsHTML(n) { var h = ''; for (var i = 0; i < n; i++) h += '<div class="card back"></div>'; return h; }
function name(s) { return s === S.seat ? 'you' : S.names[s]; }

// Where each seat sits: the person at the bottom, the others clockwise.
function position(s) {
  var n = S.names.length, k = (s - S.seat + n) % n;
  if (k === 0) return 'bottom';
  if (n === 2) return 'top';
  if (n === 3) return k === 1 ? 'left' : 'right';
  return ['bottom', 'left', 'top', 'right'][k];
}
function handCount(v, s) {
  if (s === v.seat) return v.hand.length;
  if (v.active && v.active.indexOf(s) < 0) return 0;
  if (v.phase === 'game_over') return 0;
  var playedMe = v.trick.some(function (pc) { return pc.seat === v.seat; });
  var playedThem = v.trick.some(function (pc) { return pc.seat === s; });
  return Math.max(0, v.hand.length + (playedMe ? 1 : 0) - (playedThem ? 1 : 0));
}
function kindOf(a) { return a.action.type; }

function post(route, body) {
  if (sending) return;
  sending = true;
  // The page's own origin in `Origin` (its no-referrer policy would send "null") and the session's CSRF token.
  fetch(BASE + route, {method: 'POST', referrerPolicy: 'same-origin', headers: {'content-type': 'application/json', 'x-csrf-token': CSRF},
    body: JSON.stringify(body)})
    .then(function (r) { return r.json().then(function (j) { return {ok: r.ok, j: j}; }); })
    .then(function (res) { if (!res.ok) $('notice').textContent = res.j.error || 'refused'; })
    .catch(function () { $('notice').textContent = 'the referee did not answer'; })
    .then(function () { sending = false; });
}
function act(action) { $('notice').textContent = ''; post('act', {id: S.request_id, action: action}); }

function render() {
  var v = S.view, n = S.names.length;
  document.body.setAttribute('data-version', S.version);
  document.body.setAttribute('data-request', S.request_id == null ? '' : S.request_id);
  document.body.setAttribute('data-phase', S.over ? 'over' : v ? v.phase : '');
  $('title').textContent = shown(S.title);
  $('meta').textContent = S.game_id ? 'game ' + S.game_id + ' \u00b7 you are seat ' + S.seat : '';
  if (pickedFor !== S.request_id) { picked = {}; pickedFor = S.request_id; }
  var table = $('table');
  table.className = 'table n' + n;
  Array.prototype.slice.call(table.querySelectorAll('.seat')).forEach(function (el) { el.remove(); });
  var kinds = S.legal.map(kindOf);
  var playable = {};
  S.legal.forEach(function (a) { if (a.action.type === 'play') playable[a.action.card] = true; });
  var exchanging = kinds.indexOf('exchange') >= 0;
  for (var s = 0; s < n && v; s++) {
    var el = document.createElement('div');
    el.className = 'seat pos-' + position(s) + (s === S.seat ? ' viewer' : '') + (S.request_id && s === S.seat ? ' actor' : '');
    var badges = '';
    if (s === v.dealer) badges += '<span class="badge dealer">dealer</span>';
    if (s === S.seat) badges += '<span class="badge you">you</span>';
    if (v.chicago_declarer === s || v.declarer === s) badges += '<span class="badge decl">declarer</span>';
    var hand;
    if (s === S.seat) {
      hand = sortCards(v.hand).map(function (c) {
        var cls = exchanging ? (picked[c] ? 'playable picked' : 'playable') : playable[c] ? 'playable' : (kinds.indexOf('play') >= 0 ? 'dim' : '');
        return faceHTML(c, cls);
      }).join('') || '<span class="empty">no cards</span>';
    } else {
      hand = backsHTML(handCount(v, s)) || '<span class="empty">no cards</span>';
    }
    el.innerHTML = '<div class="plate">' + dot(s) +
      '<span class="pname"><span class="sn">P' + s + '</span>' + bdi(S.names[s]) + (s === S.seat ? ' (you)' : '') +
      '</span><span class="badges">' + badges + '</span><span class="tricks">' + (v.tricks_won && v.tricks_won[s] ? v.tricks_won[s] + ' tr' : '') +
      '</span><span class="pscore" data-seat="' + s + '">' + v.scores[s] + '</span></div><div class="hand" data-seat="' + s + '">' + hand + '</div>';
    table.appendChild(el);
  }
  // the trick in the middle
  var trick = '';
  if (v) v.trick.forEach(function (pc) {
    trick += '<div class="slot t-' + position(pc.seat) + '"><span class="who">' + bdi(name(pc.seat)) + '</span>' + faceHTML(pc.card, 'mini') + '</div>';
  });
  $('trick').innerHTML = trick;
  var info = '';
  if (v) {
    info = 'deal ' + v.deal + ' \u00b7 ' + v.phase.replace(/_/g, ' ');
    if (v.exchange_round) info += ' ' + v.exchange_round;
    if (v.trick_number) info += ' \u00b7 trick ' + v.trick_number;
    info += ' \u00b7 to ' + v.target_score;
  }
  $('info').textContent = info;
  var extra = '';
  if (v && v.trump) extra += '<span class="pill">trump <span class="big' + (RED[v.trump] ? ' red' : '') + '">' + SUIT[v.trump] + '</span> contract ' + esc(v.contract) + '</span>';
  if (v && v.open_card) extra += '<span class="pill">open card ' + faceHTML(v.open_card, 'mini') + '</span>';
  $('extra').innerHTML = extra;
  // status line and choices
  var status;
  if (S.over) status = '<b>' + esc(S.over.text) + '</b> final scores: ' + S.over.scores.map(function (x, j) { return bdi(name(j)) + ' ' + x; }).join(', ');
  else if (S.request_id && exchanging) status = Object.keys(picked).length
    ? 'Your turn: click more cards to discard, or press Exchange.'
    : 'Your turn: click the cards to discard (the button below then exchanges them), or press Keep all five.';
  else if (S.request_id && kinds.indexOf('play') >= 0) status = 'Your turn: click a card to play.';
  else if (S.request_id) status = 'Your turn: choose.';
  else status = v ? 'The others are playing\u2026' : 'Waiting for the game to start\u2026';
  $('status').innerHTML = status;
  if (S.notice) $('notice').textContent = S.notice;
  else if (!sending) $('notice').textContent = '';
  var acts = '';
  if (S.request_id) {
    if (exchanging) {
      var k = Object.keys(picked).length;
      acts += '<button id="exchange" class="primary">' + (k ? 'Exchange ' + k + ' card' + (k > 1 ? 's' : '') : 'Keep all five') + '</button>';
    }
    S.legal.forEach(function (a) {
      var t = a.action.type;
      if (t !== 'play' && t !== 'exchange') acts += '<button class="choice" data-n="' + a.n + '">' + esc(a.text) + '</button>';
    });
    acts += '<span class="spacer"></span><button id="resign" class="danger">Resign</button>';
  }
  if (S.ask_again) acts += '<button id="again" class="primary">Play again</button><button id="leave">Leave</button>';
  if (S.finished) acts += '<span>Thanks for playing. You can close this page.</span>';
  $('actions').innerHTML = acts;
  // side panels
  var sb = '';
  for (s = 0; s < n && v; s++) sb += '<tr><td>' + dot(s) + '</td><td>' + bdi(name(s)) +
    '</td><td class="sc" data-role="score" data-seat="' + s + '">' + v.scores[s] + '</td></tr>';
  $('scoreboard').innerHTML = sb;
  $('clock').textContent = S.clock ? 'your clock: ' + (S.clock.decision_ms / 1000).toFixed(1) + ' s for this decision' +
    (S.clock.bank_ms != null ? ', bank ' + (S.clock.bank_ms / 1000).toFixed(1) + ' s' : '') : 'no time limit for you';
  if (S.over) {
    $('final-panel').hidden = false;
    $('final').setAttribute('data-scores', JSON.stringify(S.over.scores));
    $('final').innerHTML = '<div class="big">' + esc(S.over.text) + '</div><table>' + S.over.scores.map(function (x, j) {
      return '<tr><td>' + bdi(name(j)) + '</td><td>place ' + S.over.placements[j] + '</td><td class="sc">' + x + '</td></tr>';
    }).join('') + '</table>';
  } else $('final-panel').hidden = true;
  var story = $('story');
  story.innerHTML = S.events.map(function (t) {
    var cls = /^deal \d+ begins|^game \d+/.test(t) ? 'sep' : /^you /.test(t) ? 'mine' : '';
    return '<li' + (cls ? ' class="' + cls + '"' : '') + '>' + esc(t) + '</li>';
  }).join('');
  story.scrollTop = story.scrollHeight;
}

document.addEventListener('click', function (e) {
  if (!S) return;
  var card = e.target.closest('.seat.viewer .card.playable');
  if (card) {
    var c = card.getAttribute('data-card');
    if (S.legal.some(function (a) { return a.action.type === 'exchange'; })) {
      if (picked[c]) delete picked[c]; else picked[c] = true;
      render();
    } else act({type: 'play', card: c});
    return;
  }
  var b = e.target.closest('button');
  if (!b) return;
  if (b.id === 'exchange') act({type: 'exchange', discard: sortCards(Object.keys(picked))});
  else if (b.id === 'resign') { if (confirm('Resign this game?')) post('resign', {}); }
  else if (b.id === 'again') post('again', {again: true});
  else if (b.id === 'leave') post('again', {again: false});
  else if (b.classList.contains('choice')) {
    var n = +b.getAttribute('data-n');
    act(S.legal[n - 1].action);
  }
});

function connect() {
  var es = new EventSource(BASE + 'events');
  es.addEventListener('state', function (e) {
    S = JSON.parse(e.data);
    $('conn').textContent = 'live';
    $('conn').className = 'conn live';
    render();
  });
  es.onerror = function () {
    $('conn').textContent = S && S.finished ? 'finished' : 'reconnecting\u2026';
    $('conn').className = 'conn lost';
  };
}
connect();
})();
