/* The JSON reader of json.h: a recursive descent parser with a depth limit. */
#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    const char *at, *end;
    const char *error;
    int depth;
} parser;

static int parse_value(parser *ps, json_value *out);

static void skip_space(parser *ps) {
    while (ps->at < ps->end && (*ps->at == ' ' || *ps->at == '\t' || *ps->at == '\n' || *ps->at == '\r')) ps->at++;
}

static int fail(parser *ps, const char *why) {
    if (!ps->error) ps->error = why;
    return 0;
}

static int hex4(const char *s, unsigned *out) {
    unsigned v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static char *put_utf8(char *o, unsigned c) {
    if (c < 0x80) {
        *o++ = (char)c;
    } else if (c < 0x800) {
        *o++ = (char)(0xC0 | (c >> 6));
        *o++ = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *o++ = (char)(0xE0 | (c >> 12));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (c >> 18));
        *o++ = (char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (char)(0x80 | (c & 0x3F));
    }
    return o;
}

/* A string at ps->at (its opening quote), decoded into a new buffer. */
static char *parse_string(parser *ps) {
    const char *s = ps->at + 1;
    char *decoded, *o;
    const char *scan = s;
    while (scan < ps->end && *scan != '"') { /* find its end: decoded, it is never longer */
        if (*scan == '\\') scan++;
        scan++;
    }
    if (scan >= ps->end) {
        fail(ps, "a string is not closed");
        return NULL;
    }
    decoded = (char *)malloc((size_t)(scan - s) + 1);
    if (!decoded) {
        fail(ps, "out of memory");
        return NULL;
    }
    o = decoded;
    while (*s != '"') {
        unsigned char c = (unsigned char)*s++;
        if (c < 0x20) {
            free(decoded);
            fail(ps, "a control character in a string");
            return NULL;
        }
        if (c != '\\') {
            *o++ = (char)c;
            continue;
        }
        c = (unsigned char)*s++;
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned code, low;
            if (ps->end - s < 4 || !hex4(s, &code)) goto bad_escape;
            s += 4;
            if (code >= 0xD800 && code < 0xDC00) { /* a surrogate pair */
                if (ps->end - s < 6 || s[0] != '\\' || s[1] != 'u' || !hex4(s + 2, &low) || low < 0xDC00 ||
                    low > 0xDFFF)
                    goto bad_escape;
                s += 6;
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            } else if (code >= 0xDC00 && code < 0xE000) {
                goto bad_escape;
            }
            o = put_utf8(o, code);
            break;
        }
        default:
            goto bad_escape;
        }
    }
    *o = '\0';
    ps->at = s + 1;
    return decoded;
bad_escape:
    free(decoded);
    fail(ps, "a bad escape in a string");
    return NULL;
}

static int parse_number(parser *ps) {
    const char *s = ps->at;
#define DIGIT(p) ((p) < ps->end && *(p) >= '0' && *(p) <= '9')
    if (s < ps->end && *s == '-') s++;
    if (s < ps->end && *s == '0') {
        s++;
    } else if (DIGIT(s)) {
        while (DIGIT(s)) s++;
    } else {
        return fail(ps, "not a JSON value");
    }
    if (s < ps->end && *s == '.') {
        s++;
        if (!DIGIT(s)) return fail(ps, "a number has no digits after its point");
        while (DIGIT(s)) s++;
    }
    if (s < ps->end && (*s == 'e' || *s == 'E')) {
        s++;
        if (s < ps->end && (*s == '+' || *s == '-')) s++;
        if (!DIGIT(s)) return fail(ps, "a number has no digits in its exponent");
        while (DIGIT(s)) s++;
    }
#undef DIGIT
    ps->at = s;
    return 1;
}

static int literal(parser *ps, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->at) < n || memcmp(ps->at, word, n) != 0) return fail(ps, "not a JSON value");
    ps->at += n;
    return 1;
}

/* Appends one slot to a growing array of values (and of keys, for objects). */
static int grow(parser *ps, json_value *out, size_t *cap, int with_keys) {
    if (out->count < *cap) return 1;
    {
        size_t ncap = *cap ? *cap * 2 : 8;
        json_value *items = (json_value *)realloc(out->items, ncap * sizeof *items);
        if (!items) return fail(ps, "out of memory");
        out->items = items;
        if (with_keys) {
            char **keys = (char **)realloc(out->keys, ncap * sizeof *keys);
            if (!keys) return fail(ps, "out of memory");
            out->keys = keys;
        }
        *cap = ncap;
    }
    return 1;
}

