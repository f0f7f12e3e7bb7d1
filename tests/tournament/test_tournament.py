"""Tournaments: config validation, balanced schedules, the results store,
exact resume (in-process cancellation, Ctrl-C, and kill -9 of a real
referee), refusal of config changes, rankings, and the standings outputs.

Resume is checked for exactness, so most tests use a deterministic bot
written here: it picks `legal[hash(salt, game id, request id) % n]` (or
`legal[0]`), so a game's result depends only on its spec. Each bot gets a
unique marker as its first argument; leftover processes are found by
scanning /proc for it.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from math import comb, factorial
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from logfiles import read_json_log
from needs import needs_proc
from paths import ROOT, TEST_BOTS
from proctools import wait_no_procs
from timing import scaled, wait_until
from typer.testing import CliRunner

from protocol.messages import SeatFailure
from referee.cli import app
from referee.errors import ConfigError, RefereeError
from referee.play.game_spec import GameRecord
from referee.tournament.config import Tournament, load_config, parse_config
from referee.tournament.resume import game_spec, spec_hash
from referee.tournament.run import (
    TournamentRunner,
    build_bots,
    check_commands,
    handle_signals,
    prepare_store,
)
from referee.tournament.schedule import (
    build_schedule,
    make_tables,
    pair_counts,
    schedule_for,
    seat_counts,
    successor_counts,
)
from referee.tournament.standings import compute, from_store
from referee.tournament.standings_export import CSV_COLUMNS
from referee.tournament.store import Store

pytestmark = needs_proc

SAMPLE = ROOT / "sample_bots"
GREEDY = "greedy"  # the built-in bot
FIRST = SAMPLE / "python" / "first_legal_bot.py"
ILLEGAL = TEST_BOTS / "illegal.py"
cli = CliRunner()

DET_BOT = '''\
"""Deterministic test bot: python det_bot.py MARKER SALT ("first" = always legal[0])."""
import hashlib, json, sys
salt = sys.argv[2] if len(sys.argv) > 2 else "x"
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        sys.stdout.write('{"type":"hello","name":"det","version":"1"}\\n')
    elif kind == "request":
        legal = msg["legal"]
        if salt == "first":
            i = 0
        else:
            h = hashlib.sha256(f"{salt}:{msg['game_id']}:{msg['id']}".encode()).digest()
            i = int.from_bytes(h[:4], "big") % len(legal)
        sys.stdout.write(json.dumps({"type": "action", "id": msg["id"], "action": legal[i]}) + "\\n")
    elif kind == "bye":
        break
    sys.stdout.flush()
'''


# ------------------------------------------------------------------ helpers


def new_marker() -> str:
    return f"tourmark-{uuid.uuid4().hex}"


def det_bot(folder: Path) -> Path:
    path = folder / "det_bot.py"
    if not path.exists():
        path.write_text(DET_BOT)
    return path


def write_config(
    folder: Path, bots: list[tuple[str, str]], *, filename: str = "t.toml", extra: str = "", **top: Any
) -> Path:
    """A config file: top-level keys, raw `extra` TOML (tables), then the bots."""
    top = {"seed": 7, "time_control": "decision=2s,startup=10s", "sandbox": False, **top}
    lines = [f"{k} = {json.dumps(v)}" for k, v in top.items()]
    lines.append(extra or "[rules]\noptions = { target_score = 20 }")
    for name, command in bots:
        lines += ["[[bots]]", f"name = {json.dumps(name)}", f"command = {json.dumps(command)}"]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_text("\n".join(lines) + "\n")
    return path


def det_bots(folder: Path, marker: str, names: list[str]) -> list[tuple[str, str]]:
    bot = det_bot(folder)
    return [(n, f"{bot} {marker} {n}") for n in names]


def open_store(t: Tournament, db: Path) -> tuple[Store, list[Any]]:
    store = Store.open(db, create=True, lock=True)
    schedule = schedule_for(t)
    prepare_store(t, store, schedule)
    return store, schedule


async def run_all(t: Tournament, db: Path, concurrency: int = 3) -> list[Any]:
    store, schedule = open_store(t, db)
    try:
        outcome = await TournamentRunner(
            t, store, schedule, log_dir=db.with_name(db.stem + "-logs"), concurrency=concurrency
        ).run()
        assert outcome.status == "completed"
        return store.games()
    finally:
        store.close()


def read_games(db: Path) -> list[Any]:
    with Store.open(db) as store:
        return store.games()


def actions_of(log: Path) -> list[tuple[int, str, Any]]:
    _, records = read_json_log(log)
    return [(r["seat"], r["source"], r["action"]) for _, r in records if r["type"] == "action"]


def db_count(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=scaled(5))
        try:
            return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def assert_same_results(rows: list[Any], expected: list[Any], bots: list[str]) -> None:
    """Same games (per-game results, not timings) and the same standings."""
    assert [r.result() for r in rows] == [r.result() for r in expected]
    a, b = compute(rows, bots), compute(expected, bots)
    assert [(x.name, x.elo, x.err95, x.points) for x in a.bots] == [(x.name, x.elo, x.err95, x.points) for x in b.bots]


# ------------------------------------------------------------------ config

TWO_BOTS = '[[bots]]\nname = "a"\ncommand = "x.py"\n[[bots]]\nname = "b"\ncommand = "x.py"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("seed = 1\n", "bots: required key is missing"),
        ('seed = "one"\n' + TWO_BOTS, "seed: expected int, got str"),
        ("seed = 1\ndealsets = 3\n" + TWO_BOTS, "dealsets: unknown key (did you mean 'deal_sets'?)"),
        ("seed = 1\ntable_size = 5\n" + TWO_BOTS, "table_size: Swedish Chicago is played at 2 or 3 or 4 seats, not 5"),
        ('seed = 1\ngame = "ghost-euchre"\n' + TWO_BOTS, "table_size: Ghost Hand Euchre is played at 3 seats"),
        ('seed = 1\nformat = "swiss"\n' + TWO_BOTS, "format: invalid value 'swiss'; choose round-robin or gauntlet"),
        ("seed = 1\ndeal_sets = 0\n" + TWO_BOTS, "deal_sets: must be at least 1"),
        ("seed = 1\nconcurrency = -1\n" + TWO_BOTS, "concurrency: must be 0"),
        ('seed = 1\ntime_control = "decision=fast"\n' + TWO_BOTS, "time_control: bad duration 'fast'"),
        ('seed = 1\ntime_control = "move=1s"\n' + TWO_BOTS, "time_control: unknown time-control key 'move'"),
        ('seed = 1\nfailure_policy = "lenient"\n' + TWO_BOTS, "failure_policy: "),
        (
            'seed = 1\n[failure_policy]\nmode = "forfeit"\nstrikes = 2\n' + TWO_BOTS,
            "failure_policy.strikes: unknown key",
        ),
        ('seed = 1\n[rules]\npreset = "house"\n' + TWO_BOTS, "rules.preset: unknown chicago preset 'house'"),
        (
            "seed = 1\n[rules]\noptions = { target = 30 }\n" + TWO_BOTS,
            "rules.options: unknown chicago rule option 'target'",
        ),
        ("seed = 1\n[rules]\noptions = { target_score = 0 }\n" + TWO_BOTS, "rules.options: invalid chicago rules"),
        ('seed = 1\n[time_control]\ndecision = "1s"\nbonus = "1s"\n' + TWO_BOTS, "time_control.bonus: unknown key"),
        (
            'seed = 1\n[[bots]]\nname = "a"\ncommand = "x.py"\n[[bots]]\nname = "b"\n',
            "bots[1].command: required key is missing",
        ),
        ('seed = 1\n[[bots]]\nname = "a"\ncomand = "x.py"\n', "bots[0].comand: unknown key (did you mean 'command'?)"),
        ('seed = 1\n[[bots]]\nname = "a b"\ncommand = "x.py"\n' + TWO_BOTS, "bots[0].name: 'a b' must be"),
        ('seed = 1\n[[bots]]\nname = "a"\ncommand = ""\n' + TWO_BOTS, "bots[0] (a).command: must not be empty"),
        ('seed = 1\n[[bots]]\nname = "c"\ncommand = "x.py"\ndir = "nowhere"\n' + TWO_BOTS, "bots[0] (c).dir: "),
        ("seed = 1\n" + TWO_BOTS + TWO_BOTS, "bots: bot names must be unique; repeated: a, b"),
        ('seed = 1\n[[bots]]\nname = "a"\ncommand = "x.py"\n', "bots: a round robin at 2 seats needs at least 2 bots"),
        ('seed = 1\nformat = "gauntlet"\n' + TWO_BOTS, "candidates: a gauntlet needs at least one candidate"),
        ('seed = 1\nformat = "gauntlet"\ncandidates = ["z"]\n' + TWO_BOTS, "candidates: 'z' is not the name of a bot"),
        ('seed = 1\ncandidates = ["a"]\n' + TWO_BOTS, 'candidates: only used with format = "gauntlet"'),
        (
            'seed = 1\nformat = "gauntlet"\ntable_size = 3\ncandidates = ["a"]\n' + TWO_BOTS,
            "bots: a gauntlet at 3 seats needs at least 2 bots besides the candidates",
        ),
        ("seed = 1\nbots = 3\n", "bots: expected list, got int"),
        ("seed = [1\n", "not valid TOML"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert expected in message, message


def test_config_defaults_tables_and_paths_relative_to_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "conf"
    (tmp_path / "bots").mkdir()
    folder.mkdir()
    (folder / "t.toml").write_text(
        'seed = 3\n[time_control]\ndecision = "300ms"\nbank = "20s"\nincrement = "50ms"\n'
        '[failure_policy]\nmode = "substitute"\nmax_strikes = 2\n'
        '[[bots]]\nname = "a"\ncommand = "../bots/a.py --level 2"\n'
        '[[bots]]\nname = "b"\ncommand = ["./b", "x y"]\ndir = "../bots"\nbuild = "true"\n'
    )
    monkeypatch.chdir(tmp_path / "bots")  # the current directory does not matter
    t = load_config(folder / "t.toml")
    assert t.name == "t" and t.game.name == "chicago" and t.table_size == 2 and t.format == "round-robin"
    assert t.deal_sets == 2 and t.concurrency == 0 and t.candidates == ()
    assert (t.time_control.decision_ms, t.time_control.bank_ms, t.time_control.increment_ms) == (300, 20000, 50)
    assert t.time_control.startup_ms == 10_000
    assert (t.policy.mode, t.policy.max_strikes) == ("substitute", 2)
    a, b = t.bots
    assert a.spec.argv == (sys.executable, "-u", "../bots/a.py", "--level", "2")
    assert a.spec.cwd == str(folder.resolve())
    assert b.spec.argv == ("./b", "x y") and b.spec.cwd == str((tmp_path / "bots").resolve())
    assert b.identity() == {"command": ["./b", "x y"], "dir": "../bots", "build": "true"}
    assert t.definition()["bots"]["a"]["command"] == "../bots/a.py --level 2"


def test_sample_config_is_valid() -> None:
    if shutil.which("node") is None:
        pytest.skip("the sample config includes the JavaScript bot")
    t = load_config(ROOT / "tournaments" / "sample.toml")
    assert set(t.bot_names) >= {"random", "first-legal", "js-heuristic"}
    assert t.table_size in (2, 3)
    for b in t.bots:
        scripts = [a for a in b.spec.argv if a.endswith((".py", ".js"))]
        if scripts:
            assert (Path(b.spec.cwd or ".") / scripts[0]).exists(), scripts
        else:  # a built-in bot, by name
            module = b.spec.argv[b.spec.argv.index("-m") + 1]
            assert importlib.util.find_spec(module) is not None, module


async def test_builds_run_first_and_missing_programs_fail_fast(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "bot_src.py").write_text(DET_BOT)
    text = (
        'seed = 1\n[[bots]]\nname = "built"\ncommand = "bot.py"\ndir = "src"\n'
        'build = "cp bot_src.py bot.py"\n' + TWO_BOTS.replace("x.py", str(FIRST))
    )
    t = parse_config(text, tmp_path)
    with pytest.raises(RefereeError, match=r"bots\[0\] \(built\)\.command: bot\.py does not exist"):
        check_commands(t)
    await build_bots(t)
    check_commands(t)
    assert (src / "bot.py").exists()
    broken = parse_config(text.replace("cp bot_src.py", "cp nothing.py"), tmp_path)
    with pytest.raises(
        RefereeError, match=r"bots\[0\] \(built\)\.build: 'cp nothing.py bot.py' failed with exit code 1"
    ):
        await build_bots(broken)
    missing = parse_config("seed = 1\n" + TWO_BOTS.replace('"x.py"', '"no-such-program --fast"'), tmp_path)
    with pytest.raises(RefereeError, match=r"bots\[0\] \(a\)\.command: 'no-such-program' is not a program on the PATH"):
        check_commands(missing)


# ------------------------------------------------------------------ schedule


@pytest.mark.parametrize(
    ("fmt", "k", "n", "cands"),
    [
        ("round-robin", 2, 4, ()),
        ("round-robin", 3, 5, ()),
        ("round-robin", 4, 5, ()),
        ("round-robin", 4, 6, ()),
        ("gauntlet", 2, 5, ("b1", "b3")),
        ("gauntlet", 3, 5, ("b0",)),
        ("gauntlet", 3, 6, ("b2", "b5")),
        ("gauntlet", 4, 6, ("b0", "b1")),
    ],
)
def test_schedule_is_balanced(fmt: str, k: int, n: int, cands: tuple[str, ...]) -> None:
    bots = [f"b{i}" for i in range(n)]
    d = 2 * factorial(k - 1)  # whole cycles of seating orders, twice
    games = build_schedule(bots, k, fmt, d, seed=11, candidates=cands)
    field = [b for b in bots if b not in cands]
    n_tables = comb(n, k) if fmt == "round-robin" else len(cands) * comb(len(field), k - 1)
    assert len(make_tables(bots, k, fmt, cands)) == n_tables
    assert len(games) == n_tables * d * k
    assert [g.game_id for g in games] == list(range(1, len(games) + 1))
    assert len({g.key for g in games}) == len(games)
    # every bot sits in every seat equally often
    for bot, seats in seat_counts(games).items():
        assert sorted(seats) == list(range(k)), bot
        assert len(set(seats.values())) == 1, (bot, seats)
    # every pair shares tables equally often (gauntlet: within each kind of pair)
    pairs = pair_counts(games)
    if fmt == "round-robin":
        assert len(pairs) == comb(n, 2) and len(set(pairs.values())) == 1
    else:
        cross = {p: c for p, c in pairs.items() if (p[0] in cands) != (p[1] in cands)}
        assert len(cross) == len(cands) * len(field) and len(set(cross.values())) == 1
        assert not any(p[0] in cands and p[1] in cands for p in pairs)  # candidates never meet
        inner = {p: c for p, c in pairs.items() if p[0] not in cands and p[1] not in cands}
        assert len(set(inner.values())) <= 1
        assert len(inner) == (comb(len(field), 2) if k > 2 else 0)
    # with 3-4 seats, every bot follows every other bot equally often
    succ = successor_counts(games)
    for (a, b), c in succ.items():
        assert succ[(b, a)] == c
    if fmt == "round-robin" and k > 2:
        assert len(set(succ.values())) == 1
    # one seed per deal set, shared by every rotation and every table
    seeds = {g.deal_set: g.seed for g in games}
    assert all(g.seed == seeds[g.deal_set] for g in games) and len(set(seeds.values())) == d
    # each deal set of a table plays each rotation once
    for g in games:
        mine = [x for x in games if x.table == g.table and x.deal_set == g.deal_set]
        assert sorted(x.rotation for x in mine) == list(range(k))


def test_schedule_is_deterministic_and_more_deal_sets_only_append() -> None:
    bots = ["w", "x", "y", "z"]
    a = build_schedule(bots, 3, "round-robin", 2, seed=5)
    assert a == build_schedule(bots, 3, "round-robin", 2, seed=5)
    longer = build_schedule(bots, 3, "round-robin", 5, seed=5)
    assert longer[: len(a)] == a
    other = build_schedule(bots, 3, "round-robin", 2, seed=6)
    assert [g.key for g in other] == [g.key for g in a] and other[0].seed != a[0].seed
    assert a[0].key == "w+x+y/d0/r0" and a[0].seats == ("w", "x", "y") and a[1].seats == ("x", "y", "w")
    assert a[12].seats == ("w", "y", "x")  # deal set 1: the other cyclic order


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 7), k=st.integers(2, 4), d=st.integers(1, 3), seed=st.integers(0, 2**40))
def test_round_robin_balance_property(n: int, k: int, d: int, seed: int) -> None:
    if k > n:
        return
    bots = [f"p{i}" for i in range(n)]
    games = build_schedule(bots, k, "round-robin", d, seed)
    assert len(games) == comb(n, k) * d * k
    for seats in seat_counts(games).values():
        assert len(seats) == k and len(set(seats.values())) == 1
    if n > 1:
        assert len(set(pair_counts(games).values())) == 1


# ------------------------------------------------------------------ store


def _record(seats: list[str], scores: list[int], failures: list[SeatFailure] | None = None) -> GameRecord:
    places = [1 + sum(s > x for s in scores) for x in scores]
    winner = places.index(1) if places.count(1) == 1 else None
    return GameRecord(
        game_id=0,
        seed=1,
        deal_set=0,
        seat_names=seats,
        winner=winner,
        scores=scores,
        placements=places,
        reason="target",
        failures=failures or [],
        forfeited=[],
        deals=4,
        decisions=40,
        log_path=None,
        think_ms=[1.5] * len(seats),
    )


def test_store_round_trip_lock_and_one_row_per_game(tmp_path: Path) -> None:
    t = parse_config("seed = 1\ntable_size = 3\n" + TWO_BOTS + '[[bots]]\nname = "c"\ncommand = "x.py"\n', tmp_path)
    db = tmp_path / "r.db"
    store, schedule = open_store(t, db)
    try:
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        with pytest.raises(RefereeError, match="another referee is running this tournament"):
            Store.open(db, lock=True)
        run = store.begin_run(4)
        g = schedule[1]
        spec = game_spec(t, g)
        fail = SeatFailure(seat=2, reason="timeout", message="no reply to request 9 within 1000 ms")
        store.record_game(
            g,
            spec,
            spec_hash(spec),
            _record(list(g.seats), [30, 12, 30], [fail]),
            tmp_path / "logs" / g.log_name(),
            100.0,
            101.25,
            run,
        )
        with pytest.raises(sqlite3.IntegrityError):  # a game can never be counted twice
            store.record_game(g, spec, spec_hash(spec), _record(list(g.seats), [1, 2, 3]), None, 1.0, 2.0, run)
        store.end_run(run, "completed")
    finally:
        store.close()
    with Store.open(db) as again:
        (row,) = again.games()
        assert again.finished_keys() == {g.key}
        assert row.key == g.key and row.game_id == g.game_id and row.table == g.table and row.seats == g.seats
        assert (row.deal_set, row.rotation, row.seed) == (g.deal_set, g.rotation, g.seed)
        assert row.scores == (30, 12, 30) and row.placements == (1, 3, 1) and row.winner_seat is None
        assert row.failures[0].bot == g.seats[2] and row.failures[0].reason == "timeout"
        assert row.log_path == f"logs/{g.log_name()}" and row.duration_s == 1.25
        assert again.abs_path(row.log_path) == tmp_path / "logs" / g.log_name()
        assert again.spec_hashes()[g.key] == (spec_hash(spec), spec)
        info = again.tournament()
        assert info is not None and info.scheduled_games == len(schedule) and info.definition == t.definition()
        assert again.bot_names() == ["a", "b", "c"]
        (r,) = again.runs()
        assert (r.status, r.concurrency, r.games_recorded) == ("completed", 4, 1)
    with pytest.raises(RefereeError, match="no such results database"):
        Store.open(tmp_path / "missing.db")
    (tmp_path / "junk.db").write_text("not sqlite")
    with pytest.raises(RefereeError, match="damaged or is not one"):
        Store.open(tmp_path / "junk.db")


# ------------------------------------------------------------------ config changes


def test_config_changes_that_would_change_finished_games_are_refused(tmp_path: Path) -> None:
    bots = det_bots(tmp_path, "nomark", ["a", "b", "c"])
    base = write_config(tmp_path, bots, deal_sets=2, table_size=2)
    t = load_config(base)
    db = tmp_path / "c.db"
    store, schedule = open_store(t, db)
    for g in (schedule[4], schedule[7]):  # b+c in deal set 0, a+b in deal set 1
        spec = game_spec(t, g)
        store.record_game(g, spec, spec_hash(spec), _record(list(g.seats), [20, 5]), None, 1.0, 2.0, None)
    store.close()

    def check(path: Path) -> None:
        t2 = load_config(path)
        with Store.open(db) as s:
            prepare_store(t2, s, schedule_for(t2))

    made: list[Path] = []

    def variant(**kw: Any) -> Path:
        made.append(tmp_path / f"v{len(made)}.toml")
        args: dict[str, Any] = {"deal_sets": 2, "table_size": 2, "filename": made[-1].name}
        args.update(kw)
        bot_list = args.pop("bots", bots)
        return write_config(tmp_path, bot_list, **args)

    refused = [
        (
            variant(time_control="decision=1s,startup=10s"),
            "time_control changed (time_control.decision_ms: 2000 -> 1000)",
        ),
        (variant(seed=8), "seed changed from 7 to 8"),
        (variant(extra="[rules]\noptions = { target_score = 25 }"), "rules.target_score: 20 -> 25"),
        (variant(failure_policy="substitute"), "failure_policy changed"),
        (variant(table_size=3), "table_size changed from 2 to 3"),
        (variant(bots=[bots[0], (bots[1][0], bots[1][1] + " extra"), bots[2]]), "bot 'b' changed (command: "),
        (variant(bots=bots[:2]), "bot 'c' played finished games but is no longer in the config"),
        (variant(deal_sets=1), "finished game a+b/d1/r1 is not in the new schedule"),
        (variant(bots=bots + det_bots(tmp_path, "nomark", ["d"])), "would be played differently (game_id: "),
    ]
    for path, expected in refused:
        with pytest.raises(ConfigError) as info:
            check(path)
        assert expected in str(info.value), (expected, str(info.value))
        assert "the config no longer matches the 2 finished games" in str(info.value)
    # allowed: more deal sets, another concurrency, another name; the stored config follows
    check(variant(deal_sets=4, concurrency=5, name="renamed"))
    with Store.open(db) as s:
        info2 = s.tournament()
        assert info2 is not None and info2.scheduled_games == 3 * 4 * 2 and info2.name == "renamed"
        assert len(s.games()) == 2
    # and through the CLI: a one-line error, exit code 2, nothing played
    res = cli.invoke(app, ["tournament", str(variant(seed=9)), "--db", str(db)])
    assert res.exit_code == 2, res.output
    assert "seed changed from 7 to 9" in res.stderr
    with Store.open(db) as s:
        assert len(s.games()) == 2


# ------------------------------------------------------------------ resume


async def test_resume_after_cancellation_is_exact(tmp_path: Path) -> None:
    marker = new_marker()
    t = load_config(write_config(tmp_path, det_bots(tmp_path, marker, ["a", "b", "c"]), deal_sets=2))
    expected = await run_all(t, tmp_path / "full.db")
    assert len(expected) == 12

    db = tmp_path / "cut.db"
    store, schedule = open_store(t, db)
    seen: list[str] = []
    try:
        with trio.CancelScope() as cancel:

            def on_game(row: Any) -> None:
                seen.append(row.key)
                if len(seen) == 4:
                    cancel.cancel()  # mid-run: 3 games are in flight

            runner = TournamentRunner(t, store, schedule, log_dir=tmp_path / "cut-logs", concurrency=3, on_game=on_game)
            await runner.run()
        assert cancel.cancelled_caught
        assert sorted(store.finished_keys()) == sorted(seen) and 4 <= len(seen) < 12
        assert wait_no_procs(marker) == []
        logs = sorted(p.name for p in (tmp_path / "cut-logs").iterdir())
        assert not any(n.endswith(".part") for n in logs)  # in-flight games leave nothing behind
        assert len(logs) == len(seen)

        outcome = await TournamentRunner(t, store, schedule, log_dir=tmp_path / "cut-logs", concurrency=2).run()
        assert outcome.status == "completed" and outcome.finished_before == len(seen)
        assert outcome.recorded == 12 - len(seen) and outcome.remaining == 0
        rows = store.games()
        assert [r.status for r in store.runs()] == ["aborted", "completed"]
    finally:
        store.close()
    assert [r.key for r in rows] == [g.key for g in schedule]  # each scheduled game exactly once
    assert_same_results(rows, expected, t.bot_names)
    for r, e in zip(rows, expected):  # the replayed games made the same moves
        assert actions_of(tmp_path / r.log_path) == actions_of(tmp_path / e.log_path)
    assert len(list((tmp_path / "cut-logs").iterdir())) == 12
    assert wait_no_procs(marker) == []


async def test_stop_lets_running_games_finish_and_records_them(tmp_path: Path) -> None:
    marker = new_marker()
    t = load_config(write_config(tmp_path, det_bots(tmp_path, marker, ["a", "b", "c"]), deal_sets=2))
    store, schedule = open_store(t, tmp_path / "s.db")
    started: list[str] = []
    try:

        def on_game(row: Any) -> None:
            runner.stop()

        runner = TournamentRunner(
            t,
            store,
            schedule,
            log_dir=tmp_path / "logs",
            concurrency=3,
            on_game=on_game,
            on_start=lambda g: started.append(g.key),
        )
        outcome = await runner.run()
        assert outcome.status == "stopped"
        assert sorted(store.finished_keys()) == sorted(started)  # every started game finished and counted
        assert outcome.recorded == len(started) < 12
        outcome2 = await TournamentRunner(t, store, schedule, log_dir=tmp_path / "logs", concurrency=3).run()
        assert outcome2.status == "completed" and outcome2.finished == 12
    finally:
        store.close()
    assert wait_no_procs(marker) == []


def _start_referee(config: Path, db: Path, out: Path, concurrency: int = 3) -> subprocess.Popen[bytes]:
    with open(out, "ab") as fh:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "referee.cli",
                "tournament",
                str(config),
                "--db",
                str(db),
                "--concurrency",
                str(concurrency),
            ],
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
        )


def _wait_for(pred: Any, within: float) -> bool:
    return bool(wait_until(pred, within, every=0.02))


@pytest.mark.slow
def test_kill_minus_9_and_resume_is_exact(tmp_path: Path) -> None:
    """SIGKILL the referee at random moments, resume each time: every scheduled
    game ends up in the database exactly once, with the results of an
    uninterrupted run, and no bot outlives a killed referee for long."""
    marker = new_marker()
    config = write_config(tmp_path, det_bots(tmp_path, marker, ["a", "b", "c", "d"]), table_size=3, deal_sets=2)
    t = load_config(config)
    total = len(schedule_for(t))
    assert total == 4 * 2 * 3
    expected = trio.run(run_all, t, tmp_path / "baseline.db")
    db = tmp_path / "killed.db"
    rng = random.Random(2024)
    kills = 0
    for _ in range(3):
        before = db_count(db)
        proc = _start_referee(config, db, tmp_path / "referee.out")
        try:
            # a random moment after this run has recorded at least one game
            assert _wait_for(lambda: db_count(db) > before or proc.poll() is not None, 60)
            time.sleep(rng.uniform(0.0, 0.6))
            if proc.poll() is not None:
                break
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(scaled(10))
            kills += 1
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(scaled(10))
        assert wait_no_procs(marker, within=5.0) == [], "bots outlived the killed referee"
        assert db_count(db) < total
    assert kills >= 2
    proc = _start_referee(config, db, tmp_path / "referee.out")
    assert proc.wait(scaled(120)) == 0, (tmp_path / "referee.out").read_text()[-3000:]
    rows = read_games(db)
    assert len(rows) == total and [r.key for r in rows] == [g.key for g in schedule_for(t)]
    assert_same_results(rows, expected, t.bot_names)
    logs = sorted((tmp_path / "killed-logs").iterdir())
    assert len(logs) == total and not any(p.name.endswith(".part") for p in logs)
    with Store.open(db) as s:
        runs = s.runs()
    assert [r.status for r in runs] == ["running"] * kills + ["completed"]  # killed runs never said goodbye
    assert sum(r.games_recorded for r in runs) == total
    assert wait_no_procs(marker) == []


@pytest.mark.slow
def test_ctrl_c_and_sigterm_stop_cleanly_and_print_how_to_resume(tmp_path: Path) -> None:
    marker = new_marker()
    config = write_config(tmp_path, det_bots(tmp_path, marker, ["a", "b", "c"]), deal_sets=3)
    total = 3 * 3 * 2
    db = tmp_path / "int.db"
    for sig, said in ((signal.SIGINT, "stopping: no new games"), (signal.SIGTERM, "aborting: running games")):
        out = tmp_path / f"{sig.name}.out"
        before = db_count(db)
        proc = _start_referee(config, db, out, concurrency=2)
        assert _wait_for(lambda: db_count(db) > before, 60)
        proc.send_signal(sig)
        assert proc.wait(scaled(30)) == 130
        text = out.read_text()
        assert said in text and "resume with:" in text and "--resume" in text, text[-2000:]
        assert before < db_count(db) < total
        assert wait_no_procs(marker) == []
        assert not any(p.name.endswith(".part") for p in (tmp_path / "int-logs").iterdir())
    with Store.open(db) as s:
        assert [r.status for r in s.runs()] == ["stopped", "aborted"]
    res = cli.invoke(app, ["tournament", str(config), "--db", str(db), "--resume"])
    assert res.exit_code == 0, res.output
    assert "resuming: " in res.stderr and f"{total}/{total} finished" in res.stderr
    assert db_count(db) == total


async def test_second_ctrl_c_aborts_the_running_games(tmp_path: Path) -> None:
    marker = new_marker()
    t = load_config(write_config(tmp_path, det_bots(tmp_path, marker, ["a", "b", "c"]), deal_sets=2))
    store, schedule = open_store(t, tmp_path / "c.db")
    notes: list[str] = []
    try:

        async def press_twice() -> None:
            os.kill(os.getpid(), signal.SIGINT)
            while not runner.stopping:  # the first press has been handled
                await trio.sleep(0.001)
            os.kill(os.getpid(), signal.SIGINT)

        def on_game(row: Any) -> None:
            if len(store.finished_keys()) == 1:
                nursery.start_soon(press_twice)

        runner = TournamentRunner(t, store, schedule, log_dir=tmp_path / "logs", concurrency=3, on_game=on_game)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(handle_signals, runner, notes.append)
            outcome = await runner.run()
            nursery.cancel_scope.cancel()
        assert outcome.status == "aborted" and 1 <= outcome.recorded < 12
        assert notes[0].startswith("stopping: no new games") and notes[1].startswith("aborting")
        assert store.finished_count() == outcome.recorded
    finally:
        store.close()
    assert wait_no_procs(marker) == []


# ------------------------------------------------------------------ rankings and reports


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A round robin of a weak, a middling and a strong bot, run through the CLI
    with the default result paths (results/<stem>/ next to the config)."""
    folder = tmp_path_factory.mktemp("ranked")
    bot = det_bot(folder)
    bots = [("random", f"{bot} {new_marker()} rnd"), ("first-legal", str(FIRST)), ("greedy", str(GREEDY))]
    config = write_config(
        folder, bots, filename="ranking.toml", deal_sets=5, seed=3, time_control="decision=5s,startup=20s"
    )  # roomy: rankings, not clocks
    t0 = time.monotonic()
    res = cli.invoke(app, ["tournament", str(config), "--concurrency", "2"])
    assert res.exit_code == 0, res.output
    db = folder / "results" / "ranking" / "tournament.db"
    return {
        "folder": folder,
        "config": config,
        "db": db,
        "stdout": res.stdout,
        "stderr": res.stderr,
        "seconds": time.monotonic() - t0,
    }


