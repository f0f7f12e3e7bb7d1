"""Rule presets and options: from a preset name plus `key=value` overrides
to a validated rules Struct, with errors that name the key and the fix."""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

import msgspec
import msgspec.inspect as mi

from referee.errors import ConfigError
from referee.games.base import GameDef


def parse_option(text: str) -> tuple[str, Any]:
    """`"target_score=30"` -> ("target_score", 30). Values are JSON, else strings."""
    key, sep, raw = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not key:
        raise ConfigError(f"bad rule option {text!r}: write KEY=VALUE, e.g. target_score=30")
    raw = raw.strip()
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def preset_options(game: GameDef, preset: str) -> dict[str, Any]:
    if preset not in game.presets:
        raise ConfigError(
            f"unknown {game.name} preset {preset!r}{did_you_mean(preset, game.presets)}; "
            f"choose one of: {', '.join(game.presets)}"
        )
    return dict(game.presets[preset])


def build_rules(game: GameDef, preset: str | None = None, options: dict[str, Any] | None = None) -> Any:
    """Preset (default: the game's) overlaid with options; validated."""
    merged = preset_options(game, preset or game.default_preset)
    fields = list(game.rules_type.__struct_fields__)
    defaults = msgspec.to_builtins(game.rules_type())
    for key, value in (options or {}).items():
        if key not in fields:
            raise ConfigError(
                f"unknown {game.name} rule option {key!r}{did_you_mean(key, fields)}; "
                f"valid options: {', '.join(sorted(fields))}"
            )
        if isinstance(value, dict) and isinstance(defaults.get(key), dict):
            base = dict(merged.get(key, defaults[key]))
            base.update(value)
            value = base
        merged[key] = value
    try:
        return msgspec.convert(merged, type=game.rules_type)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"invalid {game.name} rules: {plain_words(game, merged, exc)}") from None


def did_you_mean(word: str, choices: Any) -> str:
    """' (did you mean 'x'?)' for the closest choice, or '' when none is close."""
    choices = [str(c) for c in choices]
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        close = [c for c in choices if c.startswith(word) or word.startswith(c)][:1]
    return f" (did you mean {close[0]!r}?)" if close else ""


def describe_type(t: Any) -> str:
    """What a value of this msgspec type looks like, in words."""
    if isinstance(t, mi.UnionType):
        parts = [describe_type(x) for x in t.types if not isinstance(x, mi.NoneType)]
        nullable = any(isinstance(x, mi.NoneType) for x in t.types)
        return " or ".join(parts) + (" (or null for none)" if nullable else "")
    if isinstance(t, mi.IntType):
        low = t.ge if t.ge is not None else (t.gt + 1 if t.gt is not None else None)
        high = t.le if t.le is not None else (t.lt - 1 if t.lt is not None else None)
        if low is not None and high is not None:
            return f"a whole number from {low} to {high}"
        if low is not None:
            return f"a whole number of at least {low}"
        return "a whole number"
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.LiteralType):
        return "one of " + ", ".join(map(str, t.values))
    if isinstance(t, mi.ListType):
        return (
            f"a list of {describe_type(t.item_type).removeprefix('a ')}s"
            if not isinstance(t.item_type, mi.BoolType)
            else "a list of true/false values"
        )
    if isinstance(t, mi.DictType):
        return f"a table whose keys are {describe_type(t.key_type)} and whose values are {describe_type(t.value_type)}"
    return "a " + type(t).__name__.removesuffix("Type").lower()


def plain_words(game: GameDef, merged: dict[str, Any], exc: msgspec.ValidationError) -> str:
    """msgspec's "Expected `int` >= 1 - at `$.target_score`" as: the option, what
    was wrong, the valid values, and "did you mean" for near-miss words."""
    text = str(exc)
    where = re.search(r"`\$\.(\w+)", text)
    if where is None:  # a check across options (e.g. showdown_after vs exchanges)
        return text
    key = where.group(1)
    info = mi.type_info(game.rules_type)
    assert isinstance(info, mi.StructType)
    fields = {f.name: f.type for f in info.fields}
    ftype = fields.get(key)
    value = merged.get(key)
    if ftype is None:
        return text
    if "at `key` in" in text and isinstance(ftype, mi.DictType) and isinstance(value, dict):
        keys = ftype.key_type.values if isinstance(ftype.key_type, mi.LiteralType) else ()
        bad = next((k for k in value if k not in keys), None)
        if bad is not None:
            valid = ", ".join(map(str, keys))
            return f"rule option {key!r}: unknown key {bad!r}{did_you_mean(str(bad), keys)}; valid keys: {valid}"
    hint = ""
    if isinstance(ftype, mi.LiteralType) and isinstance(value, str):
        hint = did_you_mean(value, ftype.values)
    return f"rule option {key!r} is {json.dumps(value)}{hint}; it must be {describe_type(ftype)}"


def rules_diff(game: GameDef, rules: Any) -> dict[str, Any]:
    """Options that differ from the built-in defaults (for short summaries)."""
    mine = msgspec.to_builtins(rules)
    base = msgspec.to_builtins(game.rules_type())
    return {k: v for k, v in mine.items() if base.get(k) != v and k != "game"}
