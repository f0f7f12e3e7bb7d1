"""Explicit deals from a file, so any scenario can be set up exactly.

A deals file is JSON: a list of deals, each `{"dealer": SEAT, "deck": CARDS}`
where CARDS is the full pack, top card first, as a list of card strings or
one space-separated string. (JSON Lines, one deal per line, also works.)
Games start with these deals in order; after the last, seeded shuffles go on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from protocol.explain import json_error
from referee.errors import ConfigError
from referee.games.base import Deal, GameDef
from referee.games.cards import CARD_STR, CardError, parse_cards


def parse_deals(data: Any, game: GameDef, where: str = "deals") -> tuple[Deal, ...]:
    """Deals read from decoded JSON (a list of deals, or one), each checked."""
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ConfigError(f'{where}: expected a list of deals like [{{"dealer": 0, "deck": "As Kd ..."}}]')
    pack = sorted(game.full_deck)
    return tuple(_deal(item, f"{where}: deal {i}", pack, game) for i, item in enumerate(data, start=1))


def _deal(item: Any, where: str, pack: list[int], game: GameDef) -> Deal:
    if not isinstance(item, dict) or set(item) - {"dealer", "deck"} or "deck" not in item or "dealer" not in item:
        missing = [k for k in ("dealer", "deck") if isinstance(item, dict) and k not in item]
        raise ConfigError(
            f"{where} must be an object with 'dealer' and 'deck' (and nothing else)"
            + (f"; it has no {' and no '.join(repr(k) for k in missing)}" if missing else "")
        )
    dealer = item["dealer"]
    if not isinstance(dealer, int) or isinstance(dealer, bool) or dealer < 0:
        raise ConfigError(f"{where}: 'dealer' must be a seat number (0, 1, ...)")
    return Deal(dealer=dealer, deck=_deck(item["deck"], where, pack, game))


def _deck(cards: Any, where: str, pack: list[int], game: GameDef) -> tuple[int, ...]:
    """The whole pack, each card once, top card first."""
    try:
        deck = parse_cards(cards)
    except CardError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if sorted(deck) != pack:
        missing = [CARD_STR[c] for c in pack if c not in deck]
        extra = [CARD_STR[c] for c in deck if c not in pack]
        raise ConfigError(
            f"{where}: the deck must hold the {len(pack)} cards of {game.title} exactly once"
            + (f"; missing {' '.join(missing)}" if missing else "")
            + (f"; not in this pack: {' '.join(extra)}" if extra else "")
        )
    return tuple(deck)


def load_deals(path: Path, game: GameDef) -> tuple[Deal, ...]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read deals file: {exc.strerror or exc}") from None
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        data = []
        for no, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data.append(msgspec.json.decode(line))
            except msgspec.DecodeError as exc:
                why = json_error(exc, line, f"line {no}", from_a_bot=False)
                raise ConfigError(f"{path}: neither JSON nor JSON Lines: {why}") from None
    return parse_deals(data, game, where=str(path))
