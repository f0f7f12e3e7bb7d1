"""What every game engine offers the runtime, and the shared result shape.

An engine is a pure, synchronous state machine (OpenSpiel-shaped). The
runtime (bot processes, clocks, logs, tournaments, replays) only ever talks
to engines through this interface, so it holds no game-specific code.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from referee.games.cards import CardError, parse_cards
from referee.games.show import CheckScenario, GamePage, GameText, GameWords

TERMINAL = -1
PUBLIC = -1  # audience of an event every seat may see


@dataclass(frozen=True)
class Deal:
    """An explicit deal: who deals, and the full deck order, top card first.

    The deck may be given as card numbers, card strings (`["As", "Kd", ...]`)
    or one string (`"As Kd 9h ..."`); it is kept as a tuple of card numbers."""

    dealer: int
    deck: tuple[int, ...]

    def __post_init__(self) -> None:
        deck: Any = self.deck  # as given: numbers, strings, or one string
        if isinstance(deck, str):
            deck = parse_cards(deck)
        else:
            # The engines make a Deal for every deal they shuffle: plain ints
            # in range are the common case and are checked in bulk.
            kinds = set(map(type, deck))
            if str in kinds:
                deck = parse_cards(deck)
            elif (kinds != {int} or (deck and not (min(deck) >= 0 and max(deck) < 52))) and any(
                not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < 52 for c in deck
            ):
                raise CardError("a deck holds card numbers 0-51 (rank * 4 + suit) or card strings such as 'As'")
        if not isinstance(deck, tuple):
            object.__setattr__(self, "deck", tuple(deck))

    @classmethod
    def of_pack(cls, dealer: int, deck: list[int]) -> Deal:
        """A deal whose deck an engine shuffled from its own pack or has just
        checked against it: card numbers already, so not checked again (an
        engine makes one every deal)."""
        deal = object.__new__(cls)
        object.__setattr__(deal, "dealer", dealer)
        object.__setattr__(deal, "deck", tuple(deck))
        return deal


class GameState(Protocol):
    n_players: int
    rules: Any
    events: list[tuple[int, msgspec.Struct]]
    """Every event so far with its audience: a seat, or PUBLIC."""

    def current_player(self) -> int: ...
    def legal_actions(self) -> list[Any]: ...
    def verify_action(self, action: Any) -> None: ...
    def apply_action(self, action: Any) -> None: ...
    def is_terminal(self) -> bool: ...
    def view(self, seat: int) -> Any: ...
    def scores(self) -> list[int]: ...
    def result(self) -> GameResult: ...
    def dealt_decks(self) -> list[Deal]: ...


@dataclass(frozen=True)
class GameResult:
    """Final scores and placements (1 = first; equal scores share a place)."""

    winner: int | None
    scores: list[int]
    placements: list[int]
    reason: str


class EngineState:
    """The accessors every engine shares; engines keep these attributes:
    `_over`, `_to_act`, `_scores`, `_decks`, `_winner`, `_end_reason`."""

    _over: bool
    _to_act: int
    _scores: list[int]
    _decks: list[Deal]
    _winner: int | None
    _end_reason: str

    def current_player(self) -> int:
        return TERMINAL if self._over else self._to_act

    def is_terminal(self) -> bool:
        return self._over

    def scores(self) -> list[int]:
        return list(self._scores)

    def dealt_decks(self) -> list[Deal]:
        return list(self._decks)

    def hand(self, seat: int) -> list[int]:
        """The card ints `seat` holds now (a copy): what a playout policy needs."""
        return list(self._hands[seat])  # type: ignore[attr-defined]

    def clone(self) -> EngineState:
        """An independent copy that plays on exactly as this state would.

        Search bots branch from one sampled position many times; rebuilding it
        with `state_from_position` costs several times more. Engine states hold
        only immutable values, flat lists and dicts, lists of lists, sets and
        one `random.Random`, so copying those one level deep is enough."""
        twin = object.__new__(type(self))
        fields = twin.__dict__
        for key, value in self.__dict__.items():
            kind = type(value)
            if kind is list:
                value = [x[:] if type(x) is list else x for x in value]
            elif kind is dict:
                value = {k: (v[:] if type(v) is list else v) for k, v in value.items()}
            elif kind is set:
                value = set(value)
            elif kind is random.Random:
                stream = random.Random()
                stream.setstate(value.getstate())
                value = stream
            fields[key] = value
        return twin

    def result(self) -> GameResult:
        return GameResult(
            winner=self._winner,
            scores=list(self._scores),
            placements=placements_from(self._scores, self._winner),
            reason=self._end_reason,
        )


@dataclass(frozen=True)
class PositionHooks:
    """A game's positions (docs/positions.md): describe a live state, build one."""

    position_type: type
    state_type: type
    describe: Callable[[Any], Any]
    """describe(state) -> its position"""
    build: Callable[[Any, Any, Sequence[Deal]], Any]
    """build(position, rules, deals) -> a state that plays on from it"""


