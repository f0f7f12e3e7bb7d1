"""Results a bot cannot bend: the seed commitment and its reveal, logs bound
to the database (`verify --db`), tampering and loss during a run, damaged
database files, and games that nobody won.

Tournaments run through the real command line in a subprocess (bots are
real processes); the tampering bot is `tests/bots/db_tamperer.py`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from needs import needs_proc
from paths import FIRST_LEGAL_BOT, ROOT, TEST_BOTS
from proctools import wait_no_procs
from timing import scaled
from typer.testing import CliRunner

from referee.cli import app
from referee.logs.gamelog import read_log
from referee.play.seeding import derive_seed
from referee.tournament.config import load_config
from referee.tournament.run import prepare_store
from referee.tournament.standings import from_store
from referee.tournament.standings_export import to_dict
from referee.tournament.store import Store

pytestmark = needs_proc

GREEDY = "greedy"  # the built-in bot
RUN_BOUND_S = scaled(240)  # a generous outer bound for one small tournament on a busy machine
cli = CliRunner()


def write_config(folder: Path, bots: list[tuple[str, str]], **top: Any) -> Path:
    # Unsandboxed on purpose: these bots must be able to reach the database, to show tampering is caught.
    top = {"time_control": "decision=2s,startup=10s", "deal_sets": 1, "sandbox": False, **top}
    lines = [f"{k} = {json.dumps(v)}" for k, v in top.items()]
    lines.append("[rules]\noptions = { target_score = 12 }")
    for name, command in bots:
        lines += ["[[bots]]", f"name = {json.dumps(name)}", f"command = {json.dumps(command)}"]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "t.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def tournament(config: Path, db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee.cli", "tournament", str(config), "--db", str(db), "-j", "1", *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_BOUND_S,
        stdin=subprocess.DEVNULL,
    )


def verify_db(db: Path) -> Any:
    return cli.invoke(app, ["verify", "--db", str(db)])


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def one_error_line(stderr: str, *needles: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, stderr
    for n in needles:
        assert n in lines[0], stderr
    return lines[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A completed two-bot tournament whose seed the referee drew itself."""
    folder = tmp_path_factory.mktemp("sealed")
    config = write_config(folder, [("first", str(FIRST_LEGAL_BOT)), ("greedy", str(GREEDY))], deal_sets=2)
    db = folder / "out" / "t.db"
    res = tournament(config, db)
    assert res.returncode == 0, res.stderr
    return {"folder": folder, "config": config, "db": db, "res": res}


def copy_of(finished: dict[str, Any], tmp_path: Path) -> Path:
    """A copy of the finished tournament's database and logs, to tamper with."""
    shutil.copytree(finished["db"].parent, tmp_path / "out")
    return tmp_path / "out" / "t.db"


# ------------------------------------------------------------------ commit and reveal


def test_the_seed_is_committed_at_the_start_and_revealed_at_the_end(finished: dict[str, Any]) -> None:
    res, db = finished["res"], finished["db"]
    started = [ln for ln in res.stderr.splitlines() if ln.startswith("seed commitment: ")]
    assert len(started) == 1 and "drawn in secret" in started[0], res.stderr
    commitment = started[0].split()[2]
    with Store.open(db) as store:
        sealed = store.commitment()
        rows = store.games()
    assert sealed is not None and sealed.revealed and sealed.source == "drawn"
    assert sealed.commitment == commitment == sha(f"chicago-referee-seed:{sealed.seed}:{sealed.salt}")
    assert f"seed {sealed.seed}, salt {sealed.salt}" in res.stdout
    # Before the reveal the seed was nowhere a bot could read: not in the
    # config, not printed, not in any game log (which names only its deal
    # set's own derived seed).
    assert str(sealed.seed) not in finished["config"].read_text()
    assert str(sealed.seed) not in res.stderr and sealed.salt not in res.stderr
    assert len(rows) == 4
    for row in rows:
        log = db.parent / row.log_path
        assert str(sealed.seed) not in log.read_text() and sealed.salt not in log.read_text()
        header, _ = read_log(log)
        assert header.match_seed is None
        assert header.seed == row.seed == derive_seed(sealed.seed, "deal-set", row.deal_set)
    shown = json.loads(cli.invoke(app, ["standings", str(db), "--json"]).stdout)["seed"]
    assert shown["revealed"] and shown["seed"] == sealed.seed and shown["salt"] == sealed.salt
    assert shown["commitment"] == commitment and shown["results_digest"] == sealed.results_digest
    page = finished["folder"] / "report.html"
    assert cli.invoke(app, ["standings", str(db), "--html", str(page)]).exit_code == 0
    assert f"seed {sealed.seed}, salt {sealed.salt}" in page.read_text()
    assert wait_no_procs(str(FIRST_LEGAL_BOT)) == []


