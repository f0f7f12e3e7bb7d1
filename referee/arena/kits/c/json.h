/*
 * A small JSON reader, enough for the referee's messages: it parses one line
 * into a tree of values. Each value keeps the text it was written as, so an
 * action of the request's `legal` list can be sent back exactly as it came.
 * C99, no libraries. Strings are decoded to UTF-8; numbers are kept as text
 * and read on demand (a game's seed is 64 bits).
 */
#ifndef STARTER_JSON_H
#define STARTER_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json_value json_value;
struct json_value {
    json_kind kind;
    const char *text;  /* the value as written, inside the parsed line (not NUL-terminated) */
    size_t length;     /* its length */
    char *string;      /* JSON_STRING: the decoded string, NUL-terminated */
    size_t count;      /* JSON_ARRAY, JSON_OBJECT: how many elements or members */
    json_value *items; /* JSON_ARRAY: the elements; JSON_OBJECT: the members' values */
    char **keys;       /* JSON_OBJECT: the members' names, decoded */
};

/* The value `text` holds (one JSON value, whitespace around it allowed), or
 * NULL with *error saying what is wrong. Free it with json_free. The tree
 * points into `text`: keep the line until the tree is freed. */
json_value *json_parse(const char *text, size_t length, const char **error);
void json_free(json_value *value);

/* The member `key` of an object (the last one, if it appears twice), or NULL. */
const json_value *json_get(const json_value *object, const char *key);
/* The decoded string, or NULL when the value is absent or not a string. */
const char *json_string(const json_value *value);
/* 1 and the number in *out when the value is a whole number that fits, else 0. */
int json_int64(const json_value *value, int64_t *out);
int json_uint64(const json_value *value, uint64_t *out);

#endif
