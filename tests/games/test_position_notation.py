"""The position string round-trips exactly, over positions met in random play
of both games (hypothesis picks the games and moments), and a bad string
names the field that is wrong."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import DOCS
from positions_helpers import TABLES, random_positions

from referee.games import (
    NotationError,
    format_position,
    parse_position,
    position_of,
    state_from_position,
)


def positions(table: int, seed: int, skip: int):
    game, n, preset = TABLES[table]
    states = random_positions(game, n, preset, seed, every=0.2)
    state = next(itertools.islice(states, skip, None), None)
    return state


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(TABLES) - 1), st.integers(0, 10_000), st.integers(0, 150))
def test_format_then_parse_gives_the_position_back(table: int, seed: int, skip: int) -> None:
    state = positions(table, seed, skip)
    if state is None:
        return
    position = position_of(state)
    text = format_position(position)
    assert parse_position(text) == position
    assert format_position(parse_position(text)) == text  # canonical strings are fixed points
    assert "\n" not in text and len(text) < 700
    rebuilt = state_from_position(parse_position(text), state.rules)
    assert rebuilt.view(state.current_player()) == state.view(state.current_player())


def test_a_fresh_deal_fits_on_a_command_line() -> None:
    for game, n, preset in TABLES:
        state = next(random_positions(game, n, preset, seed=1, every=1.0))
        text = format_position(position_of(state))
        assert len(text) < 260, text
        assert text.startswith("chicago/" if game == "chicago" else "ghost_euchre")


def test_fields_may_come_in_any_order() -> None:
    state = next(random_positions("chicago", 3, None, seed=2, every=1.0))
    text = format_position(position_of(state))
    head, *fields = text.split()
    assert parse_position(" ".join([head, *reversed(fields)])) == position_of(state)


GOOD = format_position(position_of(next(random_positions("chicago", 2, None, seed=3, every=1.0))))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty position string"),
        ("poker/2 dealer=0", "write 'chicago/N'"),
        ("chicago/x dealer=0", "'chicago/N'.*not a whole number"),
        (GOOD + " colour=red", "'colour' is not one of"),
        (GOOD + " dealer=1", "'dealer': given twice"),
        (GOOD.replace("dealer=", "dealer=01"), "'dealer': '01.' is not a whole number"),
        (" ".join(t for t in GOOD.split() if not t.startswith("stock=")), "lacks field.*stock"),
        (GOOD.replace("hands=", "hands=A"), "'hands'.*two-character cards"),
        (GOOD.replace("hands=", "hands=Xx", 1)[:-2], "bad card"),
        (GOOD + " ex=1,a", "'ex': 'a' is not a whole number"),
        (GOOD + " show=1:2P", "round:category:winners:points:tied:description"),
        ("chicago/999999999 dealer=0 phase=exchange hands=- stock=-", "2-4 players, not 999999999"),
        (GOOD.replace("dealer=1", "dealer=" + "9" * 5000), "'dealer': 999999999999... is too large"),
    ],
)
def test_a_bad_string_names_the_field(text: str, message: str) -> None:
    with pytest.raises(NotationError, match=message):
        parse_position(text)


def test_the_examples_in_the_docs_parse_build_and_are_canonical() -> None:
    doc = (DOCS / "positions.md").read_text()
    block = doc.split("```text\n", 1)[1].split("```", 1)[0]
    lines = block.strip().splitlines()
    assert len(lines) == 3
    for line in lines:
        position = parse_position(line)
        assert format_position(position) == line
        state = state_from_position(position)
        assert state.legal_actions()
