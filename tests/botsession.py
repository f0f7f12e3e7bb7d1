"""Drive a bot through one short real session (hello, game_start, one
request, bye) as a separate process, for the bots' own tests."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path
from typing import Any

import msgspec
from timing import scaled

from protocol.messages import (
    ActionReply,
    BotHello,
    Bye,
    Clock,
    GameStart,
    Hello,
    Request,
    TimeControl,
)
from referee.games.base import PUBLIC
from referee.seats.bot_command import resolve_command


def one_request(bot: str | Path, state: Any, game: str, players: list[str], cwd: Path) -> tuple[BotHello, ActionReply]:
    """The bot's hello and its reply to one request for the seat to act in `state`;
    `bot` is a bot command as `match` takes it (a file, or a built-in bot's name)."""
    seat = state.current_player()
    lines = [
        Hello(referee="test", games=[game]),
        GameStart(
            game_id=1,
            game=game,
            rules=state.rules,
            seat=seat,
            n_players=state.n_players,
            players=players,
            time_control=TimeControl(),
            seed=7,
        ),
        Request(
            id=5,
            game_id=1,
            events=[ev for aud, ev in state.events if aud in (PUBLIC, seat)],
            view=state.view(seat),
            legal=list(state.legal_actions()),
            clock=Clock(decision_ms=1000),
        ),
        Bye(),
    ]
    enc = msgspec.json.Encoder()
    proc = subprocess.run(
        list(resolve_command(str(bot)).argv),
        input=b"".join(enc.encode(m) + b"\n" for m in lines),
        capture_output=True,
        cwd=cwd,
        timeout=scaled(30),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode().splitlines()
    return msgspec.json.decode(out[0], type=BotHello), msgspec.json.decode(out[1], type=ActionReply)


def imported_modules(path: Path) -> set[str]:
    """Top-level modules a bot file imports (a bot may use only `protocol` and the stdlib)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add((node.module or "").split(".")[0])
    return modules
