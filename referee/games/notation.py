"""A compact text form of a position, like FEN in chess: one line of
`key=value` fields after the game tag, short enough for an issue or a command
line. `format_position` writes the canonical form (fixed field order, fields at
their default left out); `parse_position` reads it back, in any field order,
and names the field when something is wrong. docs/positions.md has examples.

    chicago/2 dealer=1 phase=exchange turn=0 hands=AsKd9h2c3c/QsJs7d5h4c stock=...
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from protocol.chicago import Reveal, ShowdownRecord
from referee.games.position import (
    ChicagoPosition,
    EuchrePosition,
    Position,
    PositionError,
)

_INT = re.compile(r"-?(0|[1-9][0-9]*)\Z")
EMPTY = "-"


class NotationError(PositionError):
    """A position string that cannot be read; names the field."""


def _bad(key: str, what: str) -> NotationError:
    return NotationError(f"position field {key!r}: {what}")


def _int(key: str, text: str) -> int:
    if not _INT.match(text):
        raise _bad(key, f"{text!r} is not a whole number")
    if len(text) > 20:
        raise _bad(key, f"{text[:12]}... is too large")
    return int(text)


def _ints(key: str, text: str, sep: str = ",") -> tuple[int, ...]:
    return () if text == EMPTY else tuple(_int(key, t) for t in text.split(sep))


def _fmt_ints(values: Any, sep: str = ",") -> str:
    return sep.join(str(v) for v in values) if values else EMPTY


def _cards(key: str, text: str) -> tuple[str, ...]:
    if text == EMPTY:
        return ()
    if len(text) % 2:
        raise _bad(key, f"{text!r} is not a run of two-character cards such as AsKd9h")
    return tuple(text[i : i + 2] for i in range(0, len(text), 2))


def _fmt_cards(cards: Any) -> str:
    return "".join(cards) if cards else EMPTY


def _seats_cards(key: str, text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(_cards(key, part) for part in text.split("/"))


def _fmt_seats_cards(hands: Any) -> str:
    return "/".join(_fmt_cards(h) for h in hands)


def _list(key: str, text: str) -> tuple[tuple[str, ...], ...]:
    return () if text == EMPTY else tuple(_cards(key, t) for t in text.split(","))


def _fmt_list(tricks: Any) -> str:
    return ",".join(_fmt_cards(t) for t in tricks)


def _words(text: str | None) -> str:
    if text is None:
        return EMPTY
    if any(ch in text for ch in "_+:/=\t\n"):
        raise PositionError(f"cannot write the description {text!r} in a position string")
    return text.replace(",", "+").replace(" ", "_")


def _unwords(text: str) -> str | None:
    return None if text == EMPTY else text.replace("_", " ").replace("+", ",")


def _fmt_showdowns(records: Any) -> str:
    return ",".join(
        ":".join(
            [
                str(r.round),
                r.category or EMPTY,
                _fmt_ints(r.winners, "."),
                str(r.points),
                _fmt_ints(r.tied, "."),
                _words(r.description),
            ]
        )
        for r in records
    )


def _showdowns(key: str, text: str) -> tuple[ShowdownRecord, ...]:
    out = []
    for part in text.split(","):
        bits = part.split(":")
        if len(bits) != 6:
            raise _bad(key, f"{part!r} is not round:category:winners:points:tied:description")
        rnd, cat, winners, points, tied, words = bits
        out.append(
            ShowdownRecord(
                round=_int(key, rnd),
                category=None if cat == EMPTY else cat,
                winners=list(_ints(key, winners, ".")),
                points=_int(key, points),
                tied=list(_ints(key, tied, ".")),
                description=_unwords(words),
            )
        )
    return tuple(out)


def _fmt_reveals(records: Any) -> str:
    return ",".join(f"{r.seat}:{r.reason}:{_fmt_cards(r.cards)}" for r in records)


def _reveals(key: str, text: str) -> tuple[Reveal, ...]:
    out = []
    for part in text.split(","):
        bits = part.split(":")
        if len(bits) != 3:
            raise _bad(key, f"{part!r} is not seat:reason:cards")
        out.append(Reveal(seat=_int(key, bits[0]), reason=bits[1], cards=list(_cards(key, bits[2]))))
    return tuple(out)


def _bids(key: str, text: str) -> tuple[int | str | None, ...]:
    out: list[int | str | None] = []
    for t in text.split(","):
        out.append(None if t == "p" else "moon" if t == "moon" else _int(key, t))
    return tuple(out)


def _fmt_bids(bids: Any) -> str:
    return ",".join("p" if b is None else str(b) for b in bids)


def _opt_int(key: str, text: str) -> int | None:
    return None if text == EMPTY else _int(key, text)


# key, attribute, reader, writer
Field = tuple[str, str, Callable[[str, str], Any], Callable[[Any], str]]
_COMMON_HEAD: list[Field] = [
    ("deal", "deal", _int, str),
    ("dealer", "dealer", _int, str),
    ("scores", "scores", _ints, _fmt_ints),
    ("seed", "seed", _int, str),
    ("stream", "stream", _ints, _fmt_ints),
]
CHICAGO_FIELDS: list[Field] = _COMMON_HEAD + [
    ("tied", "tied", lambda k, t: _ints(k, t, "."), lambda v: _fmt_ints(v, ".")),
    ("phase", "phase", lambda k, t: t, str),
    ("turn", "to_act", _int, str),
    ("hands", "hands", _seats_cards, _fmt_seats_cards),
    ("stock", "stock", _cards, _fmt_cards),
    ("discards", "discards", _cards, _fmt_cards),
    ("ex", "exchanged", _ints, _fmt_ints),
    ("open", "open_card", lambda k, t: _cards(k, t)[0] if t != EMPTY else None, lambda v: v),
    ("show", "showdowns", _showdowns, _fmt_showdowns),
    ("reveal", "revealed", _reveals, _fmt_reveals),
    ("scored", "scored_hands", _seats_cards, _fmt_seats_cards),
    ("declarer", "declarer", _opt_int, str),
    ("tricks", "tricks", _list, _fmt_list),
    ("trick", "trick", _cards, _fmt_cards),
    ("start", "start_hands", _seats_cards, _fmt_seats_cards),
]
EUCHRE_FIELDS: list[Field] = _COMMON_HEAD + [
    ("tiebreak", "tiebreak", lambda k, t: bool(_int(k, t)), lambda v: str(int(v))),
    ("phase", "phase", lambda k, t: t, str),
    ("turn", "to_act", _int, str),
    ("hands", "hands", _seats_cards, _fmt_seats_cards),
    ("ghost", "ghost", _cards, _fmt_cards),
    ("dead", "dead", _cards, _fmt_cards),
    ("swap", "swapped_by", _opt_int, str),
    ("bids", "bids", _bids, _fmt_bids),
    ("trump", "trump", lambda k, t: t, str),
    ("tricks", "tricks", _list, _fmt_list),
    ("trick", "trick", _cards, _fmt_cards),
]
_ALWAYS = {"dealer", "phase", "hands", "stock"}


def _defaults(cls: type) -> dict[str, Any]:
    return {f.name: f.default for f in cls.__dataclass_fields__.values()}  # type: ignore[attr-defined]


def format_position(position: Position) -> str:
    """The canonical one-line text of `position`."""
    if isinstance(position, ChicagoPosition):
        head, fields = f"chicago/{position.n_players}", CHICAGO_FIELDS
        defaults = _defaults(ChicagoPosition) | {"scores": (0,) * position.n_players}
    elif isinstance(position, EuchrePosition):
        head, fields, defaults = "ghost_euchre", EUCHRE_FIELDS, _defaults(EuchrePosition)
    else:
        raise PositionError(f"not a position: {type(position).__name__}")
    parts = [head]
    for key, attr, _, write in fields:
        value = getattr(position, attr)
        if key in _ALWAYS or value != defaults.get(attr):
            if value is None:
                parts.append(f"{key}={EMPTY}")
            else:
                parts.append(f"{key}={write(value)}")
    return " ".join(parts)


def parse_position(text: str) -> Position:
    """Read a position string (fields in any order); errors name the field."""
    tokens = text.split()
    if not tokens:
        raise NotationError("empty position string: it starts with the game, e.g. 'chicago/3' or 'ghost_euchre'")
    head = tokens[0]
    kwargs: dict[str, Any] = {}
    cls: type[ChicagoPosition] | type[EuchrePosition]
    if head.startswith("chicago/"):
        cls, fields = ChicagoPosition, CHICAGO_FIELDS
        kwargs["n_players"] = _int("chicago/N", head.split("/", 1)[1])
    elif head == "ghost_euchre":
        cls, fields = EuchrePosition, EUCHRE_FIELDS
    else:
        raise NotationError(f"position string starts with {head!r}: write 'chicago/N' (N seats) or 'ghost_euchre'")
    by_key = {f[0]: f for f in fields}
    for token in tokens[1:]:
        key, sep, value = token.partition("=")
        if not sep or key not in by_key:
            raise NotationError(f"position field {key!r} is not one of: {', '.join(by_key)}")
        _, attr, read, _ = by_key[key]
        if attr in kwargs:
            raise _bad(key, "given twice")
        optional = key in ("tied", "open", "declarer", "swap", "trump", "start")
        kwargs[attr] = None if value == EMPTY and optional else read(key, value)
    missing = [k for k in _ALWAYS if k in by_key and by_key[k][1] not in kwargs]
    if missing:
        raise NotationError(f"position string lacks field(s) {', '.join(sorted(missing))}")
    try:
        return cls(**kwargs)
    except PositionError as exc:
        raise NotationError(f"position {exc}") from None
