/*
 * Sample bot in C99, no external libraries: plays a uniformly random legal
 * action, so it plays every game (Chicago, Ghost Hand Euchre, ...).
 *
 * Build (one line):
 *   cc -O2 -o sample_bots/c/chicago_bot sample_bots/c/chicago_bot.c
 * Run:
 *   chicago-referee match sample_bots/c/chicago_bot "python sample_bots/python/random_bot.py"
 *
 * Protocol (protocol/messages.py): one JSON object per line on stdin/stdout.
 *   referee -> bot  {"type":"hello",...}    reply {"type":"hello","name":"c-random","version":"1.0"}
 *   referee -> bot  {"type":"request","id":N,...,"legal":[A0,A1,...],...}
 *                   reply {"type":"action","id":N,"action":Ak}  (Ak copied verbatim)
 *   referee -> bot  {"type":"bye"}          exit
 * Everything else (game_start, events, warning, game_over) is ignored.
 *
 * The JSON "parser" is a tiny scanner: it walks the keys of the top-level
 * object only and skips each value with string-aware bracket matching, so
 * the same words inside nested objects (the view, the legal actions) are
 * never mistaken for top-level fields. No recursion, so deep nesting cannot
 * overflow the stack. Lines of any length are read into a buffer grown with
 * realloc (capped at MAX_LINE; longer lines are skipped, not crashed on).
 *
 * stdout is the protocol: it is flushed after every line; logs go to stderr.
 */

#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200112L /* getpid() under -std=c99 */
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _WIN32
#include <process.h>
#define BOT_GETPID() ((unsigned long)_getpid())
#else
#include <unistd.h>
#define BOT_GETPID() ((unsigned long)getpid())
#endif

#define BOT_NAME "c-random"
#define BOT_VERSION "1.0"
#define MAX_LINE ((size_t)64 * 1024 * 1024) /* 64 MB: far above any real request */

/* ------------------------------------------------------------ randomness */

static uint64_t rng_state;

static void rng_seed(void) {
    uint64_t s = (uint64_t)time(NULL);
    s ^= (uint64_t)BOT_GETPID() << 32;
    s ^= (uint64_t)clock() * 0x9E3779B97F4A7C15ULL;
    s ^= (uint64_t)(uintptr_t)&s; /* a little address-space randomness */
    rng_state = s ? s : 0x2545F4914F6CDD1DULL;
}