@dataclass(frozen=True, kw_only=True)
class GameDef:
    """A game as the runtime sees it: its engine, rules and wire types, and the
    hooks for everything else that differs between games. The runtime uses
    nothing but this, so a new game is an engine, its wire types and a GameDef
    registered in `registry.py` (or by `register` for a game of one's own)."""

    name: str
    title: str
    seat_counts: tuple[int, ...]
    rules_type: type[msgspec.Struct]
    presets: dict[str, dict[str, Any]]
    default_preset: str
    action_type: Any
    new_state: Callable[..., GameState]
    """new_state(rules, n_players, seed, deals=()) -> GameState"""
    words: GameWords
    """How a person at the table reads and types it."""
    text: GameText
    """How the terminal replay draws its own events."""
    page: GamePage
    """What the web pages need to draw its table."""
    check_scenarios: tuple[CheckScenario, ...]
    """The games `check` plays, chosen so that every decision kind comes up."""
    decision_kinds: tuple[str, ...]
    """Every kind of action a bot must be able to choose (`check` fails a bot that never did)."""
    default_opponent: str
    """The bot `play` seats when no bot is named: a bot command, usually a
    built-in bot's name (`pimc`; docs/bots.md)."""
    positions: PositionHooks | None = None
    """Starting from a position (`match --start`); None where the game has no positions."""
    deck_size: int = 52
    full_deck: tuple[int, ...] = tuple(range(52))
    """The card ints of this game's pack (explicit deals must use exactly these)."""


def placements_from(scores: Sequence[int], winner: int | None) -> list[int]:
    """Winner first, then by score; equal scores share the better place."""
    order = sorted(range(len(scores)), key=lambda s: (s != winner, -scores[s]))
    places = [0] * len(scores)
    for i, s in enumerate(order):
        prev = order[i - 1] if i else -1
        same = prev >= 0 and prev != winner and s != winner and scores[prev] == scores[s]
        places[s] = places[prev] if same else i + 1
    return places


def shuffle(x: list[Any], rng: random.Random) -> None:
    """Exactly `rng.shuffle(x)`: the same permutation from the same state and
    the same state after, without two Python method calls per card (a deal
    is shuffled on the way from one bot's reply to the next request)."""
    getrandbits = rng.getrandbits
    for i, n, k in _SHUFFLE_STEPS[len(x)] if len(x) < len(_SHUFFLE_STEPS) else _shuffle_steps(len(x)):
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]


def _shuffle_steps(size: int) -> tuple[tuple[int, int, int], ...]:
    """(index, bound, bits) of each swap `random.shuffle` makes in a list of `size`."""
    return tuple((i, i + 1, (i + 1).bit_length()) for i in range(size - 1, 0, -1))


_SHUFFLE_STEPS = tuple(_shuffle_steps(size) for size in range(53))  # every pack and stock size
