"""From a queued submission to a version in play: build it, then the gate.

One submission at a time per user goes through; the others of that user
wait their turn (a user cannot fill the build slots). A build runs on a
thread (it is a subprocess in the sandbox with its own limits); the gate is
the referee's conformance check (`check`), run in the arena's own sandbox
on the arena's clock, before the version plays a rated game. Either step's
failure keeps the version out of play and tells its owner why, in one line,
with the whole build log and check report kept for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from referee.arena.builds import BuildResult, build, run_spec
from referee.arena.config import Arena
from referee.arena.store import ArenaStore, now_text
from referee.arena.submissions import Submission, activate, fail, next_queued, set_status
from referee.play.check import CheckReport, check_bot

BUILDS_AT_ONCE = 2  # builds are heavy (a compiler each); two at once, of two users, and the games go on


def check_text(report: CheckReport) -> str:
    """The gate's report as its owner reads it (what `chicago-referee check` prints)."""
    lines = [f"ok    {line}" for line in report.passed]
    lines += [f"note  {line}" for line in report.notes]
    lines += [f"warning {line}" for line in report.warnings]
    lines += [f"FAIL  {line}" for line in report.problems]
    lines += [f"      {p.reason}, what the bot wrote: {p.evidence}" for p in report.details if p.evidence]
    return "\n".join(lines) + "\n"


@dataclass
class Pipeline:
    """Takes queued submissions through their build and gate, and says so."""

    arena: Arena
    store: ArenaStore
    on_active: Callable[[Submission], None] = lambda _sub: None
    wake: trio.Event = field(default_factory=trio.Event)
    busy: int = 0  # submissions building or checking now

    def poke(self) -> None:
        """A submission arrived: look at the queue again."""
        self.wake.set()

    async def run(self) -> None:
        async with trio.open_nursery() as workers:
            for _ in range(BUILDS_AT_ONCE):
                workers.start_soon(self._work)

    async def _work(self) -> None:
        while True:
            sub = None
            with self.store.transaction() as conn:
                sub = next_queued(conn)
                if sub is not None:
                    set_status(conn, sub.id, "building", now_text())
            if sub is None:
                await self.wake.wait()
                self.wake = trio.Event()
                continue
            self.busy += 1
            try:
                await self.process(sub)
            finally:
                self.busy -= 1

    async def process(self, sub: Submission) -> None:
        archive = self.arena.folder / "archives" / sub.sha256
        built: BuildResult = await trio.to_thread.run_sync(
            build, archive, sub.sha256, self.arena.folder, self.arena.builds, self.arena.archives
        )
        if not built.ok or built.recipe is None:
            with self.store.transaction() as conn:
                fail(conn, sub.id, f"build: {built.reason or 'failed'}", now_text())
            return
        with self.store.transaction() as conn:
            set_status(conn, sub.id, "checking", now_text())
        spec = run_spec(built, f"{sub.bot}.v{sub.version}", self.arena.sandbox)
        report = await check_bot(spec, self.arena.game, self.arena.time_control, sandbox=self.arena.sandbox)
        text = check_text(report)
        with self.store.transaction() as conn:
            if report.ok:
                activate(conn, sub.id, built.recipe.language, text, now_text())
            else:
                fail(conn, sub.id, f"check: {report.problems[0]}", now_text(), text)
        if report.ok:
            self.on_active(sub)
