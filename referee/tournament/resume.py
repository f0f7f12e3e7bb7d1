"""What keeps a resumed tournament exact: each scheduled game's spec, and the
refusal of a config that would change a game already finished.

A game's spec is everything that determines it (game, rules, seats and their
bots, seed, time control, failure policy); the store keeps it with its hash
beside the game's result, and the tournament's definition with its
fingerprint. Split from the runner because it is one question asked before
anything runs (`run.prepare_store` asks it): may this config go on with these
finished games? `check_unchanged` says no, naming what changed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec

from referee.errors import ConfigError
from referee.tournament.config import Tournament
from referee.tournament.schedule import ScheduledGame

# ------------------------------------------------------------------ game specs


def game_spec(t: Tournament, g: ScheduledGame) -> dict[str, Any]:
    """Everything that determines one scheduled game (JSON-able, stored per game)."""
    return {
        "game": t.game.name,
        "rules": msgspec.to_builtins(t.rules),
        "n_players": len(g.seats),
        "seed": g.seed,
        "match_seed": t.seed,
        "game_id": g.game_id,
        "deal_set": g.deal_set,
        "rotation": g.rotation,
        "table": list(g.table),
        "seats": [{"name": n, **t.bot(n).identity()} for n in g.seats],
        "time_control": msgspec.to_builtins(t.time_control),
        "failure_policy": msgspec.to_builtins(t.policy),
    }


def spec_hash(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def fingerprint(t: Tournament) -> str:
    return spec_hash(t.definition())


# ------------------------------------------------------------------ resume checks

_FIXED_KEYS = ("game", "rules", "table_size", "format", "seed", "time_control", "failure_policy")


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _changes(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> str:
    """`key: old -> new` for every key whose value differs, `; `-joined."""
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return "; ".join(f"{prefix}{k}: {_short(old.get(k))} -> {_short(new.get(k))}" for k in keys)


def check_unchanged(
    t: Tournament,
    old_definition: dict[str, Any],
    finished: dict[str, tuple[str, dict[str, Any]]],
    schedule: list[ScheduledGame],
) -> None:
    """Raise ConfigError naming what changed if the config would change a finished game.

    Allowed: more (or fewer, not yet played) deal sets, a different
    concurrency. Refused: anything that changes a finished game's spec (game,
    rules, seats, time control, failure policy, seed, a bot's command/dir/build,
    its game id) or drops a finished game from the schedule.
    """
    if not finished:
        return
    what = (
        _changed_setting(old_definition, t.definition())
        or _changed_bot(old_definition, t.definition(), finished)
        or _changed_game(t, finished, schedule)
    )
    if what:
        raise ConfigError(
            f"the config no longer matches the {len(finished)} finished games in the results "
            f"database: {what}. Use another --db for a new tournament, --fresh to discard the "
            "finished games, or restore the config."
        )


def _changed_setting(old: dict[str, Any], new: dict[str, Any]) -> str:
    for key in _FIXED_KEYS:
        old_v, new_v = old.get(key), new.get(key)
        if old_v == new_v:
            continue
        if isinstance(old_v, dict) and isinstance(new_v, dict):
            return f"{key} changed ({_changes(old_v, new_v, f'{key}.')})"
        return f"{key} changed from {_short(old_v)} to {_short(new_v)}"
    return ""


def _changed_bot(old: dict[str, Any], new: dict[str, Any], finished: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """A bot of a finished game that is gone, or whose command, folder or build changed."""
    new_bots = new["bots"]
    for name in sorted({s["name"] for _, spec in finished.values() for s in spec["seats"]}):
        if name not in new_bots:
            return f"bot {name!r} played finished games but is no longer in the config"
        old_id = old.get("bots", {}).get(name)
        if old_id is not None and old_id != new_bots[name]:
            changed = {k: new_bots[name].get(k) for k in old_id}
            return f"bot {name!r} changed ({_changes(old_id, changed)})"
    return ""


def _changed_game(t: Tournament, finished: dict[str, tuple[str, dict[str, Any]]], schedule: list[ScheduledGame]) -> str:
    """A finished game the new schedule drops or would play differently."""
    by_key = {g.key: g for g in schedule}
    for key, (h, old_spec) in sorted(finished.items(), key=lambda kv: kv[1][1].get("game_id", 0)):
        g = by_key.get(key)
        if g is None:
            return (
                f"finished game {key} is not in the new schedule (were deal_sets reduced or bots/candidates changed?)"
            )
        spec = game_spec(t, g)
        if spec_hash(spec) != h:
            return (
                f"finished game {key} would be played differently ({_changes(old_spec, spec)}); "
                "bots can only be added at a new --db"
            )
    return ""
