//! A starter bot in Rust: the standard library only, its own small JSON
//! reader (json.rs).
//!
//! It answers the referee's `hello`, keeps a typed view of each request (the
//! structs below), and plays a legal move: in a trick its lowest card (the
//! high ones are worth more later: in Chicago only the last trick scores),
//! anything else a random legal action, drawn from a generator seeded with
//! the game's `seed`, so a game played again is played the same. It plays
//! every game the referee hosts, at any number of seats, because it only ever
//! chooses among the request's `legal` actions, and sends the one it chose
//! back exactly as it came.
//!
//! stdout is the protocol: one JSON object per line, flushed. Logs go to
//! stderr. The protocol: docs/protocol.md.

mod json;

use std::io::{self, BufRead, Write};

use json::Value;

const NAME: &str = "rust-starter";
const VERSION: &str = "1.0";
const RANKS: &str = "23456789TJQKA"; // low to high; a card is a rank and a suit: "Qh", "Td"

/// A small seeded generator (every starter kit uses the same one, so all of
/// them choose alike for the same seed).
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Reads the fields of one message: each says which field was missing or of the wrong kind.
struct Fields<'a> {
    line: &'a str,
}

impl<'a> Fields<'a> {
    fn field<'v>(&self, object: &'v Value, key: &str) -> Result<&'v Value, String> {
        object.get(key).ok_or_else(|| format!("no `{}`", key))
    }
    fn int(&self, object: &Value, key: &str) -> Result<i64, String> {
        self.field(object, key)?
            .as_i64(self.line)
            .ok_or_else(|| format!("`{}` is not a whole number", key))
    }
    fn text(&self, object: &Value, key: &str) -> Result<String, String> {
        let value = self.field(object, key)?;
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("`{}` is not a string", key))
    }
    fn list<'v>(&self, object: &'v Value, key: &str) -> Result<&'v Vec<Value>, String> {
        self.field(object, key)?
            .as_array()
            .ok_or_else(|| format!("`{}` is not a list", key))
    }
    fn ints(&self, object: &Value, key: &str) -> Result<Vec<i64>, String> {
        let items = self.list(object, key)?;
        items
            .iter()
            .map(|v| {
                v.as_i64(self.line)
                    .ok_or_else(|| format!("`{}` holds a non-number", key))
            })
            .collect()
    }
}

struct GameStart {
    game_id: i64,
    game: String, // "chicago" or "ghost_euchre"
    seat: i64,
    n_players: i64,
    seed: u64,
}

impl GameStart {
    fn read(msg: &Value, f: &Fields) -> Result<GameStart, String> {
        let seed = f
            .field(msg, "seed")?
            .as_u64(f.line)
            .ok_or("the seed is not a 64-bit whole number")?;
        Ok(GameStart {
            game_id: f.int(msg, "game_id")?,
            game: f.text(msg, "game")?,
            seat: f.int(msg, "seat")?,
            n_players: f.int(msg, "n_players")?,
            seed,
        })
    }
}

/// The parts of the seat's view this bot uses (the view holds more:
/// docs/protocol.md, sections 5.4 and 6.4).
#[allow(dead_code)] // not every field is used yet: they are there for the bot you make of it
struct View {
    game: String,
    seat: i64,
    phase: String, // chicago: exchange, take_open, chicago_call, trick; ghost_euchre: bidding, name_trump, trick
    deal: i64,
    hand: Vec<String>,
    scores: Vec<i64>,
}

impl View {
    fn read(view: &Value, f: &Fields) -> Result<View, String> {
        let mut hand = Vec::new();
        for card in f.list(view, "hand")? {
            hand.push(card.as_str().ok_or("a card is not a string")?.to_string());
        }
        Ok(View {
            game: f.text(view, "game")?,
            seat: f.int(view, "seat")?,
            phase: f.text(view, "phase")?,
            deal: f.int(view, "deal")?,
            hand,
            scores: f.ints(view, "scores")?,
        })
    }
}

struct Request<'m> {
    id: i64,
    view: View,
    legal: &'m Vec<Value>, // ready-made actions; send one back unchanged
}