static int parse_members(parser *ps, json_value *out, int is_object) {
    size_t cap = 0;
    char close = is_object ? '}' : ']';
    if (++ps->depth > MAX_DEPTH) return fail(ps, "nested too deeply");
    ps->at++;
    skip_space(ps);
    if (ps->at < ps->end && *ps->at == close) {
        ps->at++;
        ps->depth--;
        return 1;
    }
    for (;;) {
        if (!grow(ps, out, &cap, is_object)) return 0;
        if (is_object) {
            char *key;
            skip_space(ps);
            if (ps->at >= ps->end || *ps->at != '"') return fail(ps, "an object's member has no name");
            key = parse_string(ps);
            if (!key) return 0;
            out->keys[out->count] = key;
            skip_space(ps);
            if (ps->at >= ps->end || *ps->at != ':') {
                free(key);
                return fail(ps, "a ':' is missing after a name");
            }
            ps->at++;
        }
        if (!parse_value(ps, &out->items[out->count])) {
            if (is_object) free(out->keys[out->count]);
            return 0;
        }
        out->count++;
        skip_space(ps);
        if (ps->at < ps->end && *ps->at == ',') {
            ps->at++;
            continue;
        }
        if (ps->at < ps->end && *ps->at == close) {
            ps->at++;
            ps->depth--;
            return 1;
        }
        return fail(ps, is_object ? "a ',' or '}' is missing" : "a ',' or ']' is missing");
    }
}

static void free_members(json_value *value) {
    size_t i;
    for (i = 0; i < value->count; i++) {
        free_members(&value->items[i]);
        if (value->keys) free(value->keys[i]);
    }
    free(value->items);
    free(value->keys);
    free(value->string);
}

static int parse_value(parser *ps, json_value *out) {
    int ok;
    memset(out, 0, sizeof *out);
    skip_space(ps);
    if (ps->at >= ps->end) return fail(ps, "a value is missing");
    out->text = ps->at;
    switch (*ps->at) {
    case '{':
        out->kind = JSON_OBJECT;
        ok = parse_members(ps, out, 1);
        break;
    case '[':
        out->kind = JSON_ARRAY;
        ok = parse_members(ps, out, 0);
        break;
    case '"':
        out->kind = JSON_STRING;
        out->string = parse_string(ps);
        ok = out->string != NULL;
        break;
    case 't':
        out->kind = JSON_TRUE;
        ok = literal(ps, "true");
        break;
    case 'f':
        out->kind = JSON_FALSE;
        ok = literal(ps, "false");
        break;
    case 'n':
        out->kind = JSON_NULL;
        ok = literal(ps, "null");
        break;
    default:
        out->kind = JSON_NUMBER;
        ok = parse_number(ps);
        break;
    }
    if (!ok) {
        free_members(out);
        memset(out, 0, sizeof *out);
        return 0;
    }
    out->length = (size_t)(ps->at - out->text);
    return 1;
}

json_value *json_parse(const char *text, size_t length, const char **error) {
    parser ps;
    json_value *root = (json_value *)malloc(sizeof *root);
    ps.at = text;
    ps.end = text + length;
    ps.error = NULL;
    ps.depth = 0;
    if (!root) {
        *error = "out of memory";
        return NULL;
    }
    if (parse_value(&ps, root)) {
        skip_space(&ps);
        if (ps.at == ps.end) return root;
        free_members(root);
        fail(&ps, "text after the value");
    }
    free(root);
    *error = ps.error;
    return NULL;
}

void json_free(json_value *value) {
    if (!value) return;
    free_members(value);
    free(value);
}

const json_value *json_get(const json_value *object, const char *key) {
    const json_value *found = NULL;
    size_t i;
    if (!object || object->kind != JSON_OBJECT) return NULL;
    for (i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) found = &object->items[i];
    return found;
}

const char *json_string(const json_value *value) {
    return value && value->kind == JSON_STRING ? value->string : NULL;
}

/* The number's text, NUL-terminated in `buf`, if it is a whole number. */
static int whole_number(const json_value *value, char *buf, size_t size) {
    if (!value || value->kind != JSON_NUMBER || value->length >= size) return 0;
    if (memchr(value->text, '.', value->length) || memchr(value->text, 'e', value->length) ||
        memchr(value->text, 'E', value->length))
        return 0;
    memcpy(buf, value->text, value->length);
    buf[value->length] = '\0';
    return 1;
}

int json_int64(const json_value *value, int64_t *out) {
    char buf[32], *end;
    long long n;
    if (!whole_number(value, buf, sizeof buf)) return 0;
    errno = 0;
    n = strtoll(buf, &end, 10);
    if (errno || *end) return 0;
    *out = (int64_t)n;
    return 1;
}

int json_uint64(const json_value *value, uint64_t *out) {
    char buf[32], *end;
    unsigned long long n;
    if (!whole_number(value, buf, sizeof buf) || buf[0] == '-') return 0;
    errno = 0;
    n = strtoull(buf, &end, 10);
    if (errno || *end) return 0;
    *out = (uint64_t)n;
    return 1;
}