def test_verify_db_passes_on_an_untouched_tournament(finished: dict[str, Any]) -> None:
    res = verify_db(finished["db"])
    assert res.exit_code == 0, res.output
    assert "4 games checked against their logs, 0 differences" in res.stdout
    assert "the revealed seed matches the commitment" in res.stdout


def test_nothing_is_revealed_before_the_tournament_completes(tmp_path: Path) -> None:
    config = write_config(tmp_path, [("first", str(FIRST_LEGAL_BOT)), ("greedy", str(GREEDY))])
    t = load_config(config)
    db = tmp_path / "t.db"
    with Store.open(db, create=True, lock=True) as store:
        prepare_store(t, store)
        sealed = store.commitment()
        assert sealed is not None and not sealed.revealed
        shown = to_dict(from_store(store))["seed"]
    assert shown["commitment"] == sealed.commitment
    assert "seed" not in shown and "salt" not in shown
    assert str(sealed.seed) not in json.dumps(shown) and sealed.salt not in json.dumps(shown)
    res = verify_db(db)
    assert res.exit_code == 0 and "not revealed yet" in res.stdout, res.output


def test_a_config_seed_is_committed_and_named_as_known(tmp_path: Path) -> None:
    config = write_config(tmp_path, [("first", str(FIRST_LEGAL_BOT)), ("greedy", str(GREEDY))], seed=4242)
    res = tournament(config, tmp_path / "t.db")
    assert res.returncode == 0, res.stderr
    assert "taken from the config (known to whoever wrote it" in res.stderr
    with Store.open(tmp_path / "t.db") as store:
        sealed = store.commitment()
    assert sealed is not None and sealed.seed == 4242 and sealed.source == "config" and sealed.revealed
    assert verify_db(tmp_path / "t.db").exit_code == 0


def test_a_revealed_tournament_takes_no_new_games(finished: dict[str, Any], tmp_path: Path) -> None:
    db = copy_of(finished, tmp_path)
    config = write_config(tmp_path, [("first", str(FIRST_LEGAL_BOT)), ("greedy", str(GREEDY))], deal_sets=3)
    res = tournament(config, db)
    assert res.returncode == 2
    one_error_line(res.stderr, str(db), "revealed its seed", "another --db")


# ------------------------------------------------------------------ verify --db finds tampering


def _sql(db: Path, *statements: str) -> None:
    conn = sqlite3.connect(db)
    try:
        for s in statements:
            conn.execute(s)
        conn.commit()
    finally:
        conn.close()