impl<'m> Request<'m> {
    fn read(msg: &'m Value, f: &Fields) -> Result<Request<'m>, String> {
        Ok(Request {
            id: f.int(msg, "id")?,
            view: View::read(f.field(msg, "view")?, f)?,
            legal: f.list(msg, "legal")?,
        })
    }
}

struct GameOver {
    game_id: i64,
    scores: Vec<i64>,
    placements: Vec<i64>, // 1 = first, per seat
    reason: String,
}

impl GameOver {
    fn read(msg: &Value, f: &Fields) -> Result<GameOver, String> {
        Ok(GameOver {
            game_id: f.int(msg, "game_id")?,
            scores: f.ints(msg, "scores")?,
            placements: f.ints(msg, "placements")?,
            reason: f.text(msg, "reason")?,
        })
    }
}

fn log(text: &str) {
    eprintln!("{}: {}", NAME, text);
}

/// 0 for a two up to 12 for an ace; -1 for a rank it does not know.
fn rank(card: &str) -> i32 {
    match card.chars().next().and_then(|c| RANKS.find(c)) {
        Some(at) => at as i32,
        None => -1,
    }
}

/// The move. Improve this: the view has everything the seat may know.
fn choose<'m>(request: &Request<'m>, rng: &mut SplitMix64) -> &'m Value {
    let legal = request.legal;
    if request.view.phase == "trick" {
        let mut best: Option<(&Value, i32)> = None;
        for action in legal.iter() {
            let is_play = action.get("type").and_then(Value::as_str) == Some("play");
            let card = action.get("card").and_then(Value::as_str).unwrap_or("");
            if !is_play || card.is_empty() {
                continue;
            }
            let lower = match best {
                None => true,
                Some((_, low)) => rank(card) < low, // the first of the lowest
            };
            if lower {
                best = Some((action, rank(card)));
            }
        }
        if let Some((action, _)) = best {
            return action;
        }
    }
    &legal[rng.below(legal.len())]
}

struct Bot {
    rng: SplitMix64,
    start: Option<GameStart>,
}

impl Bot {
    /// Answers one line; false on `bye`.
    fn handle(&mut self, line: &str, out: &mut impl Write) -> Result<bool, String> {
        let msg = json::parse(line)?;
        let f = Fields { line };
        match msg.get("type").and_then(Value::as_str).unwrap_or("") {
            "hello" => reply(
                out,
                &format!(
                    r#"{{"type":"hello","name":"{}","version":"{}","protocol":1}}"#,
                    NAME, VERSION
                ),
            ),
            "game_start" => {
                let start = GameStart::read(&msg, &f)?;
                self.rng = SplitMix64 { state: start.seed };
                log(&format!(
                    "game {}: {}, seat {} of {}",
                    start.game_id, start.game, start.seat, start.n_players
                ));
                self.start = Some(start);
            }
            "request" => {
                let request = Request::read(&msg, &f)?;
                if request.legal.is_empty() {
                    log(&format!("request {} has no legal actions", request.id));
                } else {
                    let action = choose(&request, &mut self.rng);
                    reply(
                        out,
                        &format!(
                            r#"{{"type":"action","id":{},"action":{}}}"#,
                            request.id,
                            action.text(line)
                        ),
                    );
                }
            }
            "warning" => {
                let said = |key| {
                    msg.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_string()
                };
                log(&format!("warning: {}: {}", said("reason"), said("message")));
            }
            "game_over" => {
                let over = GameOver::read(&msg, &f)?;
                let place = match &self.start {
                    Some(start)
                        if start.seat >= 0 && (start.seat as usize) < over.placements.len() =>
                    {
                        format!(", our place {}", over.placements[start.seat as usize])
                    }
                    _ => String::new(),
                };
                log(&format!(
                    "game {} over ({}): scores {:?}{}",
                    over.game_id, over.reason, over.scores, place
                ));
            }
            "bye" => return Ok(false),
            _ => {} // anything else (events come inside requests): nothing to do
        }
        Ok(true)
    }
}

/// One line on stdout, flushed: stdout is a pipe, and an unflushed reply is a timeout.
fn reply(out: &mut impl Write, line: &str) {
    if writeln!(out, "{}", line).and_then(|_| out.flush()).is_err() {
        log("stdout is closed");
        std::process::exit(0);
    }
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut bot = Bot {
        rng: SplitMix64 { state: 0 },
        start: None,
    };
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(line) => line,
            Err(problem) if problem.kind() == io::ErrorKind::InvalidData => {
                log("a line that is not UTF-8 skipped");
                continue;
            }
            Err(problem) => {
                log(&format!("stdin: {}", problem));
                return;
            }
        };
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        match bot.handle(line, &mut out) {
            Ok(true) => {}
            Ok(false) => return,
            Err(problem) => {
                let shown: String = line.chars().take(200).collect();
                log(&format!(
                    "a line this bot could not read ({}): {}",
                    problem, shown
                ));
            }
        }
    }
}
