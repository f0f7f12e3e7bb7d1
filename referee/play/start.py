"""Games that begin from a position (`match --start`, `play --start`).

A position (docs/positions.md) fixes every card of the deal in progress, the
scores and the dealer, seat by seat. A match plays every game from it: the
seat rotations move the bots between the position's seats, so each bot plays
each seat's hand, and the deals after it are shuffled from each game's own
seed as in any match. So the game's position is the one given with its
`seed` replaced by the game's seed; that text goes into the log header, and
`verify` and `replay` rebuild the game from it exactly.

Everything here is checked before any bot starts: a bad position is one
`ConfigError` line with the reason the position API gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.games.base import Deal, GameDef, GameState
from referee.games.notation import format_position, parse_position
from referee.games.position import Position, PositionError
from referee.games.restore import state_from_position

MAX_START_FILE = 64 * 1024
"""A position is one line of a few hundred characters; a bigger file is a mistake."""


def read_start(value: str, option: str = "--start") -> str:
    """The position text of a `--start` value: the text itself, or `@FILE`
    holding it on one line (blank lines and `#` comment lines are skipped)."""
    if not value.startswith("@"):
        return value.strip()
    path = Path(value[1:])
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_START_FILE + 1)
    except OSError as exc:
        raise ConfigError(f"{option} {value}: cannot read the position file: {exc.strerror or exc}") from None
    if len(data) > MAX_START_FILE:
        raise ConfigError(
            f"{option} {value}: the file is larger than {MAX_START_FILE // 1024} kB; a position is one line of text"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{option} {value}: the file is not UTF-8 text; a position is one line of text") from None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if len(lines) != 1:
        raise ConfigError(
            f"{option} {value}: the file holds {len(lines)} position lines; put exactly one "
            "position on one line (lines starting with # are comments)"
        )
    return lines[0]


def start_file(value: str | None) -> Path | None:
    """The file a `--start @FILE` names: it holds every hand, so no sandboxed bot may see it."""
    return Path(value[1:]) if value is not None and value.startswith("@") else None


def check_start(
    text: str, game: GameDef, n_players: int, rules: Any, deals: Sequence[Deal] = (), option: str = "--start"
) -> str:
    """Check a position for this game, seat count and rules; returns its canonical text.

    Raises ConfigError naming the option: a string that does not parse, a
    position of another game or seat count, or one the engine refuses (with
    the position API's reason)."""
    try:
        position = parse_position(text)
    except PositionError as exc:
        raise ConfigError(f"{option}: {exc}") from exc
    if position.game != game.name:
        raise ConfigError(
            f"{option}: the position is for {position.game}, but the game is {game.name}; "
            f"give --game {position.game}, or a {game.name} position"
        )
    if position.n_players != n_players:
        raise ConfigError(
            f"{option}: the position has {position.n_players} seats, but {n_players} players are at "
            f"the table; give {position.n_players} players, or a position for {n_players}"
        )
    try:
        state_from_position(position, rules, deals=deals)
    except PositionError as exc:
        raise ConfigError(f"{option}: impossible position: {exc}") from exc
    return format_position(position)


def game_position(start: str, seed: int) -> Position:
    """The position one game starts from: `start` with the game's seed, so
    its later deals follow the game's own shuffles."""
    return replace(parse_position(start), seed=seed)


def game_start_text(start: str, seed: int) -> str:
    """The canonical text of the game's position, as the log header keeps it."""
    return format_position(game_position(start, seed))


def initial_state(
    game: GameDef, rules: Any, n_players: int, seed: int, deals: Sequence[Deal], start: str | None
) -> GameState:
    """The state a game begins in: a fresh game, or the game's position."""
    if start is None:
        return game.new_state(rules, n_players, seed, tuple(deals))
    return state_from_position(game_position(start, seed), rules, deals=deals)


def deals_before(start: str | None) -> int:
    """Deals a game's `dealt_decks()` leaves out: none for a fresh game; for a
    position, its own deal and those before it (its later deals are numbered on)."""
    return 0 if start is None else parse_position(start).deal


def check_logged_start(start: str, game: GameDef, n_players: int, seed: int) -> None:
    """A log header's start position belongs to its game and seed; ConfigError says why not."""
    try:
        position = parse_position(start)
    except PositionError as exc:
        raise ConfigError(f"the header's start position does not parse: {exc}") from exc
    if position.game != game.name or position.n_players != n_players:
        raise ConfigError(
            f"the header's start position is for {position.game} with {position.n_players} seats, "
            f"but the game is {game.name} with {n_players}"
        )
    if position.seed != seed:
        raise ConfigError(f"the header's start position has seed {position.seed}, but the game seed is {seed}")
