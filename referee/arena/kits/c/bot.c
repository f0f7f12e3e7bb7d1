/*
 * A starter bot in C99: no libraries, its own small JSON reader (json.c).
 *
 * It answers the referee's `hello`, keeps a typed view of each request (the
 * structs below), and plays a legal move: in a trick its lowest card (the
 * high ones are worth more later: in Chicago only the last trick scores),
 * anything else a random legal action, drawn from a generator seeded with
 * the game's `seed`, so a game played again is played the same. It plays
 * every game the referee hosts, at any number of seats, because it only ever
 * chooses among the request's `legal` actions, and sends the one it chose
 * back exactly as it came.
 *
 * stdout is the protocol: one JSON object per line, flushed. Logs go to
 * stderr. The protocol: docs/protocol.md.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define NAME "c-starter"
#define VERSION "1.0"
#define RANKS "23456789TJQKA" /* low to high; a card is a rank and a suit: "Qh", "Td" */
#define MAX_HAND 16
#define MAX_SEATS 8
#define WORD 32

/* ------------------------------------------------------------ the generator */

/* A small seeded generator (every starter kit uses the same one, so all of
 * them choose alike for the same seed). */
typedef struct {
    uint64_t state;
} splitmix64;

static uint64_t next_random(splitmix64 *g) {
    uint64_t z;
    g->state += 0x9E3779B97F4A7C15ULL;
    z = g->state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static size_t random_below(splitmix64 *g, size_t n) { return (size_t)(next_random(g) % (uint64_t)n); }

/* ------------------------------------------------------------ the messages */

typedef struct {
    int64_t game_id;
    char game[WORD]; /* "chicago" or "ghost_euchre" */
    int64_t seat, n_players;
    uint64_t seed;
} game_start;

/* The parts of the seat's view this bot uses (the view holds more:
 * docs/protocol.md, sections 5.4 and 6.4). */
typedef struct {
    char game[WORD];
    int64_t seat;
    char phase[WORD]; /* chicago: exchange, take_open, chicago_call, trick; ghost_euchre: bidding, name_trump, trick */
    int64_t deal;
    char hand[MAX_HAND][4];
    size_t hand_size;
    int64_t scores[MAX_SEATS];
    size_t seats;
} view;

typedef struct {
    int64_t id;
    view view;
    const json_value *legal; /* ready-made actions (a JSON array); send one back unchanged */
} request;

typedef struct {
    int64_t game_id;
    int64_t scores[MAX_SEATS], placements[MAX_SEATS]; /* placements: 1 = first, per seat */
    size_t seats, places;
    char reason[WORD];
} game_over;

static void say(const char *format, ...) {
    va_list args;
    fputs(NAME ": ", stderr);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
}

/* Reading a field: each returns 0 when it is missing or of the wrong kind. */
static int read_int(const json_value *object, const char *key, int64_t *out) {
    return json_int64(json_get(object, key), out);
}

static int read_word(const json_value *object, const char *key, char *out, size_t size) {
    const char *text = json_string(json_get(object, key));
    if (!text) return 0;
    strncpy(out, text, size - 1);
    out[size - 1] = '\0';
    return 1;
}

static int read_ints(const json_value *object, const char *key, int64_t *out, size_t most, size_t *count) {
    const json_value *list = json_get(object, key);
    size_t i;
    if (!list || list->kind != JSON_ARRAY) return 0;
    *count = list->count < most ? list->count : most;
    for (i = 0; i < *count; i++)
        if (!json_int64(&list->items[i], &out[i])) return 0;
    return 1;
}

static int read_game_start(const json_value *msg, game_start *out) {
    return read_int(msg, "game_id", &out->game_id) && read_word(msg, "game", out->game, sizeof out->game) &&
           read_int(msg, "seat", &out->seat) && read_int(msg, "n_players", &out->n_players) &&
           json_uint64(json_get(msg, "seed"), &out->seed);
}

static int read_view(const json_value *v, view *out) {
    const json_value *hand = json_get(v, "hand");
    size_t i;
    if (!read_word(v, "game", out->game, sizeof out->game) || !read_int(v, "seat", &out->seat) ||
        !read_word(v, "phase", out->phase, sizeof out->phase) || !read_int(v, "deal", &out->deal) ||
        !read_ints(v, "scores", out->scores, MAX_SEATS, &out->seats) || !hand || hand->kind != JSON_ARRAY)
        return 0;
    out->hand_size = hand->count < MAX_HAND ? hand->count : MAX_HAND;
    for (i = 0; i < out->hand_size; i++) {
        const char *card = json_string(&hand->items[i]);
        if (!card) return 0;
        strncpy(out->hand[i], card, sizeof out->hand[i] - 1);
        out->hand[i][sizeof out->hand[i] - 1] = '\0';
    }
    return 1;
}

static int read_request(const json_value *msg, request *out) {
    out->legal = json_get(msg, "legal");
    return read_int(msg, "id", &out->id) && read_view(json_get(msg, "view"), &out->view) && out->legal &&
           out->legal->kind == JSON_ARRAY;
}

static int read_game_over(const json_value *msg, game_over *out) {
    return read_int(msg, "game_id", &out->game_id) && read_ints(msg, "scores", out->scores, MAX_SEATS, &out->seats) &&
           read_ints(msg, "placements", out->placements, MAX_SEATS, &out->places) &&
           read_word(msg, "reason", out->reason, sizeof out->reason);
}

/* ------------------------------------------------------------ the move */

/* 0 for a two up to 12 for an ace; -1 for a rank it does not know. */
static int rank(const char *card) {
    const char *at = strchr(RANKS, card[0]);
    return at ? (int)(at - RANKS) : -1;
}

/* The move. Improve this: the view has everything the seat may know. */
static const json_value *choose(const request *req, splitmix64 *rng) {
    const json_value *legal = req->legal;
    if (strcmp(req->view.phase, "trick") == 0) {
        const json_value *best = NULL;
        int best_rank = 0;
        size_t i;
        for (i = 0; i < legal->count; i++) {
            const char *type = json_string(json_get(&legal->items[i], "type"));
            const char *card = json_string(json_get(&legal->items[i], "card"));
            if (!type || strcmp(type, "play") != 0 || !card || !card[0]) continue;
            if (!best || rank(card) < best_rank) { /* the first of the lowest */
                best = &legal->items[i];
                best_rank = rank(card);
            }
        }
        if (best) return best;
    }
    return &legal->items[random_below(rng, legal->count)];
}

/* ------------------------------------------------------------ the loop */

/* One line of stdin, of any length, without its line end, in *buf; its
 * length, or -1 at the end of input. */
static long read_line(char **buf, size_t *cap) {
    size_t len = 0;
    int c;
    while ((c = getchar()) != EOF && c != '\n') {
        if (len + 1 >= *cap) {
            size_t ncap = *cap ? *cap * 2 : 4096;
            char *grown = (char *)realloc(*buf, ncap);
            if (!grown) {
                say("out of memory reading a line");
                exit(1);
            }
            *buf = grown;
            *cap = ncap;
        }
        (*buf)[len++] = (char)c;
    }
    if (c == EOF && len == 0) return -1;
    if (len > 0 && (*buf)[len - 1] == '\r') len--;
    return (long)len;
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    long len;
    splitmix64 rng = {0};
    game_start start;
    int started = 0;

    while ((len = read_line(&line, &cap)) >= 0) {
        const char *error = NULL, *type;
        json_value *msg;
        if (len == 0) continue;
        msg = json_parse(line, (size_t)len, &error);
        if (!msg) {
            say("a line this bot could not read (%s): %.200s", error, line);
            continue;
        }
        type = json_string(json_get(msg, "type"));
        if (!type) {
            say("a message without a type: %.200s", line);
        } else if (strcmp(type, "hello") == 0) {
            puts("{\"type\":\"hello\",\"name\":\"" NAME "\",\"version\":\"" VERSION "\",\"protocol\":1}");
            fflush(stdout); /* stdout is a pipe: an unflushed reply is a timeout */
        } else if (strcmp(type, "game_start") == 0) {
            if (read_game_start(msg, &start)) {
                started = 1;
                rng.state = start.seed;
                say("game %lld: %s, seat %lld of %lld", (long long)start.game_id, start.game, (long long)start.seat,
                    (long long)start.n_players);
            } else {
                say("a game_start this bot could not read: %.200s", line);
            }
        } else if (strcmp(type, "request") == 0) {
            request req;
            if (!read_request(msg, &req)) {
                say("a request this bot could not read: %.200s", line);
            } else if (req.legal->count == 0) {
                say("request %lld has no legal actions", (long long)req.id);
            } else {
                const json_value *action = choose(&req, &rng);
                printf("{\"type\":\"action\",\"id\":%lld,\"action\":%.*s}\n", (long long)req.id, (int)action->length,
                       action->text);
                fflush(stdout);
            }
        } else if (strcmp(type, "warning") == 0) {
            const char *reason = json_string(json_get(msg, "reason"));
            const char *message = json_string(json_get(msg, "message"));
            say("warning: %s: %s", reason ? reason : "?", message ? message : "?");
        } else if (strcmp(type, "game_over") == 0) {
            game_over over;
            if (read_game_over(msg, &over)) {
                size_t i;
                fprintf(stderr, NAME ": game %lld over (%s): scores [", (long long)over.game_id, over.reason);
                for (i = 0; i < over.seats; i++) fprintf(stderr, "%s%lld", i ? ", " : "", (long long)over.scores[i]);
                if (started && start.seat >= 0 && (size_t)start.seat < over.places)
                    fprintf(stderr, "], our place %lld\n", (long long)over.placements[start.seat]);
                else
                    fputs("]\n", stderr);
            }
        } else if (strcmp(type, "bye") == 0) {
            json_free(msg);
            break;
        }
        /* anything else (events come inside requests): nothing to do */
        json_free(msg);
    }
    free(line);
    return 0;
}
