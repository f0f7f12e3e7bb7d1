#!/usr/bin/env node
// Sample bot in Node.js (v18+, no npm packages): a simple Chicago heuristic.
//
//   chicago-referee match "node sample_bots/js/chicago_bot.js" "python sample_bots/python/random_bot.py"
//
// Protocol: one JSON object per line on stdin/stdout (see protocol/messages.py).
// Every `request` carries the seat's `view` and a `legal` list of ready-made
// actions; we answer {"type":"action","id":<request id>,"action":<one of legal>}.
// For any game other than Chicago, or an action kind we do not know, we send a
// random element of `legal` verbatim, so this bot plays every game.
//
// stdout is the protocol: log to stderr only. Writes to a pipe are asynchronous
// in Node, so we never call process.exit(): on `bye` or end of input we stop
// reading and let Node exit once everything written has been flushed.

"use strict";

const readline = require("node:readline");

const NAME = "js-heuristic";
const VERSION = "1.0";
const RANKS = "23456789TJQKA";

function log(...args) {
  process.stderr.write(`${NAME}: ${args.join(" ")}\n`);
}

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

const rank = (card) => RANKS.indexOf(card[0]); // 0 (two) .. 12 (ace)
const suit = (card) => card[1];
const pick = (arr) => arr[Math.floor(Math.random() * arr.length)];

// ------------------------------------------------------------------ Chicago

// The cards worth keeping before an exchange: pairs/trips/quads, a made
// straight or flush (keep all), four to a flush, and high cards (Q, K, A).
function cardsToKeep(hand) {
  const byRank = new Map();
  const bySuit = new Map();
  for (const c of hand) {
    byRank.set(rank(c), (byRank.get(rank(c)) || 0) + 1);
    bySuit.set(suit(c), (bySuit.get(suit(c)) || 0) + 1);
  }
  const ranks = [...byRank.keys()].sort((a, b) => a - b);
  const straight =
    hand.length === 5 &&
    ranks.length === 5 &&
    (ranks[4] - ranks[0] === 4 || ranks.join(",") === "0,1,2,3,12"); // A-2-3-4-5
  const flushSuit = [...bySuit.entries()].find(([, n]) => n >= 4);
  if (straight || (flushSuit && flushSuit[1] === 5)) return new Set(hand);

  const grouped = hand.filter((c) => byRank.get(rank(c)) >= 2);
  if (grouped.length === 0 && flushSuit) {
    return new Set(hand.filter((c) => suit(c) === flushSuit[0]));
  }
  // With a pair or better keep only aces besides it; otherwise Q, K and A.
  const high = grouped.length > 0 ? 12 : 10;
  return new Set(hand.filter((c) => byRank.get(rank(c)) >= 2 || rank(c) >= high));
}

// The legal exchange whose discard set is closest to the one we want.
function chooseExchange(view, legal) {
  const keep = cardsToKeep(view.hand);
  const want = new Set(view.hand.filter((c) => !keep.has(c)));
  let best = null;
  let bestCost = Infinity;
  for (const a of legal) {
    if (a.type !== "exchange" || !Array.isArray(a.discard)) continue;
    const d = new Set(a.discard);
    let cost = 0;
    for (const c of d) if (!want.has(c)) cost += 1;
    for (const c of want) if (!d.has(c)) cost += 1;
    if (cost < bestCost) {
      best = a;
      bestCost = cost;
    }
  }
  return best;
}

// Only call Chicago (win all five tricks) with a very strong hand:
// at least four aces/kings, two of them aces.
function chooseChicago(view, legal) {
  const hand = view.hand;
  const aces = hand.filter((c) => rank(c) === 12).length;
  const high = hand.filter((c) => rank(c) >= 11).length;
  const call = high >= 4 && aces >= 2;
  return legal.find((a) => a.type === "chicago" && a.call === call) || null;
}

// One-open variant: take the face-up card if it pairs our hand or is an ace/king.
function chooseTakeOpen(view, legal) {
  const open = view.open_card;
  const take = !!open && (rank(open) >= 11 || view.hand.some((c) => rank(c) === rank(open)));
  return legal.find((a) => a.type === "take_open" && a.take === take) || null;
}

// Trick play: keep the highest card for the scoring last trick by playing low;
// on the last trick (and against a Chicago call, on any trick) play the
// cheapest card that wins the trick so far, if there is one; a Chicago
// declarer plays its highest card.
function choosePlay(view, legal) {
  const plays = legal.filter((a) => a.type === "play" && typeof a.card === "string");
  if (plays.length === 0) return null;
  const byRankAsc = [...plays].sort((a, b) => rank(a.card) - rank(b.card));
  const lowest = byRankAsc[0];
  const highest = byRankAsc[byRankAsc.length - 1];

  const declarer = view.chicago_declarer;
  if (declarer === view.seat) return highest;

  const lastTrick = view.hand.length <= 1;
  const breakChicago = declarer !== null && declarer !== undefined;
  if (lastTrick || breakChicago) {
    const trick = view.trick || [];
    if (trick.length === 0) return lastTrick ? highest : lowest;
    const led = suit(trick[0].card);
    const top = Math.max(...trick.filter((p) => suit(p.card) === led).map((p) => rank(p.card)));
    const winner = byRankAsc.find((a) => suit(a.card) === led && rank(a.card) > top);
    if (winner) return winner;
  }
  return lowest;
}

function chooseChicagoAction(view, legal) {
  const kinds = new Set(legal.map((a) => a && a.type));
  if (kinds.size !== 1) return null;
  switch ([...kinds][0]) {
    case "exchange":
      return chooseExchange(view, legal);
    case "chicago":
      return chooseChicago(view, legal);
    case "take_open":
      return chooseTakeOpen(view, legal);
    case "play":
      return choosePlay(view, legal);
    default:
      return null;
  }
}

function choose(view, legal) {
  if (view && view.game === "chicago" && Array.isArray(view.hand)) {
    try {
      const action = chooseChicagoAction(view, legal);
      if (action) return action;
    } catch (err) {
      log("heuristic failed, playing at random:", err && err.stack ? err.stack : err);
    }
  }
  return pick(legal); // any other game or action kind: a random legal action
}

// --------------------------------------------------------------- main loop

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
let done = false;

function finish() {
  if (done) return;
  done = true;
  rl.close();
  process.stdin.destroy();
  // No process.exit(): Node exits by itself once pending stdout writes drain.
}

process.stdout.on("error", (err) => {
  // The referee went away (EPIPE): nothing more to say.
  log("stdout error:", err.code || err.message);
  finish();
});

rl.on("line", (line) => {
  if (done || !line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (err) {
    log("unparseable line ignored:", err.message);
    return;
  }
  switch (msg && msg.type) {
    case "hello":
      send({ type: "hello", name: NAME, version: VERSION });
      break;
    case "request": {
      const legal = Array.isArray(msg.legal) ? msg.legal : [];
      if (legal.length === 0) {
        log(`request ${msg.id} has no legal actions`);
        break;
      }
      send({ type: "action", id: msg.id, action: choose(msg.view, legal) });
      break;
    }
    case "warning":
      log(`warning for request ${msg.id}: ${msg.reason}: ${msg.message}`);
      break;
    case "bye":
      finish();
      break;
    default: // game_start, events, game_over: nothing to track
      break;
  }
});

rl.on("close", finish);
