"""`chicago-referee check BOT`: a conformance check in plain words.

Runs the bot through the handshake and one game at every seat count the game
allows (copies of the bot in every seat, so rotating seats would add
nothing), with rule presets chosen so that every kind of decision comes up.
Games are kept short (a few deals), so a check of a well-behaved bot takes
seconds. Each distinct problem is reported once, with how often it happened
and its evidence (the offending line, or the tail of the bot's stderr). A
decision kind the bot was never asked, because it always chose the same way
earlier (say it never bids, so it never names trump), fails the check: that
part of the bot was never tested. Nothing here is specific to one game:
scenarios come from the game's definition.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import msgspec
import trio

from protocol.messages import TimeControl
from referee.errors import RefereeError
from referee.games.base import GameDef
from referee.games.rules import build_rules
from referee.games.show import CheckScenario
from referee.logs.gamelog import read_log
from referee.logs.records import ActionRecord, FailureRecord
from referee.play.deals import parse_deals
from referee.play.game_spec import FailurePolicy, GameRecord
from referee.play.handle import BotHandle
from referee.play.match import MatchConfig, play_one
from referee.seats.bot_command import BotSpec
from referee.seats.sandbox import SandboxLimits

# Deals per check game by seat count: enough for every decision kind, few
# enough that a bot thinking 100 ms a move is checked in well under a minute.
CHECK_DEALS = {2: 6, 3: 4, 4: 3}
EVIDENCE = 300  # characters of evidence shown per problem


@dataclass
class Problem:
    """One distinct problem: a reason code, where it happened, and its evidence."""

    reason: str
    message: str
    where: str
    evidence: str
    count: int = 1


@dataclass
class Slowest:
    """The bot's slowest answered decision: what a match's clock must cover."""

    ms: float = 0.0
    kind: str = ""
    where: str = ""


@dataclass
class CheckReport:
    bot: str
    clock: TimeControl
    passed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: list[Problem] = field(default_factory=list)
    slowest: Slowest = field(default_factory=Slowest)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


Progress = Callable[[str], None]


async def check_bot(
    spec: BotSpec,
    game: GameDef,
    time_control: TimeControl,
    seed: int = 1,
    on_progress: Progress | None = None,
    sandbox: SandboxLimits | None = None,
) -> CheckReport:
    """Check `spec` (in a sandbox with these limits, if given: as a competition
    would run it); `on_progress` hears one line as each phase starts and ends."""
    check = _Check(spec, game, time_control, seed, on_progress or (lambda _line: None), sandbox)
    scenarios = game.check_scenarios
    for k, scenario in enumerate(scenarios, start=1):
        if not await check.play(f"[{k}/{len(scenarios)}]", scenario):
            return check.report  # the bot did not start: nothing more to learn
    return check.finish()


@dataclass
class _Check:
    """One check under way: the games played so far and what they showed."""

    spec: BotSpec
    game: GameDef
    clock: TimeControl
    seed: int
    say: Progress
    sandbox: SandboxLimits | None
    offered: Counter[str] = field(default_factory=Counter)
    chosen: Counter[str] = field(default_factory=Counter)
    problems: dict[str, Problem] = field(default_factory=dict)
    report: CheckReport = field(init=False)

    def __post_init__(self) -> None:
        self.report = CheckReport(bot=self.spec.name, clock=self.clock)

    def _config(self, scenario: CheckScenario, log_dir: Path) -> MatchConfig:
        """A short game of the scenario, a copy of the bot in every seat."""
        game, n, options = self.game, scenario.seats, dict(scenario.options)
        limit_key = "max_deals" if "max_deals" in game.rules_type.__struct_fields__ else None
        short = {limit_key: CHECK_DEALS.get(n, 3)} if limit_key and limit_key not in options else {}
        rules = build_rules(game, scenario.preset, {**options, **short})
        bots = [replace(self.spec, name=f"{self.spec.name}@{i}") for i in range(n)]
        return MatchConfig(
            game=game,
            rules=rules,
            bots=bots,
            games=1,
            seed=self.seed,
            time_control=self.clock,
            policy=FailurePolicy(mode="forfeit"),
            log_dir=log_dir,
            sandbox=self.sandbox,
        )

    async def play(self, step: str, scenario: CheckScenario) -> bool:
        """Play one scenario's game; False if the bot did not start."""
        label = f"{scenario.seats}-seat game ({scenario.preset or self.game.default_preset})"
        self.say(f"{step} {label} ...")
        with tempfile.TemporaryDirectory() as tmp:
            config = self._config(scenario, Path(tmp))
            record = await _one_game(config)
            startup = [f for f in record.failures if f.reason == "startup_failure"]
            if startup:
                evidence = _evidence(record, startup[0].seat)
                self.report.problems.append(f"handshake failed: {startup[0].message}")
                self.report.details.append(Problem("startup_failure", startup[0].message, "handshake", evidence))
                self.say(f"{step} {label}: the bot did not start; stopping here")
                return False
            _count_decisions(Path(record.log_path or ""), config, self.offered, self.chosen, self.report.slowest, label)
            self._note_failures(record, label)
        if record.failures:
            reasons = ", ".join(sorted({f.reason for f in record.failures}))
            self.say(f"{step} {label}: {record.decisions} decisions, failed ({reasons})")
        else:
            self.report.passed.append(f"{label}: {record.decisions} decisions, no failures")
            self.say(f"{step} {label}: {record.decisions} decisions, ok")
        slow = sum(record.think_ms) / max(1, record.decisions)  # ms per decision, over every seat
        if slow > self.clock.decision_ms * 0.5:
            self.report.notes.append(
                f"{label}: slow: about {slow:.0f} ms per decision (the limit is {self.clock.decision_ms} ms)"
            )
        return True

    def _note_failures(self, record: GameRecord, label: str) -> None:
        """Each distinct reason once, with its first evidence; repeats counted."""
        for f in record.failures:
            seen = self.problems.get(f.reason)
            if seen is not None:
                seen.count += 1
                continue
            self.problems[f.reason] = Problem(f.reason, f.message, f"{label}, seat {f.seat}", _evidence(record, f.seat))

    def finish(self) -> CheckReport:
        report = self.report
        report.passed.insert(0, "handshake: answered hello with a valid reply")
        self._slowest_lines()
        for p in self.problems.values():
            times = f" ({p.count} times)" if p.count > 1 else ""
            report.problems.append(f"{p.reason}{times}: {p.message} [first in the {p.where}]")
            report.details.append(p)
        self._decision_lines()
        return report

    def _slowest_lines(self) -> None:
        slow, limit = self.report.slowest, self.clock.decision_ms
        if not slow.kind:
            return
        share = slow.ms / limit
        self.report.passed.append(
            f"slowest decision: {slow.ms:.0f} of {limit} ms ({share:.0%}), '{slow.kind}' in the {slow.where}"
        )
        if share > 0.5:
            self.report.warnings.append(
                f"the slowest decision took more than half the clock ({slow.ms:.0f} of {limit} ms): "
                "on a busy machine, or in a longer game, it may run out of time; think less or ask for a longer clock"
            )

    def _decision_lines(self) -> None:
        """Every decision kind must have come up and been answered."""
        chosen, offered = self.chosen, self.offered
        for kind in self.game.decision_kinds:
            if chosen[kind]:
                self.report.passed.append(f"decision '{kind}': answered {chosen[kind]} times")
            elif offered[kind]:
                self.report.notes.append(f"decision '{kind}': offered {offered[kind]} times, never chosen")
            elif not self.problems:
                usual = ", ".join(f"'{a}'" for a, _ in chosen.most_common(2)) or "nothing"
                self.report.problems.append(
                    f"decision '{kind}' never came up: the bot always chose the same way before it ({usual}), "
                    f"so its '{kind}' decisions were never tested; a bot must be able to make every decision"
                )


