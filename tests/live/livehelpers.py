"""Shared by the live tests: a real match that writes the live stream, and
the cards a piece of page data shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio

from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.rules import build_rules
from referee.live.serve import match_writer
from referee.live.stream import stream_paths
from referee.play.match import MatchConfig, run_match
from referee.play.runner import GameRecord
from referee.seats.bot_process import BotSpec, resolve_command

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
SAMPLE = ROOT / "sample_bots" / "python"
GAME = get_game("chicago")
RULES = build_rules(GAME, None, {"target_score": 15})
CARD_RANKS, CARD_SUITS = "23456789TJQKA", "shdc"


def sample_bot(name: str) -> BotSpec:
    return resolve_command([str(SAMPLE / f"{name}.py")], name=name.replace("_bot", ""))


def misbehaving_bot(name: str, *options: str) -> BotSpec:
    return resolve_command([str(BOTS / f"{name}.py"), f"live-{name}", *options], name=name)


def play_streamed_match(folder: Path, bots: list[BotSpec], games: int = 2, seed: int = 5) -> list[GameRecord]:
    """A real match (real bot processes) whose games write the stream and logs in `folder`."""
    live = match_writer(folder, name="test", game=GAME.name, bots=[b.name for b in bots], scheduled=games)
    config = MatchConfig(game=GAME, rules=RULES, bots=bots, games=games, seed=seed,
                         time_control=TimeControl(decision_ms=2000, startup_ms=10000), log_dir=folder,
                         watch_games=live.watch_games)
    records: list[GameRecord] = []

    async def bounded() -> None:
        with trio.fail_after(120):
            await run_match(config, records.append)

    try:
        trio.run(bounded)
    finally:
        live.close("completed")
    return records


def stream_lines(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    public, private = stream_paths(folder / "match")
    return ([json.loads(x) for x in public.read_text().splitlines()],
            [json.loads(x) for x in private.read_text().splitlines()])


def is_card(text: Any) -> bool:
    return isinstance(text, str) and len(text) == 2 and text[0] in CARD_RANKS and text[1] in CARD_SUITS


def cards_in(value: Any) -> set[str]:
    """Every card a JSON value names, the replay page's packed lists ("~AsKd") unpacked."""
    found: set[str] = set()
    if isinstance(value, str):
        if value.startswith("~") and not value.startswith("~~"):
            found.update(value[i:i + 2] for i in range(1, len(value), 2) if is_card(value[i:i + 2]))
        elif is_card(value):
            found.add(value)
    elif isinstance(value, list):
        for v in value:
            found |= cards_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            found |= cards_in(v)
    return found