@pytest.mark.slow
def test_ranking_orders_weak_and_strong_bots(ranked: dict[str, Any]) -> None:
    assert (ranked["folder"] / "results" / ".gitignore").read_text().strip().endswith("*")
    with Store.open(ranked["db"]) as store:
        stand = from_store(store)
    assert stand.finished == stand.scheduled == 3 * 5 * 2
    assert [b.name for b in stand.bots] == ["greedy", "first-legal", "random"]
    g, f, r = stand.bots
    assert g.elo - g.err95 > r.elo + r.err95  # a large gap: the 95 % bars do not overlap
    assert g.elo - g.err95 > f.elo + f.err95
    assert stand.ratings is not None
    assert stand.ratings.los("greedy", "random") > 0.99 and stand.ratings.los("first-legal", "random") > 0.9
    assert "greedy" in ranked["stdout"] and "LOS" in ranked["stdout"] and "Crosstable" in ranked["stdout"]
    assert "completed: 30 games played" in ranked["stderr"]


@pytest.mark.slow
def test_standings_json_csv_text_and_html(ranked: dict[str, Any]) -> None:
    db = ranked["db"]
    res = cli.invoke(app, ["standings", str(db), "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["finished_games"] == d["scheduled_games"] == 30 and d["table_size"] == 2
    rows = d["standings"]
    assert [x["rank"] for x in rows] == [1, 2, 3] and sum(x["games"] for x in rows) == 60
    for x in rows:
        assert x["pair_wins"] + x["pair_losses"] + x["pair_draws"] == x["games"] == 20
        assert [s["games"] for s in x["seats"]] == [10, 10]  # balanced seating
    cross = d["crosstable"]
    for a in cross:
        for b, wld in cross[a].items():
            assert (wld["w"], wld["l"], wld["d"]) == (cross[b][a]["l"], cross[b][a]["w"], cross[b][a]["d"])
            assert d["los"][a][b] + d["los"][b][a] == pytest.approx(1.0)
    assert [s["games"] for s in d["seat_totals"]] == [30, 30]

    def leaves(v: Any) -> list[Any]:
        return (
            [x for w in v.values() for x in leaves(w)]
            if isinstance(v, dict)
            else [x for w in v for x in leaves(w)]
            if isinstance(v, list)
            else [v]
        )

    assert not [v for v in leaves(d) if isinstance(v, str) and v.lstrip("+-") in ("inf", "nan")]  # numbers or null

    res = cli.invoke(app, ["standings", str(db), "--csv"])
    assert res.exit_code == 0, res.output
    table = list(csv.reader(io.StringIO(res.stdout)))
    assert tuple(table[0]) == CSV_COLUMNS and len(table) == 4
    assert [r[1] for r in table[1:]] == [x["bot"] for x in rows]
    assert [float(r[2]) for r in table[1:]] == pytest.approx([x["elo"] for x in rows], abs=0.051)

    # the config path works too: it finds its default database
    res = cli.invoke(app, ["standings", str(ranked["config"])])
    assert res.exit_code == 0, res.output
    for word in ("greedy", "first-legal", "random", "LOS", "Crosstable", "Per seat"):
        assert word in res.stdout
    assert "30/30 games finished over 1 run(s)" in res.stderr

    # HTML: self-contained, with the chart, and replay links where replay pages exist
    with Store.open(db) as store:
        first = store.games()[0]
        log = store.abs_path(first.log_path)
    assert log is not None and log.exists()
    log.with_suffix(".html").write_text("<html>replay</html>")
    out = ranked["folder"] / "report" / "standings.html"
    res = cli.invoke(app, ["standings", str(db), "--html", str(out)])
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "</html>" in page
    for word in ("greedy", "first-legal", "random", "Crosstable", "Per seat", "Likelihood of superiority"):
        assert word in page
    assert "<script" not in page and "<link" not in page and "src=" not in page  # nothing external
    assert f'href="../results/ranking/logs/{log.with_suffix(".html").name}">replay' in page
    # Every game links its replay page, written beside its log (an existing page is kept).
    assert page.count(">replay</a>") == 30 and page.count(">log</a>") == 30
    with Store.open(db) as store:
        pages = [store.abs_path(g.log_path).with_suffix(".html") for g in store.games()]  # type: ignore[union-attr]
    assert all(p.exists() for p in pages)
    assert sum("<html>replay</html>" in p.read_text() for p in pages) == 1  # the others are real viewers
    # What was played and how: the game's name (not its id), the clock, the rules and the seed.
    about = page.split("<table class='about'>", 1)[1].split("</table>", 1)[0]
    assert "Swedish Chicago" in about and "time control" in about and "decision=" in about
    assert "<th>rules</th>" in about and "<th>seed</th>" in about and "<th>played</th>" in about
    # A bot's name cell is its name alone: flags such as '>' sit beside the Elo.
    for name in ("greedy", "first-legal", "random"):
        assert f">{name}</td>" in page
    assert "random &lt;</td>" not in page and "greedy &gt;</td>" not in page


@pytest.mark.slow
def test_standings_fit_80_columns_and_cut_no_name(ranked: dict[str, Any]) -> None:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "standings", str(ranked["db"])],
        capture_output=True,
        text=True,
        env=env,
        timeout=scaled(120),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    long = [line for line in lines if len(line) > 80 and not re.search(r"[0-9a-f]{32}", line)]
    assert not long, long  # only a line with a hash (kept whole to be copied) may be longer
    assert "…" not in done.stdout
    for name in ("greedy", "first-legal", "random"):
        assert any(name in line.split() for line in lines)


async def test_failures_are_counted_by_reason(tmp_path: Path) -> None:
    marker = new_marker()
    bots = det_bots(tmp_path, marker, ["a"]) + [("cheat", f"{ILLEGAL} {marker} on=0")]
    t = load_config(write_config(tmp_path, bots, deal_sets=1))
    rows = await run_all(t, tmp_path / "f.db", concurrency=2)
    stand = compute(rows, t.bot_names)
    assert stand.bot("cheat").failures == {"illegal_action": 2}
    assert stand.bot("a").failures == {} and stand.bot("a").wins == 2
    assert all(r.reason == "forfeit" for r in rows)
    res = cli.invoke(app, ["standings", str(tmp_path / "f.db")])
    assert res.exit_code == 0, res.output
    assert "Failures by reason" in res.stdout and "illegal_action" in res.stdout
    assert wait_no_procs(marker) == []
