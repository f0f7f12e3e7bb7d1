"""The pre-encoded exchange list the referee sends must be byte-identical to
encoding the engine's legal Structs, and decode back to them."""

from __future__ import annotations

import random

import msgspec

from protocol.chicago import ChicagoAction
from referee.games.chicago_moves import ExchangeOptions
from referee.games.playout import new_game


def test_raw_exchange_json_equals_encoded_structs() -> None:
    rng = random.Random(5)
    checked = 0
    for seed in range(40):
        state = new_game("chicago", rng.choice([2, 3, 4]), seed, options={"chicago_enabled": False})
        while not state.is_terminal() and checked < 2000:
            legal = state.legal_actions()
            if isinstance(legal, ExchangeOptions):
                raw = legal.raw_json()
                assert raw == msgspec.json.encode(list(legal))
                assert msgspec.json.decode(raw, type=list[ChicagoAction]) == list(legal)
                checked += 1
            state.apply_action(legal[rng.randrange(len(legal))])
    assert checked >= 500
