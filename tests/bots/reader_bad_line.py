"""Answers request number `on` (default 1) of this process with one hostile
line of `kind`, then (with `then=reply`, the default) with the right reply,
as a bot with a stray print would. Every other request: the first legal action.

Kinds: invalid_utf8, deep_before, deep_after (1,000 levels before or after the
`type` key), big_number (200,000 digits), huge_number (10 MB of digits: over
the line limit), long_line (300 KiB string), dup_type, dup_id (the last id is
the right one), blank, debug, padded (the right reply with 200 KB of
whitespace inside: valid, and the only reply).
"""

import json

from _botlib import bound_resources, first_legal, options, serve, write_bytes

bound_resources()
opts = options()
kind = opts.get("kind", "debug")
on = int(opts.get("on", 1))
then = opts.get("then", "reply")


def hostile(msg: dict) -> bytes:
    rid = msg["id"]
    action = json.dumps(msg["legal"][0])
    deep = b"[" * 1000 + b"]" * 1000
    lines = {
        "invalid_utf8": b'{"type":"act\xff\xfeion","id":%d,"action":%s}' % (rid, action.encode()),
        "deep_before": b'{"x":%s,"type":"action","id":%d,"action":%s}' % (deep, rid, action.encode()),
        "deep_after": b'{"type":"action","id":%d,"action":%s}' % (rid, deep),
        "big_number": b'{"type":"action","id":%s,"action":%s}' % (b"9" * 200_000, action.encode()),
        "huge_number": b'{"type":"action","id":%s,"action":%s}' % (b"9" * (10 * 1024 * 1024), action.encode()),
        "long_line": b'{"type":"action","id":%d,"action":%s,"x":"%s"}' % (rid, action.encode(), b"x" * (300 * 1024)),
        "dup_type": b'{"type":"hello","type":"action","id":%d,"action":%s}' % (rid, action.encode()),
        "dup_id": b'{"type":"action","id":%d,"id":%d,"action":%s}' % (rid + 1000, rid, action.encode()),
        "blank": b"",
        "debug": b"debug: thinking about request %d" % rid,
        "padded": b'{"type":"action",%s"id":%d,"action":%s}' % (b" " * 200_000, rid, action.encode()),
    }
    return lines[kind] + b"\n"


def on_request(n, msg):
    if n != on:
        return first_legal(msg)
    write_bytes(hostile(msg))
    return first_legal(msg) if then == "reply" and kind not in ("dup_id", "padded") else None


serve("reader-bad-line", on_request)
