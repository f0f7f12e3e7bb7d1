"""A tiny SDK for Python bots: write a policy, call `run_bot`.

    from protocol.bot import run_bot

    def policy(view, legal):
        return legal[0]          # any element of `legal`

    run_bot(policy, name="first-legal")

`view` is the seat's typed view (e.g. `protocol.chicago.ChicagoView`),
`legal` the ready-made legal actions. `on_event(game_id, event)` and
`on_game_start(msg)` / `on_game_over(msg)` are optional hooks for bots that
track history; `on_request(msg)` sees each whole request (its `clock`, say)
just before the policy is asked. Log to stderr, never to stdout: stdout is the protocol.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, BinaryIO

import msgspec

from protocol.messages import (
    ActionReply,
    BotHello,
    Bye,
    GameOver,
    GameStart,
    Hello,
    RefereeMessage,
    Request,
    Warning,
)

Policy = Callable[[Any, list[Any]], Any]


def run_bot(
    policy: Policy,
    name: str,
    version: str = "",
    *,
    on_event: Callable[[int, Any], None] | None = None,
    on_game_start: Callable[[GameStart], None] | None = None,
    on_game_over: Callable[[GameOver], None] | None = None,
    on_request: Callable[[Request], None] | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> None:
    """Serve the referee until `bye` or end of input."""
    inp = stdin or sys.stdin.buffer
    out = stdout or sys.stdout.buffer
    decoder = msgspec.json.Decoder(RefereeMessage)
    encoder = msgspec.json.Encoder()

    def send(msg: msgspec.Struct) -> None:
        out.write(encoder.encode(msg) + b"\n")
        out.flush()

    for line in inp:
        if not line.strip():
            continue
        msg = decoder.decode(line)
        if isinstance(msg, Request):
            if on_event is not None:
                for event in msg.events:
                    on_event(msg.game_id, event)
            if on_request is not None:
                on_request(msg)
            action = policy(msg.view, msg.legal)
            send(ActionReply(id=msg.id, action=action))
        elif isinstance(msg, Hello):
            send(BotHello(name=name, version=version))
        elif isinstance(msg, GameStart):
            if on_game_start is not None:
                on_game_start(msg)
        elif isinstance(msg, GameOver):
            if on_event is not None:
                for event in msg.events:
                    on_event(msg.game_id, event)
            if on_game_over is not None:
                on_game_over(msg)
        elif isinstance(msg, Warning):
            print(f"{name}: referee warning: {msg.reason}: {msg.message}", file=sys.stderr)
        elif isinstance(msg, Bye):
            return
