import java.util.ArrayList;
import java.util.List;

/**
 * A small JSON reader, enough for the referee's messages: it parses one line into a tree of
 * values. Each value keeps where it was written in the line, so an action of the request's
 * `legal` list can be sent back exactly as it came. The JDK only. Strings are decoded; numbers
 * are kept as text and read on demand (a game's seed is 64 bits).
 */
final class Json {
    enum Kind { NULL, FALSE, TRUE, NUMBER, STRING, ARRAY, OBJECT }

    /** What is wrong with a line. */
    static final class Error extends Exception {
        Error(String message) {
            super(message);
        }
    }

    private static final int MAX_DEPTH = 64;

    final Kind kind;
    final String line; // the parsed line: the value is line.substring(start, end)
    final int start;
    final int end;
    final String string; // STRING: decoded
    final List<Json> items; // ARRAY: the elements; OBJECT: the members' values
    final List<String> keys; // OBJECT: the members' names

    private Json(Kind kind, String line, int start, int end, String string, List<Json> items, List<String> keys) {
        this.kind = kind;
        this.line = line;
        this.start = start;
        this.end = end;
        this.string = string;
        this.items = items;
        this.keys = keys;
    }

    /** The text the value was written as. */
    String text() {
        return line.substring(start, end);
    }

    /** The member `key` of an object (the last one, if it appears twice), or null. */
    Json get(String key) {
        Json found = null;
        if (kind == Kind.OBJECT) {
            for (int i = 0; i < keys.size(); i++) {
                if (keys.get(i).equals(key)) found = items.get(i);
            }
        }
        return found;
    }

    boolean isString() {
        return kind == Kind.STRING;
    }

    /** A whole number that fits a long. */
    long asLong() throws Error {
        try {
            if (kind == Kind.NUMBER) return Long.parseLong(text());
        } catch (NumberFormatException e) {
            // below
        }
        throw new Error("not a whole number: " + text());
    }

    /** A whole number from 0 to 2^64-1, as the bits of a long. */
    long asUnsignedLong() throws Error {
        try {
            if (kind == Kind.NUMBER) return Long.parseUnsignedLong(text());
        } catch (NumberFormatException e) {
            // below
        }
        throw new Error("not a 64-bit whole number: " + text());
    }

    /** The one value `line` holds (whitespace around it allowed). */
    static Json parse(String line) throws Error {
        Parser parser = new Parser(line);
        Json value = parser.value(0);
        parser.skipSpace();
        if (parser.at != line.length()) throw new Error("text after the value");
        return value;
    }

    private static final class Parser {
        final String line;
        int at;

        Parser(String line) {
            this.line = line;
        }

        char peek() {
            return at < line.length() ? line.charAt(at) : '\0';
        }

        boolean more() {
            return at < line.length();
        }

        void skipSpace() {
            while (more() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) at++;
        }

        Json value(int depth) throws Error {
            skipSpace();
            if (!more()) throw new Error("a value is missing");
            int start = at;
            char c = peek();
            if (c == '{' || c == '[') return members(depth, start, c == '{');
            if (c == '"') {
                String s = string();
                return new Json(Kind.STRING, line, start, at, s, null, null);
            }
            Kind kind;
            if (c == 't') kind = literal("true", Kind.TRUE);
            else if (c == 'f') kind = literal("false", Kind.FALSE);
            else if (c == 'n') kind = literal("null", Kind.NULL);
            else kind = number();
            return new Json(kind, line, start, at, null, null, null);
        }

        Json members(int depth, int start, boolean isObject) throws Error {
            if (depth >= MAX_DEPTH) throw new Error("nested too deeply");
            char close = isObject ? '}' : ']';
            List<Json> items = new ArrayList<>();
            List<String> keys = isObject ? new ArrayList<>() : null;
            at++;
            skipSpace();
            if (more() && peek() == close) {
                at++;
            } else {
                while (true) {
                    if (isObject) {
                        skipSpace();
                        if (!more() || peek() != '"') throw new Error("an object's member has no name");
                        keys.add(string());
                        skipSpace();
                        if (!more() || peek() != ':') throw new Error("a ':' is missing after a name");
                        at++;
                    }
                    items.add(value(depth + 1));
                    skipSpace();
                    if (more() && peek() == ',') {
                        at++;
                        continue;
                    }
                    if (more() && peek() == close) {
                        at++;
                        break;
                    }
                    throw new Error("a ',' or '" + close + "' is missing");
                }
            }
            return new Json(isObject ? Kind.OBJECT : Kind.ARRAY, line, start, at, null, items, keys);
        }

        Kind literal(String word, Kind kind) throws Error {
            if (!line.startsWith(word, at)) throw new Error("not a JSON value");
            at += word.length();
            return kind;
        }

        boolean digit() {
            return more() && peek() >= '0' && peek() <= '9';
        }

        void digits(String why) throws Error {
            if (!digit()) throw new Error(why);
            while (digit()) at++;
        }

        Kind number() throws Error {
            if (more() && peek() == '-') at++;
            if (more() && peek() == '0') at++;
            else digits("not a JSON value");
            if (more() && peek() == '.') {
                at++;
                digits("a number has no digits after its point");
            }
            if (more() && (peek() == 'e' || peek() == 'E')) {
                at++;
                if (more() && (peek() == '+' || peek() == '-')) at++;
                digits("a number has no digits in its exponent");
            }
            return Kind.NUMBER;
        }

        int hex4() throws Error {
            if (line.length() - at < 4) throw new Error("a bad escape in a string");
            int code = 0;
            for (int i = 0; i < 4; i++) {
                char h = line.charAt(at++);
                int digit = h < 128 ? Character.digit(h, 16) : -1;
                if (digit < 0) throw new Error("a bad escape in a string");
                code = code * 16 + digit;
            }
            return code;
        }

        String string() throws Error {
            at++; // the opening quote
            StringBuilder out = new StringBuilder();
            while (true) {
                if (!more()) throw new Error("a string is not closed");
                char c = line.charAt(at++);
                if (c == '"') return out.toString();
                if (c < 0x20) throw new Error("a control character in a string");
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (!more()) throw new Error("a string is not closed");
                char e = line.charAt(at++);
                switch (e) {
                    case '"': out.append('"'); break;
                    case '\\': out.append('\\'); break;
                    case '/': out.append('/'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u': out.append((char) hex4()); break; // a surrogate pair is two of them, as in Java
                    default: throw new Error("a bad escape in a string");
                }
            }
        }
    }
}