def _first_key(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT key FROM games ORDER BY game_id LIMIT 1").fetchone()[0]
    finally:
        conn.close()


def test_verify_db_reports_a_rewritten_row(finished: dict[str, Any], tmp_path: Path) -> None:
    db = copy_of(finished, tmp_path)
    key = _first_key(db)
    _sql(db, f"UPDATE game_seats SET placement = 3 - placement WHERE game_key = '{key}'")
    res = verify_db(db)
    assert res.exit_code == 1, res.output
    assert f"DIFFERS {key}: placements: the database says" in res.stdout
    assert "results changed since" in res.stdout


def test_verify_db_reports_a_changed_log(finished: dict[str, Any], tmp_path: Path) -> None:
    db = copy_of(finished, tmp_path)
    key = _first_key(db)
    with Store.open(db) as store:
        log = db.parent / next(r.log_path for r in store.games() if r.key == key)
    lines = log.read_text().splitlines()
    result = json.loads(lines[-1])
    result["scores"] = list(reversed(result["scores"]))
    log.write_text("\n".join(lines[:-1] + [json.dumps(result)]) + "\n")
    res = verify_db(db)
    assert res.exit_code == 1, res.output
    assert f"DIFFERS {key}: its log {log.name} changed after the game was recorded" in res.stdout
    assert f"DIFFERS {key}: scores: the database says" in res.stdout


def test_verify_db_reports_a_deleted_row(finished: dict[str, Any], tmp_path: Path) -> None:
    db = copy_of(finished, tmp_path)
    key = _first_key(db)
    _sql(
        db,
        f"DELETE FROM failures WHERE game_key = '{key}'",
        f"DELETE FROM game_seats WHERE game_key = '{key}'",
        f"DELETE FROM games WHERE key = '{key}'",
    )
    res = verify_db(db)
    assert res.exit_code == 1, res.output
    assert "has no row in the database" in res.stdout
    assert "3 of its 4 scheduled games have rows" in res.stdout


def test_verify_db_reports_a_revealed_seed_that_breaks_the_commitment(finished: dict[str, Any], tmp_path: Path) -> None:
    db = copy_of(finished, tmp_path)
    _sql(db, "UPDATE seed_commitment SET seed = seed + 1")
    res = verify_db(db)
    assert res.exit_code == 1, res.output
    assert "do not match the commitment" in res.stdout
    assert "does not follow from the revealed master seed" in res.stdout
    as_json = json.loads(cli.invoke(app, ["verify", "--db", str(db), "--json"]).stdout)
    assert as_json["commitment"] == "mismatch" and not as_json["ok"]


# ------------------------------------------------------------------ tampering and loss during a run


@pytest.mark.parametrize(
    ("mode", "needle"),
    [
        ("rewrite", "changed behind the referee's back"),
        ("delete", "was deleted while the tournament ran"),
        ("replace", "was replaced by another file"),
    ],
)
def test_a_bot_that_tampers_with_the_database_makes_the_run_fail(mode: str, needle: str, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    done = tmp_path / "done"
    tamperer = f"{TEST_BOTS / 'db_tamperer.py'} {tmp_path.name} db={db} mode={mode} done={done}"
    config = write_config(tmp_path, [("first", str(FIRST_LEGAL_BOT)), ("tamperer", tamperer)])
    res = tournament(config, db)
    assert done.read_text() == mode, res.stderr
    assert res.returncode == 2, res.stdout + res.stderr
    one_error_line(res.stderr, str(db), needle)
    assert "completed" not in res.stderr


def test_a_missing_or_empty_database_next_to_finished_logs_is_refused(finished: dict[str, Any], tmp_path: Path) -> None:
    db = copy_of(finished, tmp_path)
    Store.remove(db)
    res = tournament(finished["config"], db)
    assert res.returncode == 2
    one_error_line(res.stderr, str(db), "does not exist", "4 finished game logs", "--fresh")
    db.write_bytes(b"")
    res = tournament(finished["config"], db)
    assert res.returncode == 2
    one_error_line(res.stderr, "is empty", "--fresh")
    res = tournament(finished["config"], db, "--fresh")
    assert res.returncode == 0, res.stderr
    assert verify_db(db).exit_code == 0


# ------------------------------------------------------------------ damaged files


def _damage_a_page(db: Path) -> None:
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    assert len(data) >= 4 * page, "the database should have a few pages"
    data[2 * page : 3 * page] = b"\xa5" * page  # the third page: part of some table's b-tree
    db.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        ("not sqlite", "is damaged or is not one"),
        ("damaged page", "is damaged"),
        ("missing table", "lacks the table(s) failures"),
        ("text for a number", "holds a value of the wrong type"),
        ("broken JSON", "does not parse"),
    ],
)
def test_a_damaged_database_is_one_line_in_every_command(
    damage: str, needle: str, finished: dict[str, Any], tmp_path: Path
) -> None:
    db = copy_of(finished, tmp_path)
    if damage == "not sqlite":
        db.write_bytes(b"these are not the results you are looking for\n" * 100)
    elif damage == "damaged page":
        _damage_a_page(db)
    elif damage == "missing table":
        _sql(db, "DROP TABLE failures")
    elif damage == "text for a number":
        _sql(db, f"UPDATE game_seats SET placement = 'first' WHERE game_key = '{_first_key(db)}'")
    else:
        _sql(db, "UPDATE tournament SET definition = '{\"game\": '")
    for args in (["standings", str(db)], ["verify", "--db", str(db)]):
        res = subprocess.run(
            [sys.executable, "-m", "referee.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=scaled(60)
        )
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        one_error_line(res.stderr, str(db), needle)
    res = tournament(finished["config"], db)
    assert res.returncode == 2
    one_error_line(res.stderr, str(db))
    res = tournament(finished["config"], db, "--fresh")  # what the message advises
    assert res.returncode == 0, res.stderr
    assert verify_db(db).exit_code == 0


# ------------------------------------------------------------------ nobody won


@pytest.mark.parametrize("seats", [2, 3])
def test_a_game_every_seat_forfeits_has_no_winner_anywhere(seats: int, tmp_path: Path) -> None:
    dead = f"{TEST_BOTS / 'exit_at_once.py'} {tmp_path.name}"
    names = ["a", "b", "c"][:seats]
    config = write_config(tmp_path, [(n, dead) for n in names], table_size=seats)
    db = tmp_path / "t.db"
    res = tournament(config, db)
    assert res.returncode == 0, res.stderr
    with Store.open(db) as store:
        rows = store.games()
    assert len(rows) == seats
    for row in rows:
        assert row.winner_seat is None and row.placements == (1,) * seats
        assert sorted(row.forfeited) == list(range(seats))
    st = json.loads(cli.invoke(app, ["standings", str(db), "--json"]).stdout)
    for b in st["standings"]:
        assert b["wins"] == 0 and b["no_results"] == seats, b
        assert (b["pair_wins"], b["pair_losses"], b["pair_draws"]) == (0, 0, 0), b
        assert all(s["wins"] == 0 for s in b["seats"]), b
        assert b["elo"] is None, b
        assert b["avg_place"] is None and all(s["avg_place"] is None for s in b["seats"]), b  # no place 1 either
    assert st["crosstable"] == {} and st["los"] is None
    assert all(s["wins"] == 0 for s in st["seat_totals"])
    text = cli.invoke(app, ["standings", str(db)])
    assert text.exit_code == 0 and "no ratings yet" in text.stdout, text.output
    assert verify_db(db).exit_code == 0


def test_verify_db_reports_a_missing_log_and_needs_db_or_logs(finished: dict[str, Any], tmp_path: Path) -> None:
    db = copy_of(finished, tmp_path)
    key = _first_key(db)
    with Store.open(db) as store:
        log = db.parent / next(r.log_path for r in store.games() if r.key == key)
    log.unlink()
    res = verify_db(db)
    assert res.exit_code == 1, res.output
    assert f"DIFFERS {key}: its log {log} is missing" in res.stdout
    assert cli.invoke(app, ["verify"]).exit_code == 2
    both = cli.invoke(app, ["verify", "--db", str(db), str(log.parent)])
    assert both.exit_code == 2 and "not both" in both.output
