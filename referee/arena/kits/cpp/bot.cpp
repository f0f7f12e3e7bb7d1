// A starter bot in C++17: the standard library only, its own small JSON
// reader (json.hpp).
//
// It answers the referee's `hello`, keeps a typed view of each request (the
// structs below), and plays a legal move: in a trick its lowest card (the
// high ones are worth more later: in Chicago only the last trick scores),
// anything else a random legal action, drawn from a generator seeded with the
// game's `seed`, so a game played again is played the same. It plays every
// game the referee hosts, at any number of seats, because it only ever
// chooses among the request's `legal` actions, and sends the one it chose
// back exactly as it came.
//
// stdout is the protocol: one JSON object per line, flushed. Logs go to
// stderr. The protocol: docs/protocol.md.
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"

namespace {

const char* const kName = "cpp-starter";
const char* const kVersion = "1.0";
const std::string_view kRanks = "23456789TJQKA";  // low to high; a card is a rank and a suit: "Qh", "Td"

// A small seeded generator (every starter kit uses the same one, so all of
// them choose alike for the same seed).
class SplitMix64 {
   public:
    explicit SplitMix64(std::uint64_t seed = 0) : state_(seed) {}
    std::uint64_t next() {
        state_ += 0x9E3779B97F4A7C15ULL;
        std::uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

   private:
    std::uint64_t state_;
};

// Reading a field: each throws json::Error when it is missing or of the wrong kind.
const json::Value& field(const json::Value& object, std::string_view key) {
    const json::Value* value = object.get(key);
    if (value == nullptr) throw json::Error("no `" + std::string(key) + "`");
    return *value;
}
std::int64_t integer(const json::Value& value) {
    if (auto n = value.int64()) return *n;
    throw json::Error("not a whole number: " + std::string(value.text));
}
std::string text(const json::Value& value) {
    if (!value.is_string()) throw json::Error("not a string: " + std::string(value.text));
    return value.string;
}
std::vector<std::int64_t> integers(const json::Value& value) {
    if (value.kind != json::Kind::Array) throw json::Error("not a list: " + std::string(value.text));
    std::vector<std::int64_t> out;
    for (const auto& item : value.items) out.push_back(integer(item));
    return out;
}

struct GameStart {
    std::int64_t game_id, seat, n_players;
    std::string game;  // "chicago" or "ghost_euchre"
    std::uint64_t seed;

    static GameStart read(const json::Value& msg) {
        auto seed = field(msg, "seed").uint64();
        if (!seed) throw json::Error("the seed is not a 64-bit whole number");
        return {integer(field(msg, "game_id")), integer(field(msg, "seat")), integer(field(msg, "n_players")),
                text(field(msg, "game")), *seed};
    }
};

// The parts of the seat's view this bot uses (the view holds more:
// docs/protocol.md, sections 5.4 and 6.4).
struct View {
    std::string game;
    std::int64_t seat;
    std::string phase;  // chicago: exchange, take_open, chicago_call, trick; ghost_euchre: bidding, name_trump, trick
    std::int64_t deal;
    std::vector<std::string> hand;
    std::vector<std::int64_t> scores;

    static View read(const json::Value& view) {
        std::vector<std::string> hand;
        const json::Value& cards = field(view, "hand");
        if (cards.kind != json::Kind::Array) throw json::Error("the hand is not a list");
        for (const auto& card : cards.items) hand.push_back(text(card));
        return {text(field(view, "game")),  integer(field(view, "seat")), text(field(view, "phase")),
                integer(field(view, "deal")), hand,                        integers(field(view, "scores"))};
    }
};

struct Request {
    std::int64_t id;
    View view;
    const json::Value* legal;  // ready-made actions (a JSON array); send one back unchanged

    static Request read(const json::Value& msg) {
        const json::Value& legal = field(msg, "legal");
        if (legal.kind != json::Kind::Array) throw json::Error("`legal` is not a list");
        return {integer(field(msg, "id")), View::read(field(msg, "view")), &legal};
    }
};

struct GameOver {
    std::int64_t game_id;
    std::vector<std::int64_t> scores, placements;  // placements: 1 = first, per seat
    std::string reason;

    static GameOver read(const json::Value& msg) {
        return {integer(field(msg, "game_id")), integers(field(msg, "scores")), integers(field(msg, "placements")),
                text(field(msg, "reason"))};
    }
};

void log(const std::string& line) { std::cerr << kName << ": " << line << std::endl; }

// 0 for a two up to 12 for an ace; -1 for a rank it does not know.
int rank(const std::string& card) {
    auto at = kRanks.find(card[0]);
    return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

// The move. Improve this: the view has everything the seat may know.
const json::Value& choose(const Request& request, SplitMix64& rng) {
    const auto& legal = request.legal->items;
    if (request.view.phase == "trick") {
        const json::Value* best = nullptr;
        int best_rank = 0;
        for (const auto& action : legal) {
            const json::Value* type = action.get("type");
            const json::Value* card = action.get("card");
            if (!type || !type->is_string() || type->string != "play" || !card || !card->is_string() ||
                card->string.empty())
                continue;
            if (!best || rank(card->string) < best_rank) {  // the first of the lowest
                best = &action;
                best_rank = rank(card->string);
            }
        }
        if (best) return *best;
    }
    return legal[rng.below(legal.size())];
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    SplitMix64 rng;
    std::optional<GameStart> start;
    std::string line;
    while (std::getline(std::cin, line)) {  // lines of any length
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        try {
            json::Value msg = json::parse(line);
            const json::Value* type = msg.get("type");
            std::string kind = type && type->is_string() ? type->string : "";
            if (kind == "hello") {
                std::cout << R"({"type":"hello","name":")" << kName << R"(","version":")" << kVersion
                          << R"(","protocol":1})" << '\n'
                          << std::flush;  // stdout is a pipe: an unflushed reply is a timeout
            } else if (kind == "game_start") {
                start = GameStart::read(msg);
                rng = SplitMix64(start->seed);
                std::ostringstream said;
                said << "game " << start->game_id << ": " << start->game << ", seat " << start->seat << " of "
                     << start->n_players;
                log(said.str());
            } else if (kind == "request") {
                Request request = Request::read(msg);
                if (request.legal->items.empty()) {
                    log("request " + std::to_string(request.id) + " has no legal actions");
                    continue;
                }
                const json::Value& action = choose(request, rng);
                std::cout << R"({"type":"action","id":)" << request.id << R"(,"action":)" << action.text << "}\n"
                          << std::flush;
            } else if (kind == "warning") {
                const json::Value* reason = msg.get("reason");
                const json::Value* message = msg.get("message");
                log("warning: " + (reason && reason->is_string() ? reason->string : "?") + ": " +
                    (message && message->is_string() ? message->string : "?"));
            } else if (kind == "game_over") {
                GameOver over = GameOver::read(msg);
                std::ostringstream said;
                said << "game " << over.game_id << " over (" << over.reason << "): scores [";
                for (std::size_t i = 0; i < over.scores.size(); i++) said << (i ? ", " : "") << over.scores[i];
                said << "]";
                if (start && start->seat >= 0 && static_cast<std::size_t>(start->seat) < over.placements.size())
                    said << ", our place " << over.placements[static_cast<std::size_t>(start->seat)];
                log(said.str());
            } else if (kind == "bye") {
                break;
            }
            // anything else (events come inside requests): nothing to do
        } catch (const json::Error& problem) {
            log(std::string("a line this bot could not read (") + problem.what() + "): " + line.substr(0, 200));
        }
    }
    return 0;
}
