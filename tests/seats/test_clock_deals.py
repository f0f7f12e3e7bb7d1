"""Time-control parsing, seat clocks with a bank, and explicit deal files."""

from __future__ import annotations

import pytest

from protocol.messages import TimeControl
from referee.errors import ConfigError
from referee.games import get_game
from referee.games.cards import CARD_STR
from referee.play.deals import parse_deals
from referee.seats.clock import (
    SeatClock,
    format_time_control,
    parse_duration_ms,
    parse_time_control,
)


@pytest.mark.parametrize(("text", "ms"), [("500ms", 500), ("1.5s", 1500), ("2m", 120_000), ("3", 3000)])
def test_durations(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


def test_time_control_forms() -> None:
    assert parse_time_control("250ms") == TimeControl(decision_ms=250)
    tc = parse_time_control("decision=500ms,bank=60s,inc=100ms,startup=2s")
    assert tc == TimeControl(decision_ms=500, bank_ms=60_000, increment_ms=100, startup_ms=2000)
    assert parse_time_control(format_time_control(tc)) == tc
    with pytest.raises(ConfigError, match="decision limit must be positive"):
        parse_time_control("decision=0ms")


def test_bank_caps_the_decision_limit_and_gets_the_increment() -> None:
    clock = SeatClock(TimeControl(decision_ms=1000, bank_ms=1500, increment_ms=100))
    assert clock.limit_s() == 1.0
    clock.charge(0.9)  # 1500 - 900 + 100
    assert clock.bank_ms == pytest.approx(700)
    assert clock.limit_s() == pytest.approx(0.7)
    assert clock.snapshot().decision_ms == 700 and clock.snapshot().bank_ms == 700
    clock.charge(5.0)  # overdrawn: floor at 0, then the increment
    assert clock.bank_ms == pytest.approx(100)


def test_no_bank_means_a_fixed_limit() -> None:
    clock = SeatClock(TimeControl(decision_ms=300))
    clock.charge(10)
    assert clock.limit_s() == 0.3 and clock.snapshot().bank_ms is None


def test_deals_accept_lists_and_strings_and_name_the_problem() -> None:
    game = get_game("chicago")
    deck = list(CARD_STR)
    (d,) = parse_deals([{"dealer": 2, "deck": deck}], game)
    assert d.dealer == 2 and [CARD_STR[c] for c in d.deck] == deck
    (d2,) = parse_deals({"dealer": 0, "deck": " ".join(reversed(deck))}, game)
    assert CARD_STR[d2.deck[0]] == "Ac"
    with pytest.raises(ConfigError, match="deal 1: bad card 'Zz'"):
        parse_deals([{"dealer": 0, "deck": ["Zz", *deck[1:]]}], game)
    with pytest.raises(ConfigError, match="must hold the 52 cards"):
        parse_deals([{"dealer": 0, "deck": deck[:51]}], game)
    with pytest.raises(ConfigError, match="'dealer' and 'deck'"):
        parse_deals([{"deck": deck, "extra": 1}], game)
