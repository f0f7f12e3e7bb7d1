"""The follower reads the results database less often when reading it is
dear (its standings grow with the games): at most `DB_SHARE` of a core,
on a virtual clock with a stand-in database that says what each read cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from referee.live.board import LiveBoard
from referee.live.follow import DB_EVERY_S, DB_SHARE, follow


class CostlyDb:
    """Answers `refresh` as a database whose every read took `cost_s` of CPU."""

    def __init__(self, cost_s: float) -> None:
        self.cost_s = cost_s
        self.count = 0
        self.reads = 0

    def refresh(self) -> bool:
        self.reads += 1
        return False


async def _reads_in(seconds: float, cost_s: float, tmp_path: Path) -> int:
    db: Any = CostlyDb(cost_s)
    with trio.move_on_after(seconds):
        await follow(LiveBoard(), tmp_path / "none.live.ndjson", None, db)
    return int(db.reads)


async def test_a_dear_database_is_read_less_often(
    tmp_path: Path, autojump_clock: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def in_this_thread(fn: Any, *args: Any, **_: Any) -> Any:
        return fn(*args)  # a worker thread would look idle to the virtual clock, which would jump to the end

    monkeypatch.setattr(trio.to_thread, "run_sync", in_this_thread)
    cheap = await _reads_in(120, 0.0, tmp_path)
    dear_cost = 0.5
    dear = await _reads_in(120, dear_cost, tmp_path)
    assert cheap >= 120 / (3 * DB_EVERY_S) - 2  # quiet: every few seconds anyway
    assert dear <= 120 / (3 * dear_cost / DB_SHARE) + 1 < cheap
