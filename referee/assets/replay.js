
(function () {
'use strict';
var D = JSON.parse(document.getElementById('replay-data').textContent);
var N = D.n, NAMES = D.players, HINTS = D.hints || {};  // hints: what the game's own table needs (GamePage)
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
  if (s !== undefined && s !== null && !seatNo(s)) return;  // no seat of this game (a crafted log): the table stays
  switch (it.type) {
  case 'first_dealer_cut':
    st.cut = it; st.dealer = it.dealer; break;
  case 'deal_started':
    // Scores, failures and pending discards carry over: the log writes the
    // game's first action before the events that opened the game.
    var keep = {scores: st.scores, failed: st.failed, delta: st.delta, pending: st.pending};
    var f = fresh(); for (var k in f) st[k] = f[k];
    for (k in keep) st[k] = keep[k];
    st.deal = it.deal; st.dealer = it.dealer; st.active = Array.isArray(it.active) ? it.active : null; st.tiebreak = !!it.tiebreak;
    st.stock = typeof it.stock_size === 'number' ? it.stock_size : null;
    st.phase = HINTS.first_phase === 'exchange' ? (st.stock !== null ? 'exchange' : '') : (HINTS.first_phase || '');
    break;
  case 'hand_dealt': case 'ghost_hand_taken':
    setHand(st, it, s, list(it.cards)); break;
  case '@start':  // a game started from a position: the table as it was (the seats' hands follow)
    st.deal = it.deal; st.dealer = it.dealer; st.active = Array.isArray(it.active) ? it.active : null; st.tiebreak = !!it.tiebreak;
    st.scores = (it.scores || zeros()).slice(); st.phase = it.phase || '';
    st.stock = typeof it.stock === 'number' ? it.stock : null; st.round = it.round || 0;
    st.trick = (it.trick || []).slice(); st.trickNo = it.trick_no || 0;
    st.tricksWon = (it.tricks_won || zeros()).slice();
    st.declarer = it.declarer === undefined ? null : it.declarer; st.contract = it.contract; st.trump = it.trump;
    st.bids = (it.bids || []).slice(); st.swapped = it.swapped === undefined ? null : it.swapped; st.open = it.open || null;
    st.shown = [];
    list(it.shown).forEach(function (x) { if (seatNo(prop(x, 'seat'))) st.shown[x.seat] = {cards: list(x.cards), reason: x.reason}; });
    break;
  case '@hand':  // seen by its seat only; others know just the cards it has shown
    var held = list(it.cards).slice();
    st.hands[s] = held;
    for (v = 0; v < N; v++) {
      st.known[v][s] = sees(it, v) ? held.slice() :
        (st.shown[s] ? st.shown[s].cards.filter(function (c) { return held.indexOf(c) >= 0; }) : []);
    }
    break;
  case 'drew':
    var cards = list(it.cards);
    st.hands[s] = st.hands[s].concat(cards);
    st.newCards[s] = st.newCards[s].concat(cards);
    for (v = 0; v < N; v++) if (sees(it, v)) st.known[v][s] = st.known[v][s].concat(cards);
    break;
  case '@action':
    var act = it.action || {};
    if (act.type === 'exchange') st.pending[s] = list(act.discard).slice();
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
    st.shown[s] = {cards: list(it.cards), reason: it.reason};
    for (v = 0; v < N; v++) if (sees(it, v)) {
      list(it.cards).forEach(function (c) {
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
var CARRY = {'@start': 1, score: 1, deal_ended: 1, game_ended: 1, hand_scored: 1, '@result': 1, '@failure': 1, '@action:exchange': 1};
(function () {
  var st = fresh(), cur = null;
  for (var k = 0; k < STEPS.length; k++) {
    var main = STEPS[k].main;
    if (main >= 0 && (typeName(main) === 'deal_started' || typeName(main) === '@start')) {
      CHECK[k] = {scores: st.scores.slice(), failed: st.failed.slice(), pending: clone(st.pending)};
      var m = item(main);
      cur = {deal: m.deal, step: k, dealer: m.dealer, scores: st.scores.slice(), tiebreak: !!m.tiebreak,
        start: typeName(main) === '@start' ? (m.scores || []).slice() : null};
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
// Text from a log is shown, never obeyed: markup escaped, and the characters that
// steer or hide (controls, bidi overrides, zero-width) shown as escapes, as in the terminal.
var HIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
function hex(c, n) { return ('0000' + c.charCodeAt(0).toString(16)).slice(-n); }
function shown(t) { return String(t).replace(HIDDEN, function (c) { return c.charCodeAt(0) < 256 ? '\\x' + hex(c, 2) : '\\u' + hex(c, 4); }); }
// Every field of a log is text: whatever it holds (a crafted log may hold markup where a number
// belongs), it reaches the page escaped (`esc`), and names are isolated (`<bdi>`).
function esc(t) { return shown(t).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
function bdi(t) { return '<bdi>' + esc(t) + '</bdi>'; }
function prop(o, k) { return o !== null && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined; }
function list(v) { return Array.isArray(v) ? v : []; }
function seatNo(s) { return typeof s === 'number' && s >= 0 && s < N && s % 1 === 0; }
function rankText(r) { return r === 'T' ? '10' : r; }
function cardText(c) { c = String(c); return rankText(c.charAt(0)) + (prop(SUIT, c.charAt(1)) || c.charAt(1)); }
function C(c) { return '<span class="cs' + (prop(RED, String(c).charAt(1)) ? ' red' : '') + '">' + esc(cardText(c)) + '</span>'; }
function CS(cards) { return list(cards).map(C).join(' '); }
function P(s) {
  if (!seatNo(s)) return esc(s);
  return '<span class="pn col' + s + '">P' + s + '</span>';
}
function PS(seats) { return list(seats).map(P).join(', '); }
function suitText(x) { return '<span class="cs' + (prop(RED, x) ? ' red' : '') + '">' + esc(prop(SUIT, x) || x) + '</span>'; }
function bidText(b) { return b === 'moon' ? 'the moon (all 6)' : String(b); }
function signed(n) { return (n > 0 ? '+' : n < 0 ? '\u2212' : '\u00b1') + Math.abs(n); }
var REASONS = {break_up: 'breaking up a scoring hand', scoring_hand: 'scoring hand', final_showdown: 'final showdown',
  last_trick: 'last trick', showdown: 'showdown', chicago: 'Chicago', chicago_failed: 'failed Chicago',
  target: 'target reached', tricks: 'tricks', contract_made: 'contract made', set: 'set', moon: 'moon',
  moon_failed: 'moon failed', renege: 'renege', forfeit: 'forfeit', tiebreak: 'tie-break', hand_limit: 'hand limit',
  deal_limit: 'deal limit', royal_flush: 'royal flush'};
function reasonText(r) { return prop(REASONS, r) || String(r || '').replace(/_/g, ' '); }
function why(r) { return esc(reasonText(r)); }
function genericText(it) {
  var parts = [];
  for (var k in it) if (k !== 'type' && k !== 'to' && it[k] !== null && it[k] !== undefined) {
    var val = it[k];
    parts.push(esc(k) + '=' + esc(typeof val === 'object' ? JSON.stringify(val) : String(val)));
  }
  return '<span class="ctx">' + esc(it.type) + '</span> ' + parts.join(' ');
}

var PRIVATE_SHOWN = {hand_dealt: 1, drew: 1, ghost_hand_taken: 1, '@hand': 1};  // described with the public event before them
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
    var rounds = list(m.rounds);
    t = rounds.length ? 'cut for the deal: ' + rounds.map(function (r) {
      return list(r).map(function (pc) { return P(prop(pc, 'seat')) + ' ' + C(prop(pc, 'card')); }).join(', ');
    }).join(' \u2192 ') + ' \u2014 ' + P(m.dealer) + ' deals first' : P(m.dealer) + ' deals first';
    break;
  case 'deal_started':
    t = '<b>Deal ' + esc(m.deal) + '</b>: ' + P(m.dealer) + ' deals' + (m.tiebreak ? ' \u2014 tie-break between ' + PS(m.active) : '');
    var mine = Object.keys(got).filter(function (x) { return view >= 0 && +x === view; });
    if (mine.length) t += '; you get ' + CS(got[view]);
    break;
  case 'hand_dealt': case 'ghost_hand_taken':
    t = P(s) + (m.type === 'hand_dealt' ? ' is dealt ' : ' holds the ghost hand ') + CS(m.cards); break;
  case '@start':
    t = '<b>Deal ' + esc(m.deal) + '</b>: ' + P(m.dealer) + ' deals — the game starts here, from a position (' +
      esc(m.phase) + '); scores ' + list(m.scores).map(function (x, j) { return P(j) + ' ' + esc(x); }).join(' · ');
    if (view >= 0) t += '; you hold ' + CS(sortCards(st.hands[view]));
    break;
  case 'exchanged':
    t = '<span class="ctx">exchange ' + esc(m.round) + '</span> ' + P(s) + (m.count ? ' discards ' + esc(m.count) : ' stands pat');
    if (m.count && (view < 0 || view === s) && seatNo(s) && st.lastDisc[s].length) t += ' (' + CS(st.lastDisc[s]) + ')';
    if (got[s]) t += ', draws ' + CS(got[s]);
    break;
  case 'drew':
    t = P(s) + ' draws ' + CS(m.cards); break;
  case 'stock_reshuffled':
    t = 'the discards are shuffled into a new stock of ' + esc(m.stock_size); break;
  case 'open_card':
    t = P(s) + '\u2019s open card: ' + C(m.card) + ' \u2014 take it or draw face down?'; break;
  case 'open_card_decision':
    var oc = st.lastOpen ? C(st.lastOpen.card) : 'the open card';
    t = m.take ? P(s) + ' takes ' + oc : P(s) + ' declines ' + oc + ' and draws face down' + (got[s] ? ': ' + CS(got[s]) : '');
    break;
  case 'hand_revealed':
    t = P(s) + ' shows ' + CS(m.cards) + ' (' + why(m.reason) + ')'; break;
  case 'showdown':
    var what = m.round === 0 ? 'final showdown' : 'showdown ' + esc(m.round);
    if (m.winners && m.winners.length) {
      t = what + ': ' + PS(m.winners) + ' score' + (m.winners.length > 1 ? '' : 's') + ' ' + esc(m.points) +
        (m.description ? ' (' + esc(m.description) + ')' : m.category ? ' (' + esc(m.category) + ')' : '');
    } else if (m.tied && m.tied.length) {
      t = what + ': exact tie between ' + PS(m.tied) + (m.description ? ' (' + esc(m.description) + ')' : '') + ', nobody scores';
    } else t = what + ': nobody scores';
    scores = [];
    break;
  case 'chicago_decision':
    t = m.call ? P(s) + ' calls <b>Chicago!</b>' : P(s) + ' does not call Chicago'; break;
  case 'card_played':
    t = P(s) + ' plays ' + C(m.card) + ' <span class="ctx gap">trick ' + esc(m.trick) + '</span>'; break;
  case 'trick_won':
    t = P(s) + ' wins trick ' + esc(m.trick) + ' with ' + C(m.card); break;
  case 'score':
    t = ''; break;
  case 'deal_ended':
    t = 'deal ' + esc(m.deal) + ' over \u2014 ' + list(m.scores).map(function (x, j) { return P(j) + ' ' + esc(x); }).join(' \u00b7 ');
    break;
  case 'game_ended': case '@result':
    var w = m.winner;
    t = '<b>Game over</b>: ' + (seatNo(w) ? P(w) + ' (' + bdi(NAMES[w]) + ') wins' : 'no single winner') +
      ' \u2014 ' + esc(list(m.scores).join(' : ')) + ' (' + why(m.reason) + ')';
    if (m.forfeited && m.forfeited.length) t += '; forfeited: ' + PS(m.forfeited);
    if (res && (res.reason !== m.reason || list(res.scores).join() !== list(m.scores).join() || res.winner !== m.winner)) {
      t += ' <span class="ctx">referee’s result:</span> ' + (typeof res.winner === 'number' ? P(res.winner) + ' wins' : 'no single winner') +
        ' — ' + esc(list(res.scores).join(' : ')) + ' (' + why(res.reason) + ')' +
        (res.forfeited && res.forfeited.length ? '; forfeited: ' + PS(res.forfeited) : '');
    }
    break;
  case '@failure':
    t = '<span class="ctx">failure</span> ' + P(s) + ' ' + why(m.reason) + (m.message ? ': ' + esc(m.message) : ''); break;
  case 'bid_made':
    t = m.bid === null || m.bid === undefined ? P(s) + ' passes' : P(s) + ' bids ' + esc(bidText(m.bid)); break;
  case 'ghost_swapped':
    t = P(s) + ' swaps for the ghost hand (the old hand is dead)' + (got[s] ? ': ' + CS(got[s]) : ''); break;
  case 'all_passed':
    t = 'everyone passed \u2014 no score; the deal passes to ' + P(m.next_dealer); break;
  case 'trump_named':
    t = P(s) + ' names ' + suitText(m.suit) + ' ' + (prop(SUITNAME, m.suit) || '') + ' trump, contract ' + esc(bidText(m.contract)); break;
  case 'renege':
    t = P(s) + ' reneged in trick ' + esc(m.trick) + ' with ' + C(m.card) + ' (' + suitText(m.led_suit) + ' led): ' + esc(signed(-m.penalty));
    break;
  case 'hand_scored':
    t = 'hand scored: ' + P(m.declarer) + ' bid ' + esc(bidText(m.contract)) + ' in ' + suitText(m.trump) + ', took ' +
      esc(prop(m.tricks_won, m.declarer) === undefined ? '?' : prop(m.tricks_won, m.declarer)) + ' \u2014 <b>' + (m.made ? 'made' : 'set') + '</b>; ' +
      list(m.points).map(function (x, j) { return P(j) + ' ' + esc(signed(x)); }).join(', ');
    scores = [];
    break;
  default:
    t = genericText(m);
  }
  if (scores.length) {
    var sc = scores.map(function (x) { return P(x.seat) + ' ' + esc(signed(x.points)) + ' (' + why(x.reason) + ') \u2192 ' + esc(x.total); });
    t += (t ? ' \u00b7 ' : '') + sc.join(', ');
  }
  if (DEFAULTED[step.main]) extra.push('the referee\u2019s default action for ' + P(m.seat));
  if (extra.length) t += ' <span class="ctx">[' + extra.join('; ') + ']</span>';
  return t;
}
function actorOf(m) {
  if (!m) return null;
  if (typeof m.seat === 'number' && m.type !== 'stock_reshuffled') return m.seat;
  if (m.type === 'deal_started' || m.type === '@start') return m.dealer;
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
  c = String(c);
  var r = c.charAt(0), su = c.charAt(1), suit = esc(prop(SUIT, su) || su);
  return '<div class="card face' + (prop(RED, su) ? ' red' : '') + (cls ? ' ' + cls : '') + '" data-card="' + esc(c) +
    '" data-seat="' + esc(seat) + '" title="' + esc(cardText(c)) + '"><span class="r">' + esc(rankText(r)) + '</span><span class="s">' +
    suit + '</span><span class="p">' + suit + '</span></div>';
}
function backHTML(seat, cls) { return '<div class="card back' + (cls ? ' ' + cls : '') + '" data-seat="' + esc(seat) + '"></div>'; }

// ------------------------------------------------------------ page state
var cur = 0, view = -1, timer = null, hashTimer = null;
var seatEls = [];
function build() {
  $('title').textContent = D.title + ' \u00b7 game ' + D.game_id;
  if (D.cut_off) {  // the referee stopped mid-game: show what there is, and say so
    var cut = document.createElement('div');
    cut.id = 'cutoff'; cut.className = 'cutoff';
    cut.textContent = 'This log is cut off: the game did not finish (was the referee stopped?). The replay shows what there is.';
    $('top').appendChild(cut);
  }
  $('meta').innerHTML = NAMES.map(function (n, i) { return 'P' + i + ' ' + bdi(n); }).join(' \u00b7 ') +
    esc(' \u00b7 seed ' + D.seed + (D.rules && D.rules.target_score ? ' \u00b7 target ' + D.rules.target_score : ''));
  $('rules').textContent = shown(JSON.stringify({game: D.game, referee: D.referee, seed: D.seed, match_seed: D.match_seed,
    deal_set: D.deal_set, players: NAMES, rules: D.rules}, null, 1));
  var table = $('table');
  table.classList.add('n' + N);
  for (var s = 0; s < N; s++) {
    var el = document.createElement('div');
    el.className = 'seat';
    el.setAttribute('data-seat', s);
    el.innerHTML = '<div class="plate"><span class="dot bg' + s % 4 + '"></span>' +
      '<span class="pname"><span class="sn">P' + s + '</span>' + bdi(NAMES[s] || '?') + '</span><span class="badges"></span>' +
      '<span class="tricks"></span><span class="pscore" data-seat="' + s + '">0</span><span class="delta"></span></div>' +
      '<div class="hand" data-seat="' + s + '"></div>';
    table.appendChild(el);
    seatEls.push(el);
  }
  var vs = $('views'), html = '<button id="view-all" data-view="-1">All</button>';
  for (s = 0; s < N; s++) html += '<button id="view-' + s + '" data-view="' + s + '" title="' + esc(NAMES[s]) + '">Seat ' + s + '</button>';
  vs.innerHTML = html;
  var sb = '';
  for (s = 0; s < N; s++) sb += '<tr data-seat="' + s + '"><td><span class="dot bg' + s % 4 + '"></span></td><td>P' + s +
    '</td><td>' + bdi(NAMES[s]) + '</td><td class="sc" data-role="score" data-seat="' + s + '">0</td></tr>';
  $('scoreboard').innerHTML = sb;
  var dl = '';
  DEALS.forEach(function (d, i) {
    dl += '<li data-deal="' + (i + 1) + '"><button data-deal="' + (i + 1) + '" data-step="' + d.step + '"><span>Deal ' + esc(d.deal) +
      (d.tiebreak ? ' (tie-break)' : '') + ' \u00b7 P' + esc(d.dealer) + ' deals</span><span class="dsc">' + esc(list(d.scores).join(' : ')) + '</span></button></li>';
  });
  $('deals').innerHTML = dl;
  $('scrub').max = STEPS.length - 1;
  buildChart();
  $('legend').innerHTML = NAMES.map(function (n, i) {
    return '<span><span class="dot bg' + i % 4 + '"></span> P' + i + ' ' + bdi(n) + '</span>';
  }).join('');
}

// ------------------------------------------------------------ chart
var CH = {w: 320, h: 170, l: 34, r: 8, t: 8, b: 20};
function buildChart() {
  var pts = [DEALS.length && DEALS[0].start ? DEALS[0].start : zeros()];  // a start position has its own scores
  DEALS.forEach(function (d) { pts.push(d.scores || pts[pts.length - 1]); });
  var fin = FINAL && FINAL.scores;
  if (fin && pts.length > 1 && pts[pts.length - 1].join() !== fin.join()) pts[pts.length - 1] = fin.slice();
  var lo = 0, hi = 1, target = D.rules && typeof D.rules.target_score === 'number' ? D.rules.target_score : null;
  pts = pts.map(function (p) {  // N numbers each, whatever a log held
    var q = list(p), out = [];
    for (var s = 0; s < N; s++) out.push(isFinite(q[s]) ? +q[s] : 0);
    return out;
  });
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
    if (st.declarer === s) badges += '<span class="badge decl">' + (HINTS.declarer_badge ? esc(HINTS.declarer_badge) : 'declarer ' + esc(bidText(st.contract))) + '</span>';
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
    if (st.shown[s]) badges += '<span class="badge shown">shown: ' + why(st.shown[s].reason) + '</span>';
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
        '<span class="who">P' + esc(pc.seat) + '</span></div>';
    });
  } else if (!st.deal && st.cut && list(st.cut.rounds).length) {
    list(st.cut.rounds[st.cut.rounds.length - 1]).forEach(function (pc) {
      th += '<div class="slot t-' + posOf(pc.seat) + '">' + faceHTML(pc.card, pc.seat, pc.seat === st.cut.dealer ? 'win' : '') +
        '<span class="who">P' + esc(pc.seat) + ' cuts</span></div>';
    });
  }
  $('trick').innerHTML = th;
  var ex = '';
  if (st.open) ex += '<span class="pill">open card for P' + esc(st.open.seat) + ' ' + faceHTML(st.open.card, st.open.seat, 'mini') + '</span>';
  if (st.trump) ex += '<span class="pill">trump <span class="big ' + (prop(RED, st.trump) ? 'red' : '') + '">' + esc(prop(SUIT, st.trump) || st.trump) +
    '</span> P' + esc(st.declarer) + ' bid ' + esc(bidText(st.contract)) + '</span>';
  if (HINTS.hidden_hand && st.deal) {  // a game with a hand nobody sees (Ghost Hand Euchre's ghost)
    ex += '<span class="pill">' + (st.swapped === null ? 'ghost hand' : 'dead hand') + ' ' + backHTML(-1, 'mini') + '</span>';
    if (!st.trump && st.bids.length) {
      var hb = null; st.bids.forEach(function (b) { if (b.bid !== null && b.bid !== undefined) hb = b; });
      if (hb) ex += '<span class="pill">high bid ' + esc(bidText(hb.bid)) + ' by P' + esc(hb.seat) + '</span>';
    }
  }
  $('extra').innerHTML = ex;
  // status, counters, scoreboard
  var stt = $('status');
  stt.innerHTML = r.log[r.log.length - 1].html;
  stt.style.borderLeftColor = actor !== null && actor >= 0 && actor < N ? COLORS[actor] : '#ffd54f';
  stt.setAttribute('data-type', m ? m.type : '');
  $('stepinfo').textContent = 'step ' + (cur + 1) + ' / ' + STEPS.length + (D.cut_off && cur === STEPS.length - 1 ? ' (the log is cut off here)' : '');
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
  clearTimeout(hashTimer);  // the URL keeps the step (numbered from 1, as shown) and the view (debounced: browsers throttle history updates)
  hashTimer = setTimeout(function () {
    try { history.replaceState(null, '', '#' + (cur + 1) + (view >= 0 ? '/' + view : '')); } catch (e) { /* file:// may refuse */ }
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
  if (m) { cur = Math.max(0, Math.min(STEPS.length - 1, +m[1] - 1)); if (m[2] !== undefined && +m[2] < N) view = +m[2]; }
  $('seatkeys').textContent = N > 1 ? '0\u2013' + (N - 1) : '0';
})();
render();
window.replay = {
  steps: STEPS.length, deals: DEALS.length, go: go, setView: setView,
  step: function () { return cur; }, view: function () { return view; },
  finalScores: function () { return FINAL.scores.slice(); },
  types: function () { return STEPS.map(function (s) { return s.main >= 0 ? typeName(s.main) : null; }); }
};
})();
