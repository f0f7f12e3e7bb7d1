// A small JSON reader, enough for the referee's messages: it parses one line
// into a tree of values. Each value keeps the text it was written as, so an
// action of the request's `legal` list can be sent back exactly as it came.
// C++17, the standard library only. Strings are decoded to UTF-8; numbers are
// kept as text and read on demand (a game's seed is 64 bits).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace json {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Kind { Null, False, True, Number, String, Array, Object };

struct Value {
    Kind kind = Kind::Null;
    std::string_view text;  // the value as written, inside the parsed line
    std::string string;     // Kind::String: decoded
    std::vector<Value> items;       // Kind::Array: the elements; Kind::Object: the members' values
    std::vector<std::string> keys;  // Kind::Object: the members' names

    // The member `key` of an object (the last one, if it appears twice), or nullptr.
    const Value* get(std::string_view key) const {
        const Value* found = nullptr;
        if (kind == Kind::Object)
            for (std::size_t i = 0; i < keys.size(); i++)
                if (keys[i] == key) found = &items[i];
        return found;
    }
    bool is_string() const { return kind == Kind::String; }
    // A whole number that fits, or nothing.
    std::optional<std::int64_t> int64() const {
        if (!whole()) return std::nullopt;
        try {
            std::size_t used = 0;
            long long n = std::stoll(std::string(text), &used);
            if (used == text.size()) return static_cast<std::int64_t>(n);
        } catch (const std::exception&) {
        }
        return std::nullopt;
    }
    std::optional<std::uint64_t> uint64() const {
        if (!whole() || text[0] == '-') return std::nullopt;
        try {
            std::size_t used = 0;
            unsigned long long n = std::stoull(std::string(text), &used);
            if (used == text.size()) return static_cast<std::uint64_t>(n);
        } catch (const std::exception&) {
        }
        return std::nullopt;
    }

   private:
    bool whole() const { return kind == Kind::Number && text.find_first_of(".eE") == std::string_view::npos; }
};

class Parser {
   public:
    explicit Parser(std::string_view text) : text_(text) {}

    // The one value the text holds (whitespace around it allowed); throws Error.
    Value parse() {
        Value value = parse_value(0);
        skip_space();
        if (at_ != text_.size()) throw Error("text after the value");
        return value;
    }

   private:
    static constexpr int kMaxDepth = 64;
    std::string_view text_;
    std::size_t at_ = 0;

    char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
    bool more() const { return at_ < text_.size(); }
    void skip_space() {
        while (more() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) at_++;
    }
    void expect(char c, const char* why) {
        skip_space();
        if (peek() != c || !more()) throw Error(why);
        at_++;
    }

    Value parse_value(int depth) {
        skip_space();
        if (!more()) throw Error("a value is missing");
        std::size_t start = at_;
        Value value;
        switch (peek()) {
            case '{':
                value.kind = Kind::Object;
                members(value, depth, '}');
                break;
            case '[':
                value.kind = Kind::Array;
                members(value, depth, ']');
                break;
            case '"':
                value.kind = Kind::String;
                value.string = parse_string();
                break;
            case 't':
                value.kind = Kind::True;
                literal("true");
                break;
            case 'f':
                value.kind = Kind::False;
                literal("false");
                break;
            case 'n':
                value.kind = Kind::Null;
                literal("null");
                break;
            default:
                value.kind = Kind::Number;
                number();
        }
        value.text = text_.substr(start, at_ - start);
        return value;
    }

    void members(Value& value, int depth, char close) {
        if (depth >= kMaxDepth) throw Error("nested too deeply");
        at_++;
        skip_space();
        if (more() && peek() == close) {
            at_++;
            return;
        }
        for (;;) {
            if (close == '}') {
                skip_space();
                if (peek() != '"' || !more()) throw Error("an object's member has no name");
                value.keys.push_back(parse_string());
                expect(':', "a ':' is missing after a name");
            }
            value.items.push_back(parse_value(depth + 1));
            skip_space();
            if (more() && peek() == ',') {
                at_++;
                continue;
            }
            if (more() && peek() == close) {
                at_++;
                return;
            }
            throw Error(close == '}' ? "a ',' or '}' is missing" : "a ',' or ']' is missing");
        }
    }

    void literal(std::string_view word) {
        if (text_.substr(at_, word.size()) != word) throw Error("not a JSON value");
        at_ += word.size();
    }

    bool digit() const { return more() && peek() >= '0' && peek() <= '9'; }
    void digits(const char* why) {
        if (!digit()) throw Error(why);
        while (digit()) at_++;
    }
    void number() {
        if (peek() == '-' && more()) at_++;
        if (more() && peek() == '0')
            at_++;
        else
            digits("not a JSON value");
        if (more() && peek() == '.') {
            at_++;
            digits("a number has no digits after its point");
        }
        if (more() && (peek() == 'e' || peek() == 'E')) {
            at_++;
            if (more() && (peek() == '+' || peek() == '-')) at_++;
            digits("a number has no digits in its exponent");
        }
    }

    unsigned hex4() {
        if (text_.size() - at_ < 4) throw Error("a bad escape in a string");
        unsigned v = 0;
        for (int i = 0; i < 4; i++) {
            char c = text_[at_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
            else throw Error("a bad escape in a string");
        }
        return v;
    }

    static void put_utf8(std::string& out, unsigned c) {
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }

    std::string parse_string() {
        at_++;  // the opening quote
        std::string out;
        for (;;) {
            if (!more()) throw Error("a string is not closed");
            char c = text_[at_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) throw Error("a control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (!more()) throw Error("a string is not closed");
            switch (text_[at_++]) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned code = hex4();
                    if (code >= 0xD800 && code < 0xDC00) {  // a surrogate pair
                        if (text_.substr(at_, 2) != "\\u") throw Error("a bad escape in a string");
                        at_ += 2;
                        unsigned low = hex4();
                        if (low < 0xDC00 || low > 0xDFFF) throw Error("a bad escape in a string");
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    } else if (code >= 0xDC00 && code < 0xE000) {
                        throw Error("a bad escape in a string");
                    }
                    put_utf8(out, code);
                    break;
                }
                default:
                    throw Error("a bad escape in a string");
            }
        }
    }
};

inline Value parse(std::string_view text) { return Parser(text).parse(); }

}  // namespace json