async def _one_game(config: MatchConfig) -> GameRecord:
    """One game with a fresh process per seat."""
    async with trio.open_nursery() as nursery:
        handles = [BotHandle(s, nursery) for s in config.seat_specs()]
        try:
            return await play_one(config, 1, 0, config.seed, handles)
        finally:
            with trio.CancelScope(shield=True):
                for h in handles:
                    await h.close()


def _evidence(record: GameRecord, seat: int) -> str:
    """What the log holds about this seat's first failure: the offending line
    or the tail of its stderr, on one line, shortened."""
    if not record.log_path:
        return ""
    try:
        _header, records = read_log(Path(record.log_path))
    except RefereeError:
        return ""
    for _no, rec in records:
        if isinstance(rec, FailureRecord) and rec.seat == seat and isinstance(rec.detail, str) and rec.detail:
            text = " | ".join(line.strip() for line in rec.detail.splitlines() if line.strip())
            return text if len(text) <= EVIDENCE else "..." + text[-(EVIDENCE - 3) :]
    return ""


def _count_decisions(
    path: Path, config: MatchConfig, offered: Counter[str], chosen: Counter[str], slowest: Slowest, label: str
) -> None:
    """Re-play the log through the engine: which decision kinds the bot was
    offered (in its legal lists), which it chose itself, and its slowest answer."""
    try:
        header, records = read_log(path)
        deals = parse_deals(header.deals, config.game) if header.deals else ()
    except RefereeError:
        return
    state = config.game.new_state(config.rules, len(config.bots), header.seed, deals)
    for _no, rec in records:
        if not isinstance(rec, ActionRecord):
            continue
        try:
            action = msgspec.convert(rec.action, type=config.game.action_type)
        except msgspec.ValidationError:
            return
        if rec.source == "bot":
            kinds = sorted({str(type(a).__struct_config__.tag) for a in state.legal_actions()})
            for kind in kinds:
                offered[kind] += 1
            chosen[str(type(action).__struct_config__.tag)] += 1
            ms = rec.ms
            if isinstance(ms, int | float) and ms > slowest.ms:
                slowest.ms, slowest.kind, slowest.where = float(ms), " or ".join(kinds), label
        try:
            state.apply_action(action)
        except RefereeError:
            return


def report_dict(report: CheckReport) -> dict[str, object]:
    return msgspec.to_builtins(
        {
            "bot": report.bot,
            "ok": report.ok,
            "passed": report.passed,
            "problems": report.problems,
            "notes": report.notes,
            "warnings": report.warnings,
            "time_control": report.clock,
            "slowest_decision": {
                "ms": round(report.slowest.ms, 3),
                "kind": report.slowest.kind,
                "where": report.slowest.where,
            }
            if report.slowest.kind
            else None,
            "details": [
                {"reason": p.reason, "message": p.message, "where": p.where, "evidence": p.evidence, "count": p.count}
                for p in report.details
            ],
        }
    )