static uint64_t rng_next(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static size_t rng_below(size_t n) { return n ? (size_t)(rng_next() % (uint64_t)n) : 0; }

/* ---------------------------------------------------------- line reading */

/* Read one line (without the trailing \n or \r\n) into *buf, growing it as
 * needed. Returns the length, or -1 at end of input with nothing read.
 * Sets *too_long when the line exceeded MAX_LINE (its content is dropped). */
static long read_line(char **buf, size_t *cap, int *too_long) {
    size_t len = 0;
    int c;
    *too_long = 0;
    if (*buf == NULL || *cap == 0) {
        size_t init = 4096;
        char *p = (char *)malloc(init);
        if (!p) return -1;
        *buf = p;
        *cap = init;
    }
    while ((c = getchar()) != EOF) {
        if (c == '\n') break;
        if (*too_long) continue; /* drain the rest of an oversized line */
        if (len + 1 >= *cap) {
            size_t ncap;
            char *p;
            if (*cap >= MAX_LINE) {
                *too_long = 1;
                len = 0;
                continue;
            }
            ncap = *cap * 2;
            if (ncap > MAX_LINE) ncap = MAX_LINE;
            p = (char *)realloc(*buf, ncap);
            if (!p) { /* out of memory: drop this line rather than crash */
                *too_long = 1;
                len = 0;
                continue;
            }
            *buf = p;
            *cap = ncap;
        }
        (*buf)[len++] = (char)c;
    }
    if (c == EOF && len == 0 && !*too_long) return -1;
    if (len > 0 && (*buf)[len - 1] == '\r') len--;
    (*buf)[len] = '\0';
    return (long)len;
}

/* ------------------------------------------------------------- scanning */

typedef struct {
    const char *p; /* start of the value's text */
    size_t n;      /* its length; p == NULL when absent */
} span;

static const char *skip_ws(const char *s, const char *end) {
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++;
    return s;
}

/* s points at an opening quote; return the position just after the closing
 * quote, or NULL if the string is unterminated. */
static const char *skip_string(const char *s, const char *end) {
    s++;
    while (s < end) {
        if (*s == '\\') {
            s += 2; /* skip the escaped character, whatever it is */
            continue;
        }
        if (*s == '"') return s + 1;
        s++;
    }
    return NULL;
}

/* Skip one JSON value starting at s (no leading whitespace). Returns the
 * position just after it, or NULL if the input is malformed/truncated.
 * Objects and arrays are matched with a depth counter, skipping strings, so
 * brackets and quotes inside strings do not count. */
static const char *skip_value(const char *s, const char *end) {
    if (s >= end) return NULL;
    if (*s == '"') return skip_string(s, end);
    if (*s == '{' || *s == '[') {
        size_t depth = 0;
        while (s < end) {
            char c = *s;
            if (c == '"') {
                s = skip_string(s, end);
                if (!s) return NULL;
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (depth == 0) return NULL;
                if (--depth == 0) return s + 1;
            }
            s++;
        }
        return NULL;
    }
    /* number, true, false, null: up to the next delimiter */
    {
        const char *start = s;
        while (s < end && *s != ',' && *s != '}' && *s != ']' && *s != ' ' && *s != '\t' &&
               *s != '\r' && *s != '\n')
            s++;
        return s > start ? s : NULL;
    }
}

static int span_is(span v, const char *lit) {
    size_t n = strlen(lit);
    return v.p != NULL && v.n == n && memcmp(v.p, lit, n) == 0;
}

/* The top-level fields we care about. Returns 0 if the line is not a JSON object. */
static int scan_top(const char *s, const char *end, span *type, span *id, span *legal) {
    type->p = id->p = legal->p = NULL;
    type->n = id->n = legal->n = 0;
    s = skip_ws(s, end);
    if (s >= end || *s != '{') return 0;
    s = skip_ws(s + 1, end);
    if (s < end && *s == '}') return 1;
    for (;;) {
        const char *key, *kend, *val, *vend;
        if (s >= end || *s != '"') return 0;
        key = s + 1;
        kend = skip_string(s, end);
        if (!kend) return 0;
        s = skip_ws(kend, end);
        if (s >= end || *s != ':') return 0;
        val = skip_ws(s + 1, end);
        vend = skip_value(val, end);
        if (!vend) return 0;
        {
            span k;
            span v;
            k.p = key;
            k.n = (size_t)(kend - 1 - key);
            v.p = val;
            v.n = (size_t)(vend - val);
            if (span_is(k, "type")) *type = v;
            else if (span_is(k, "id")) *id = v;
            else if (span_is(k, "legal")) *legal = v;
        }
        s = skip_ws(vend, end);
        if (s < end && *s == ',') {
            s = skip_ws(s + 1, end);
            continue;
        }
        return s < end && *s == '}';
    }
}

/* Walk the elements of a JSON array (arr is the array's full text). If
 * want < 0, return the element count; otherwise store element `want` in *out
 * and return 1 (0 if absent). Returns -1 if malformed. */
static long array_elements(span arr, long want, span *out) {
    const char *s = arr.p, *end = arr.p + arr.n;
    long i = 0;
    if (!s || s >= end || *s != '[') return -1;
    s = skip_ws(s + 1, end);
    if (s < end && *s == ']') return 0; /* empty array */
    for (;;) {
        const char *vend = skip_value(s, end);
        if (!vend) return -1;
        if (i == want) {
            out->p = s;
            out->n = (size_t)(vend - s);
            return 1;
        }
        i++;
        s = skip_ws(vend, end);
        if (s < end && *s == ',') {
            s = skip_ws(s + 1, end);
            continue;
        }
        if (s < end && *s == ']') return want < 0 ? i : 0;
        return -1;
    }
}

static int is_integer(span v) {
    size_t i = 0;
    if (!v.p || v.n == 0) return 0;
    if (v.p[0] == '-') i = 1;
    if (i >= v.n) return 0;
    for (; i < v.n; i++)
        if (v.p[i] < '0' || v.p[i] > '9') return 0;
    return 1;
}

/* ------------------------------------------------------------------ main */

static void send_line(const char *text) {
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static void send_action(span id, span action) {
    fputs("{\"type\":\"action\",\"id\":", stdout);
    fwrite(id.p, 1, id.n, stdout);
    fputs(",\"action\":", stdout);
    fwrite(action.p, 1, action.n, stdout);
    fputs("}\n", stdout);
    fflush(stdout);
}

int main(void) {
    char *buf = NULL;
    size_t cap = 0;
    long len;
    int too_long = 0;

    setvbuf(stdout, NULL, _IOFBF, 1 << 16); /* we fflush after every line */
    rng_seed();

    while ((len = read_line(&buf, &cap, &too_long)) >= 0) {
        span type, id, legal;
        const char *end = buf + len;
        if (too_long) {
            fprintf(stderr, BOT_NAME ": line longer than %lu bytes skipped\n", (unsigned long)MAX_LINE);
            continue;
        }
        if (len == 0) continue;
        if (!scan_top(buf, end, &type, &id, &legal)) {
            fprintf(stderr, BOT_NAME ": malformed line ignored (%ld bytes)\n", len);
            continue;
        }
        if (span_is(type, "\"hello\"")) {
            send_line("{\"type\":\"hello\",\"name\":\"" BOT_NAME "\",\"version\":\"" BOT_VERSION "\"}");
        } else if (span_is(type, "\"request\"")) {
            long n;
            span choice;
            if (!is_integer(id)) {
                fprintf(stderr, BOT_NAME ": request without an integer id ignored\n");
                continue;
            }
            n = legal.p ? array_elements(legal, -1, NULL) : -1;
            if (n <= 0) {
                fprintf(stderr, BOT_NAME ": request %.*s has no usable legal list\n", (int)id.n, id.p);
                continue;
            }
            if (array_elements(legal, (long)rng_below((size_t)n), &choice) != 1) {
                fprintf(stderr, BOT_NAME ": could not pick a legal action\n");
                continue;
            }
            send_action(id, choice);
        } else if (span_is(type, "\"bye\"")) {
            break;
        }
        /* game_start, events, warning, game_over: nothing to do */
    }

    free(buf);
    fflush(stdout);
    return 0;
}
