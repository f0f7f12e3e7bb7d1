"""Rule presets and options: from a preset name plus `key=value` overrides
to a validated rules Struct, with errors that name the key and the fix."""

from __future__ import annotations

import json
from typing import Any

import msgspec

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
            f"unknown {game.name} preset {preset!r}; choose one of: {', '.join(game.presets)}"
        )
    return dict(game.presets[preset])


def build_rules(game: GameDef, preset: str | None = None, options: dict[str, Any] | None = None) -> Any:
    """Preset (default: the game's) overlaid with options; validated."""
    merged = preset_options(game, preset or game.default_preset)
    fields = [f for f in game.rules_type.__struct_fields__]
    defaults = msgspec.to_builtins(game.rules_type())
    for key, value in (options or {}).items():
        if key not in fields:
            raise ConfigError(
                f"unknown {game.name} rule option {key!r}; valid options: {', '.join(sorted(fields))}"
            )
        if isinstance(value, dict) and isinstance(defaults.get(key), dict):
            base = dict(merged.get(key, defaults[key]))
            base.update(value)
            value = base
        merged[key] = value
    try:
        return msgspec.convert(merged, type=game.rules_type)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"invalid {game.name} rules: {exc}") from None


def rules_diff(game: GameDef, rules: Any) -> dict[str, Any]:
    """Options that differ from the built-in defaults (for short summaries)."""
    mine = msgspec.to_builtins(rules)
    base = msgspec.to_builtins(game.rules_type())
    return {k: v for k, v in mine.items() if base.get(k) != v and k != "game"}
