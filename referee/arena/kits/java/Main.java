import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A starter bot in Java: the JDK only, its own small JSON reader (Json.java).
 *
 * <p>It answers the referee's `hello`, keeps a typed view of each request (the classes below),
 * and plays a legal move: in a trick its lowest card (the high ones are worth more later: in
 * Chicago only the last trick scores), anything else a random legal action, drawn from a
 * generator seeded with the game's `seed`, so a game played again is played the same. It plays
 * every game the referee hosts, at any number of seats, because it only ever chooses among the
 * request's `legal` actions, and sends the one it chose back exactly as it came.
 *
 * <p>stdout is the protocol: one JSON object per line, flushed. Logs go to stderr. The protocol:
 * docs/protocol.md.
 */
public final class Main {
    static final String NAME = "java-starter";
    static final String VERSION = "1.0";
    static final String RANKS = "23456789TJQKA"; // low to high; a card is a rank and a suit: "Qh", "Td"

    /** A small seeded generator (every starter kit uses the same one, so all of them choose alike for the same seed). */
    static final class SplitMix64 {
        private long state;

        SplitMix64(long seed) {
            state = seed;
        }

        long next() {
            state += 0x9E3779B97F4A7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }

        int below(int n) {
            return (int) Long.remainderUnsigned(next(), n);
        }
    }

    // Reading a field: each throws Json.Error when it is missing or of the wrong kind.
    static Json field(Json object, String key) throws Json.Error {
        Json value = object.get(key);
        if (value == null) throw new Json.Error("no `" + key + "`");
        return value;
    }

    static String text(Json value) throws Json.Error {
        if (!value.isString()) throw new Json.Error("not a string: " + value.text());
        return value.string;
    }

    static List<Json> list(Json value) throws Json.Error {
        if (value.kind != Json.Kind.ARRAY) throw new Json.Error("not a list: " + value.text());
        return value.items;
    }

    static long[] longs(Json value) throws Json.Error {
        List<Json> items = list(value);
        long[] out = new long[items.size()];
        for (int i = 0; i < out.length; i++) out[i] = items.get(i).asLong();
        return out;
    }

    static final class GameStart {
        final long gameId;
        final String game; // "chicago" or "ghost_euchre"
        final int seat;
        final int nPlayers;
        final long seed; // 64 bits, unsigned

        GameStart(Json msg) throws Json.Error {
            gameId = field(msg, "game_id").asLong();
            game = text(field(msg, "game"));
            seat = (int) field(msg, "seat").asLong();
            nPlayers = (int) field(msg, "n_players").asLong();
            seed = field(msg, "seed").asUnsignedLong();
        }
    }

    /** The parts of the seat's view this bot uses (the view holds more: docs/protocol.md, sections 5.4 and 6.4). */
    static final class View {
        final String game;
        final int seat;
        final String phase; // chicago: exchange, take_open, chicago_call, trick; ghost_euchre: bidding, name_trump, trick
        final long deal;
        final List<String> hand = new ArrayList<>();
        final long[] scores;

        View(Json view) throws Json.Error {
            game = text(field(view, "game"));
            seat = (int) field(view, "seat").asLong();
            phase = text(field(view, "phase"));
            deal = field(view, "deal").asLong();
            for (Json card : list(field(view, "hand"))) hand.add(text(card));
            scores = longs(field(view, "scores"));
        }
    }

    static final class Request {
        final long id;
        final View view;
        final List<Json> legal; // ready-made actions; send one back unchanged

        Request(Json msg) throws Json.Error {
            id = field(msg, "id").asLong();
            view = new View(field(msg, "view"));
            legal = list(field(msg, "legal"));
        }
    }

    static final class GameOver {
        final long gameId;
        final long[] scores;
        final long[] placements; // 1 = first, per seat
        final String reason;

        GameOver(Json msg) throws Json.Error {
            gameId = field(msg, "game_id").asLong();
            scores = longs(field(msg, "scores"));
            placements = longs(field(msg, "placements"));
            reason = text(field(msg, "reason"));
        }
    }

    static void log(String line) {
        System.err.println(NAME + ": " + line);
    }

    /** 0 for a two up to 12 for an ace; -1 for a rank it does not know. */
    static int rank(String card) {
        return RANKS.indexOf(card.charAt(0));
    }

    /** The move. Improve this: the view has everything the seat may know. */
    static Json choose(Request request, SplitMix64 rng) {
        if (request.view.phase.equals("trick")) {
            Json best = null;
            int bestRank = 0;
            for (Json action : request.legal) {
                Json type = action.get("type");
                Json card = action.get("card");
                if (type == null || !type.isString() || !type.string.equals("play")) continue;
                if (card == null || !card.isString() || card.string.isEmpty()) continue;
                if (best == null || rank(card.string) < bestRank) { // the first of the lowest
                    best = action;
                    bestRank = rank(card.string);
                }
            }
            if (best != null) return best;
        }
        return request.legal.get(rng.below(request.legal.size()));
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        SplitMix64 rng = new SplitMix64(0);
        GameStart start = null;
        for (String line; (line = in.readLine()) != null; ) { // lines of any length
            if (line.isBlank()) continue;
            try {
                Json msg = Json.parse(line);
                Json type = msg.get("type");
                String kind = type != null && type.isString() ? type.string : "";
                switch (kind) {
                    case "hello":
                        out.print("{\"type\":\"hello\",\"name\":\"" + NAME + "\",\"version\":\"" + VERSION
                                + "\",\"protocol\":1}\n");
                        out.flush(); // stdout is a pipe: an unflushed reply is a timeout
                        break;
                    case "game_start":
                        start = new GameStart(msg);
                        rng = new SplitMix64(start.seed);
                        log("game " + start.gameId + ": " + start.game + ", seat " + start.seat + " of " + start.nPlayers);
                        break;
                    case "request": {
                        Request request = new Request(msg);
                        if (request.legal.isEmpty()) {
                            log("request " + request.id + " has no legal actions");
                            break;
                        }
                        Json action = choose(request, rng);
                        out.print("{\"type\":\"action\",\"id\":" + request.id + ",\"action\":" + action.text() + "}\n");
                        out.flush();
                        break;
                    }
                    case "warning": {
                        Json reason = msg.get("reason");
                        Json message = msg.get("message");
                        log("warning: " + (reason != null && reason.isString() ? reason.string : "?") + ": "
                                + (message != null && message.isString() ? message.string : "?"));
                        break;
                    }
                    case "game_over": {
                        GameOver over = new GameOver(msg);
                        StringBuilder said = new StringBuilder("game " + over.gameId + " over (" + over.reason + "): scores [");
                        for (int i = 0; i < over.scores.length; i++) said.append(i > 0 ? ", " : "").append(over.scores[i]);
                        said.append("]");
                        if (start != null && start.seat >= 0 && start.seat < over.placements.length) {
                            said.append(", our place ").append(over.placements[start.seat]);
                        }
                        log(said.toString());
                        break;
                    }
                    case "bye":
                        out.flush();
                        return;
                    default: // anything else (events come inside requests): nothing to do
                        break;
                }
            } catch (Json.Error problem) {
                log("a line this bot could not read (" + problem.getMessage() + "): "
                        + line.substring(0, Math.min(line.length(), 200)));
            }
        }
    }
}
