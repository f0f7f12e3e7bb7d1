"""Answers the referee's hello with one hostile line of `kind` (deep_before,
deep_after, invalid_utf8, big_number, dup_type, blank), then plays first-legal
if the referee goes on anyway (it must not)."""

import _botlib
from _botlib import bound_resources, first_legal, options, serve, write_bytes

bound_resources()
kind = options().get("kind", "blank")
deep = b"[" * 1000 + b"]" * 1000
LINES = {
    "deep_before": b'{"x":%s,"type":"hello","name":"deep"}' % deep,
    "deep_after": b'{"type":"hello","name":"deep","x":%s}' % deep,
    "invalid_utf8": b'{"type":"hello","name":"\xff\xfe"}',
    "big_number": b'{"type":"hello","name":"big","protocol":%s}' % (b"9" * 100_000),
    "dup_type": b'{"type":"action","type":"hello","name":"dup"}',
    "blank": b"",
}


def hostile_hello(name: str) -> None:
    write_bytes(LINES[kind] + b"\n")


_botlib.hello = hostile_hello
serve("reader-bad-hello", lambda n, msg: first_legal(msg))
