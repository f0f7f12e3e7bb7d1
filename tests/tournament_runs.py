"""Tournaments played somewhere, and what every placement must give: the
helpers the pool's and the cluster's tests share (a config of deterministic
bots, a run, its standings, its games and logs checked)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import trio
from timing import scaled

from referee.replay.verify import OK, verify_file
from referee.tournament.config import Tournament, load_config
from referee.tournament.executors import Placement
from referee.tournament.game_job import GameJob
from referee.tournament.run import TournamentRunner, prepare_store
from referee.tournament.schedule import schedule_for
from referee.tournament.standings import from_store
from referee.tournament.standings_export import to_dict
from referee.tournament.store import Store

DET_BOT = Path(__file__).resolve().parent / "bots" / "det_bot.py"


def write_config(folder: Path, marker: str, names: list[str], deal_sets: int, think: float = 0.0) -> Path:
    lines = [
        'name = "spread"',
        "seed = 11",
        f"deal_sets = {deal_sets}",
        "table_size = 2",
        'time_control = "decision=5s,startup=20s"',
        "sandbox = false",
        "[rules]",
        "options = { target_score = 20 }",
    ]
    for n in names:
        lines += ["[[bots]]", f'name = "{n}"', f'command = "{DET_BOT} {marker} salt={n} think={think}"']
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spread.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


async def play(
    t: Tournament, db: Path, placement: Placement, concurrency: int, on_game: Any = None
) -> tuple[Any, TournamentRunner]:
    store = Store.open(db, create=True, lock=True)
    try:
        schedule = schedule_for(t)
        prepare_store(t, store, schedule)
        runner = TournamentRunner(
            t, store, schedule, log_dir=db.with_name(db.stem + "-logs"), concurrency=concurrency, placement=placement
        )
        if on_game is not None:
            runner.on_game = on_game(store, runner)
        with trio.fail_after(scaled(240)):
            outcome = await runner.run()
    finally:
        store.close()
    return outcome, runner


def standings(db: Path) -> dict[str, Any]:
    """The standings of a finished tournament, its seed commitment aside (a fresh salt each run)."""
    store = Store.open(db)
    try:
        out = to_dict(from_store(store))
    finally:
        store.close()
    out.pop("seed", None)
    return out


def check_games(db: Path, scheduled: int) -> list[Any]:
    store = Store.open(db)
    try:
        rows = store.games()
    finally:
        store.close()
    assert len(rows) == scheduled and len({r.key for r in rows}) == scheduled  # nothing lost, nothing twice
    logs = sorted(db.with_name(db.stem + "-logs").glob("*.jsonl"))
    assert len(logs) == scheduled and not list(db.with_name(db.stem + "-logs").glob("*.part"))
    for path in logs:
        assert verify_file(path).status == OK, path
    return rows


def header_worker(db: Path) -> set[str]:
    """The worker names in the log headers: who played the games."""
    names = set()
    for path in db.with_name(db.stem + "-logs").glob("*.jsonl"):
        with path.open() as fh:
            names.add(json.loads(fh.readline())["worker"]["name"])
    return names


def det_bot_folder(tmp_path: Path) -> Path:
    """`tmp_path/bot` with the deterministic test bot and its library."""
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    (bot_dir / "det_bot.py").write_text(DET_BOT.read_text())
    (bot_dir / "_botlib.py").write_text((DET_BOT.parent / "_botlib.py").read_text())
    return bot_dir


def coordinator_jobs(tmp_path: Path, marker: str) -> list[GameJob]:
    """The games of a two-bot tournament whose bots live in `tmp_path/bot`
    (`det_bot_folder`), as a cluster's coordinator sends them."""
    config = tmp_path / "t.toml"
    lines = [
        'name = "loop"',
        "seed = 3",
        "deal_sets = 2",
        "sandbox = false",
        "[rules]",
        "options = { target_score = 8 }",
    ]
    for name in ("a", "b"):
        lines += ["[[bots]]", f'name = "{name}"', 'dir = "bot"', f'command = "det_bot.py {marker} salt={name}"']
    config.write_text("\n".join(lines) + "\n")
    t = load_config(config)
    store = Store.open(tmp_path / "t.db", create=True, lock=True)
    try:
        schedule = schedule_for(t)
        prepare_store(t, store, schedule)
        runner = TournamentRunner(
            t, store, schedule, log_dir=tmp_path / "logs", concurrency=1, placement=Placement(cluster="tcp://x:1")
        )  # never reached
        return [runner.job_for(g) for g in schedule]
    finally:
        store.close()
