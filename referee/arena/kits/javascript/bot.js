#!/usr/bin/env node
// A starter bot in JavaScript: Node 18 or later, no npm packages.
//
// It answers the referee's `hello`, keeps a typed view of each request (the
// classes below), and plays a legal move: in a trick its lowest card (the
// high ones are worth more later: in Chicago only the last trick scores),
// anything else a random legal action, drawn from a generator seeded with
// the game's `seed`, so a game played again is played the same. It plays
// every game the referee hosts, at any number of seats, because it only ever
// chooses among the request's `legal` actions.
//
// stdout is the protocol: one JSON object per line. Logs go to stderr. Writes
// to a pipe are asynchronous in Node, so the bot never calls process.exit():
// it stops reading and Node exits once everything written is out.
// The protocol: docs/protocol.md.

"use strict";

const readline = require("node:readline");

const NAME = "javascript-starter";
const VERSION = "1.0";
const RANKS = "23456789TJQKA"; // low to high; a card is a rank and a suit: "Qh", "Td"
const MASK = (1n << 64n) - 1n;

// A small seeded generator (every starter kit uses the same one, so all of
// them choose alike for the same seed). BigInt: the seed is 64 bits.
class SplitMix64 {
  constructor(seed = 0n) {
    this.state = BigInt.asUintN(64, seed);
  }
  next() {
    this.state = (this.state + 0x9e3779b97f4a7c15n) & MASK;
    let z = this.state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  }
  below(n) {
    return Number(this.next() % BigInt(n));
  }
}

const int = (value) => {
  if (!Number.isInteger(value)) throw new Error(`not a whole number: ${JSON.stringify(value)}`);
  return value;
};
const str = (value) => {
  if (typeof value !== "string") throw new Error(`not a string: ${JSON.stringify(value)}`);
  return value;
};
const list = (value, each) => {
  if (!Array.isArray(value)) throw new Error(`not a list: ${JSON.stringify(value)}`);
  return value.map(each);
};

class GameStart {
  constructor(msg, line) {
    this.gameId = int(msg.game_id);
    this.game = str(msg.game); // "chicago" or "ghost_euchre"
    this.seat = int(msg.seat);
    this.nPlayers = int(msg.n_players);
    // JSON.parse rounds numbers above 2^53: the seed's digits are taken from the line itself.
    const digits = line.match(/"seed":\s*(\d+)/);
    if (!digits) throw new Error("game_start without a seed");
    this.seed = BigInt(digits[1]);
  }
}

// The parts of the seat's view this bot uses (the view holds more:
// docs/protocol.md, sections 5.4 and 6.4).
class View {
  constructor(view) {
    if (view === null || typeof view !== "object") throw new Error("the request has no view");
    this.game = str(view.game);
    this.seat = int(view.seat);
    this.phase = str(view.phase); // chicago: exchange, take_open, chicago_call, trick; ghost_euchre: bidding, name_trump, trick
    this.deal = int(view.deal);
    this.hand = list(view.hand, str);
    this.scores = list(view.scores, int);
  }
}

class Request {
  constructor(msg) {
    this.id = int(msg.id);
    this.view = new View(msg.view);
    this.legal = list(msg.legal, (action) => action); // ready-made actions; send one back unchanged
  }
}

class GameOver {
  constructor(msg) {
    this.gameId = int(msg.game_id);
    this.scores = list(msg.scores, int);
    this.placements = list(msg.placements, int); // 1 = first, per seat
    this.reason = str(msg.reason);
  }
}

const log = (text) => process.stderr.write(`${NAME}: ${text}\n`);
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

const isCard = (value) => typeof value === "string" && value.length > 0;
// 0 for a two up to 12 for an ace; -1 for a rank it does not know.
const rank = (card) => RANKS.indexOf(card[0]);

// The move. Improve this: the view has everything the seat may know.
function choose(request, rng) {
  if (request.view.phase === "trick") {
    const plays = request.legal.filter((a) => a && a.type === "play" && isCard(a.card));
    if (plays.length > 0) {
      return plays.reduce((low, a) => (rank(a.card) < rank(low.card) ? a : low)); // the first of the lowest
    }
  }
  return request.legal[rng.below(request.legal.length)];
}

let rng = new SplitMix64();
let start = null;
let done = false;
const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });

function finish() {
  if (done) return;
  done = true;
  input.close();
  process.stdin.destroy();
}

function handle(line) {
  const msg = JSON.parse(line);
  switch (msg && msg.type) {
    case "hello":
      send({ type: "hello", name: NAME, version: VERSION, protocol: 1 });
      break;
    case "game_start":
      start = new GameStart(msg, line);
      rng = new SplitMix64(start.seed);
      log(`game ${start.gameId}: ${start.game}, seat ${start.seat} of ${start.nPlayers}`);
      break;
    case "request": {
      const request = new Request(msg);
      if (request.legal.length === 0) {
        log(`request ${request.id} has no legal actions`);
        break;
      }
      send({ type: "action", id: request.id, action: choose(request, rng) });
      break;
    }
    case "warning":
      log(`warning on request ${msg.id}: ${msg.reason}: ${msg.message}`);
      break;
    case "game_over": {
      const over = new GameOver(msg);
      const place = start !== null && start.seat < over.placements.length ? over.placements[start.seat] : "?";
      log(`game ${over.gameId} over (${over.reason}): scores [${over.scores.join(", ")}], our place ${place}`);
      break;
    }
    case "bye":
      finish();
      break;
    default: // anything else (events come inside requests): nothing to do
      break;
  }
}

process.stdout.on("error", (err) => {
  log(`stdout: ${err.code || err.message}`); // the referee went away
  finish();
});
input.on("line", (line) => {
  if (done || !line.trim()) return;
  try {
    handle(line);
  } catch (err) {
    log(`a line this bot could not read (${err.message}): ${line.slice(0, 200)}`);
  }
});
input.on("close", finish);
