"""`chicago-referee check BOT`: a conformance check in plain words.

Runs the bot through the handshake and whole games at every seat count the
game allows (the bot in every seat), with rule presets chosen so that every
kind of decision comes up, then reports what went wrong and what was never
exercised. Nothing here is specific to one game: scenarios come from the
game's definition.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import msgspec

from protocol.messages import TimeControl
from referee.games.base import GameDef
from referee.games.rules import build_rules
from referee.logs.gamelog import read_log
from referee.play.match import MatchConfig, run_match
from referee.play.runner import FailurePolicy
from referee.seats.bot_process import BotSpec
from referee.seats.sandbox import SandboxLimits


@dataclass
class CheckReport:
    bot: str
    passed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def check_bot(spec: BotSpec, game: GameDef, time_control: TimeControl, seed: int = 1,
                    sandbox: SandboxLimits | None = None) -> CheckReport:
    """Check `spec` (in a sandbox with these limits, if given: as a competition would run it)."""
    report = CheckReport(bot=spec.name)
    kinds_seen: Counter[str] = Counter()
    hello_seen = False
    for n, preset, options in game.extras.get("check_scenarios", [(n, None, {}) for n in game.seat_counts]):
        rules = build_rules(game, preset, options)
        bots = [replace(spec, name=f"{spec.name}@{i}") for i in range(n)]
        with tempfile.TemporaryDirectory() as tmp:
            config = MatchConfig(
                game=game, rules=rules, bots=bots, games=1, seed=seed, time_control=time_control,
                policy=FailurePolicy(mode="forfeit"), log_dir=Path(tmp), sandbox=sandbox,
            )
            result = await run_match(config)
            label = f"{n}-seat game ({preset or game.default_preset})"
            fails = [f for r in result.records for f in r.failures]
            startup = [f for f in fails if f.reason == "startup_failure"]
            if startup:
                report.problems.append(f"handshake failed: {startup[0].message}")
                return report
            hello_seen = True
            for rec in result.records:
                header, records = read_log(Path(rec.log_path or ""))
                for _no, r in records:
                    if r["type"] == "action" and r["source"] == "bot":
                        kinds_seen[r["action"]["type"]] += 1
            if fails:
                for f in fails[:5]:
                    report.problems.append(f"{label}: seat {f.seat}: {f.reason}: {f.message}")
                if len(fails) > 5:
                    report.problems.append(f"{label}: ... and {len(fails) - 5} more failures")
            else:
                games = len(result.records)
                decisions = sum(r.decisions for r in result.records)
                report.passed.append(f"{label}: {games} games, {decisions} decisions, no failures")
            slow = max((max(r.think_ms) / max(1, r.decisions) for r in result.records), default=0.0)
            if slow > time_control.decision_ms * 0.5:
                report.notes.append(f"{label}: slow: about {slow:.0f} ms per decision")
    if hello_seen:
        report.passed.insert(0, "handshake: answered hello with a valid reply")
    for kind in game.extras.get("decision_kinds", []):
        if kinds_seen[kind]:
            report.passed.append(f"decision '{kind}': answered {kinds_seen[kind]} times")
        else:
            report.notes.append(f"decision '{kind}' never came up for this bot (or it never chose it)")
    return report


def report_dict(report: CheckReport) -> dict[str, object]:
    return msgspec.to_builtins({"bot": report.bot, "ok": report.ok, "passed": report.passed,
                                "problems": report.problems, "notes": report.notes})
