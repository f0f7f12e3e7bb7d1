"""Verifying game logs: re-run each game and compare everything it logged.

`verify_file` re-simulates one log through its engine (`referee.replay.load`)
and walks the records in order, checking each against the simulation:

- `deal`: the dealer and the full deck order of every deal;
- `event`: every engine event and its audience, exactly (compared as JSON);
- `send`: `game_start` against the header, the `events` inside every
  `request` and `game_over` against what that seat may have seen since its
  previous message, the request's seat and id, the outcome in `game_over`;
- `recv`/`action`: each action is legal, by the seat to act; a bot-sourced
  action equals the action in that seat's last reply line (same request id);
  a referee default is the first legal action;
- `failure` and `result`: an `illegal_action`, `malformed_json`,
  `schema_violation` or `nesting_too_deep` failure re-judged from the reply
  line, the warning sent after a failure, the forfeits (under the
  `forfeit` policy every failure forfeits), the decision count, winner,
  scores, placements and reason;
- the header: the game seed derives from `match_seed` and `deal_set`, the
  rules and failure policy decode, every `game_start` matches it; a start
  position (`match --start`) is of this game, seat count and seed, and the
  game is re-simulated from it.

Timings (`t`, `ms`, `cpu_ms`, `think_ms`, `referee_overhead_us`, the clock values in requests) are
not checked, nor are record fields verify does not know. The first mismatch
of a file is reported as `file:line: what differs: expected ... found ...`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from referee.errors import CorruptLog
from referee.replay.load import GameLog, LogMismatch, load_log
from referee.replay.log_checker import LogChecker

OK = "ok"
MISMATCH = "mismatch"
UNREADABLE = "unreadable"


@dataclass(frozen=True)
class Verdict:
    """The outcome for one file: ok, mismatch (with file:line) or unreadable."""

    path: str
    status: str
    message: str = ""
    actions: int = 0

    @property
    def ok(self) -> bool:
        return self.status == OK


def verify_log(log: GameLog) -> int:
    """Check a loaded log; returns the number of actions. Raises LogMismatch."""
    return LogChecker(log).run()


def verify_file(path: Path | str) -> Verdict:
    """Verify one file; never raises for a bad log (the verdict says why)."""
    name = str(path)
    try:
        log = load_log(path)
    except LogMismatch as exc:
        return Verdict(name, MISMATCH, str(exc))
    except CorruptLog as exc:
        return Verdict(name, UNREADABLE, str(exc))
    try:
        actions = verify_log(log)
    except LogMismatch as exc:
        return Verdict(name, MISMATCH, str(exc))
    except CorruptLog as exc:  # pragma: no cover - replay raises only LogMismatch past loading
        return Verdict(name, UNREADABLE, str(exc))
    return Verdict(name, OK, "", actions)


def collect_logs(paths: Iterable[Path | str]) -> tuple[list[Path], list[Verdict]]:
    """Files to verify (directories: every *.jsonl below, sorted) and verdicts for missing paths."""
    files: list[Path] = []
    missing: list[Verdict] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.jsonl") if q.is_file())
            if not found:
                missing.append(Verdict(str(p), UNREADABLE, f"{p}: no *.jsonl game logs in this directory"))
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            missing.append(Verdict(str(p), UNREADABLE, f"{p}: no such file or directory"))
    return files, missing


def verify_paths(paths: Iterable[Path | str], jobs: int | None = None) -> Iterator[Verdict]:
    """Verdicts for every log under `paths`, in file order.

    `jobs` > 1 spreads the files over that many processes (0 or None: one per
    CPU when there are many files, else in-process).
    """
    files, missing = collect_logs(paths)
    yield from missing
    if jobs is None or jobs == 0:
        jobs = (os.cpu_count() or 1) if len(files) >= 200 else 1
    if jobs <= 1 or len(files) < 2:
        for f in files:
            yield verify_file(f)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(files))) as pool:
        yield from pool.map(verify_file, files, chunksize=max(1, min(64, len(files) // (jobs * 4))))
