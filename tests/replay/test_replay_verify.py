"""Replays and verification of game logs (`replay`, `verify`, referee.replay.load).

Real matches between the sample bots write the logs (every seat count, three
rule presets, Ghost Hand Euchre, bots that break the rules or crash). Every
log must verify; a log changed in any one place must not, and the report must
name the line; files that are not logs get a one-line error. The terminal
replay of a fixed scenario (explicit deals, fixed seed) is compared with a
golden text file; regenerate it with `UPDATE_GOLDEN=1 pytest tests/replay/test_replay_verify.py`.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from paths import FIRST_LEGAL_BOT, GOLDEN, RANDOM_BOT, TEST_BOTS
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import CorruptLog
from referee.games.base import PUBLIC
from referee.replay.load import LogMismatch, frames, load_log
from referee.replay.text import Viewer, render_to_text, renderer_for
from referee.replay.verify import verify_file, verify_paths

RANDOM = str(RANDOM_BOT)
FIRST = str(FIRST_LEGAL_BOT)
runner = CliRunner()

ALL_CARDS = [r + s for s in "shdc" for r in "23456789TJQKA"]


def _match(log_dir: Path, *args: str) -> None:
    res = runner.invoke(app, ["match", *args, "--log-dir", str(log_dir), "--json"])
    assert res.exit_code == 0, res.output


def _deck(top: str, seed: int) -> str:
    """A full deck: these cards on top (first dealt first), the rest in a fixed shuffled order."""
    first = top.split()
    rest = [c for c in ALL_CARDS if c not in first]
    random.Random(seed).shuffle(rest)
    return " ".join(first + rest)


# Deal 1 (seat 1 deals; seat 0 is eldest and gets the 1st, 3rd, ... card):
# seat 0 holds a pair of aces, seat 1 a pair of kings. Deal 2 (seat 0 deals):
# seat 1 gets three nines. Later deals are seeded shuffles.
SCENARIO_DEALS = [
    {"dealer": 1, "deck": _deck("As Ks Ah Kh Kd Qd 7c 5c 2s 3s", 1)},
    {"dealer": 0, "deck": _deck("9h 9d 9s 4d 9c 4h Jd Jc Td Tc", 2)},
]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Directories of real logs, by scenario."""
    base = tmp_path_factory.mktemp("replay_logs")
    dirs = {
        name: base / name
        for name in ("two", "three", "four", "euchre", "substitute", "bad_replies", "crash3", "startup", "scenario")
    }
    _match(dirs["two"], RANDOM, FIRST, "--games", "2", "--seed", "11", "--rule", "target_score=30")
    _match(
        dirs["three"],
        RANDOM,
        FIRST,
        RANDOM,
        "--games",
        "3",
        "--seed",
        "12",
        "--rules",
        "swedish_common",
        "--rule",
        "target_score=25",
    )
    _match(
        dirs["four"], RANDOM, FIRST, RANDOM, FIRST, "--games", "4", "--seed", "13", "--rules", "cardgames_zone_short"
    )
    _match(
        dirs["euchre"],
        FIRST,
        RANDOM,
        FIRST,
        "--game",
        "ghost-euchre",
        "--games",
        "3",
        "--seed",
        "14",
        "--rule",
        "max_hands=12",
    )
    illegal = f"{sys.executable} -u {TEST_BOTS / 'illegal.py'} replay-test on=0"
    _match(
        dirs["substitute"],
        RANDOM,
        illegal,
        "--games",
        "2",
        "--seed",
        "15",
        "--failure-policy",
        "substitute",
        "--max-strikes",
        "2",
    )
    non_json = f"{sys.executable} -u {TEST_BOTS / 'non_json.py'} replay-test"
    schema = f"{sys.executable} -u {TEST_BOTS / 'schema_violation.py'} replay-test"
    _match(
        dirs["bad_replies"],
        RANDOM,
        non_json,
        schema,
        "--games",
        "3",
        "--seed",
        "18",
        "--failure-policy",
        "substitute",
        "--rule",
        "target_score=10",
    )
    crash = f"{sys.executable} -u {TEST_BOTS / 'exit_mid_game.py'} replay-test"
    _match(dirs["crash3"], RANDOM, crash, FIRST, "--games", "3", "--seed", "16", "--rule", "target_score=20")
    at_once = f"{sys.executable} -u {TEST_BOTS / 'exit_at_once.py'} replay-test"
    _match(dirs["startup"], RANDOM, at_once, "--games", "2", "--seed", "17")
    deals = base / "deals.json"
    deals.write_text(json.dumps(SCENARIO_DEALS))
    _match(
        dirs["scenario"],
        RANDOM,
        FIRST,
        "--games",
        "1",
        "--seed",
        "42",
        "--deals",
        str(deals),
        "--rule",
        "target_score=15",
    )
    return dirs


def _all_logs(logs: dict[str, Path]) -> list[Path]:
    return sorted(p for d in logs.values() for p in d.glob("*.jsonl"))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


# ------------------------------------------------------------------ round trip


def test_every_log_verifies(logs: dict[str, Path]) -> None:
    files = _all_logs(logs)
    assert len(files) == 2 + 3 + 4 + 3 + 2 + 3 + 3 + 2 + 2
    verdicts = list(verify_paths(list(logs.values())))
    bad = [v.message for v in verdicts if not v.ok]
    assert not bad, bad
    assert len(verdicts) == len(files)
    # the scenarios did what they are for
    results = {p: _lines(p)[-1] for p in files}
    assert any(r["reason"] == "forfeit" and r["failures"] for p, r in results.items() if "substitute" in str(p))
    assert all(r["forfeited"] for p, r in results.items() if "startup" in str(p))
    assert any(r["forfeited"] and r["decisions"] > 0 for p, r in results.items() if "crash3" in str(p))
    reasons = {f["reason"] for p, r in results.items() if "bad_replies" in str(p) for f in r["failures"]}
    assert {"malformed_json", "schema_violation"} <= reasons
    assert any(
        json.loads(line)["type"] == "send" and '"warning"' in line
        for p in logs["substitute"].glob("*.jsonl")
        for line in p.read_text().splitlines()
    )


def test_verify_cli_on_a_folder_with_a_pool(logs: dict[str, Path]) -> None:
    res = runner.invoke(app, ["verify", str(logs["two"].parent), "--jobs", "2"])
    assert res.exit_code == 0, res.output
    n = len(_all_logs(logs))
    assert f"{n} verified, 0 failed of {n} logs" in res.output
    res = runner.invoke(app, ["verify", *map(str, logs["three"].glob("*.jsonl")), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["verified"] == 3 and report["mismatched"] == report["unreadable"] == 0
    assert report["actions"] > 0 and all(entry["status"] == "ok" for entry in report["logs"])


def test_frames_replay_every_action(logs: dict[str, Path]) -> None:
    for path in _all_logs(logs):
        log = load_log(path)
        seen = list(_frame_summaries(log))
        assert seen[0][0] == "start" and seen[-1][0] == "end"
        actions = [s for s in seen if s[0] == "action"]
        assert len(actions) == log.result.decisions
        terminal = seen[-1][1]
        assert terminal or (log.n_players == 2 and log.result.reason == "forfeit"), path


def _frame_summaries(log: Any) -> Any:
    for frame in frames(log):
        yield frame.kind, frame.state.is_terminal(), len(frame.events)


def test_a_two_seat_forfeit_ends_the_replay_early(logs: dict[str, Path]) -> None:
    path = sorted(logs["startup"].glob("*.jsonl"))[0]
    log = load_log(path)
    last = list(frames(log))[-1]
    assert last.kind == "end" and not last.state.is_terminal()
    assert last.result.reason == "forfeit"
    text = render_to_text(log)
    assert "Result (forfeit)" in text and "forfeited (startup_failure)" in text


# ------------------------------------------------------------------ tampering


def _tamper(path: Path, tmp_path: Path, pick: Any, change: Any) -> tuple[Path, int]:
    records = _lines(path)
    i = next(k for k, r in enumerate(records) if k > 0 and pick(r))
    change(records[i])
    return _write(tmp_path / path.name, records), i + 1


def _other_card(card: str) -> str:
    return "2c" if card != "2c" else "3c"


def _bump_total(rec: dict[str, Any]) -> None:
    rec["event"]["total"] += 1


def _swap_deck(rec: dict[str, Any]) -> None:
    rec["deck"][7], rec["deck"][8] = rec["deck"][8], rec["deck"][7]


def _flip_play(rec: dict[str, Any]) -> None:
    rec["action"]["card"] = _other_card(rec["action"]["card"])


def _result_score(rec: dict[str, Any]) -> None:
    rec["scores"][0] += 1


def _result_winner(rec: dict[str, Any]) -> None:
    rec["winner"] = 1 - rec["winner"] if rec["winner"] in (0, 1) else 0


def _request_events(rec: dict[str, Any]) -> None:
    rec["msg"]["events"].pop()


def _audience(rec: dict[str, Any]) -> None:
    rec["to"] = PUBLIC


@pytest.mark.parametrize(
    ("name", "pick", "change", "expect"),
    [
        ("action", lambda r: r["type"] == "action" and r["action"]["type"] == "play", _flip_play, "action"),
        (
            "score",
            lambda r: r["type"] == "event" and r["event"]["type"] == "score",
            _bump_total,
            "event differs at total",
        ),
        ("deal", lambda r: r["type"] == "deal", _swap_deck, "deck differs at card 8"),
        ("audience", lambda r: r["type"] == "event" and r["event"]["type"] == "hand_dealt", _audience, "audience"),
        (
            "request",
            lambda r: r["type"] == "send" and r["msg"]["type"] == "request" and r["msg"]["events"],
            _request_events,
            "events sent to seat",
        ),
        ("result score", lambda r: r["type"] == "result", _result_score, "result differs at scores[0]"),
        ("result winner", lambda r: r["type"] == "result", _result_winner, "result differs at winner"),
    ],
)
def test_tampering_is_found_on_its_line(
    logs: dict[str, Path], tmp_path: Path, name: str, pick: Any, change: Any, expect: str
) -> None:
    path = sorted(logs["two"].glob("*.jsonl"))[0]
    bad, line = _tamper(path, tmp_path, pick, change)
    verdict = verify_file(bad)
    assert verdict.status == "mismatch", name
    assert verdict.message.startswith(f"{bad}:{line}: "), verdict.message
    assert expect in verdict.message
    res = runner.invoke(app, ["verify", str(bad)])
    assert res.exit_code == 1
    assert f"{bad}:{line}:" in res.output and "0 verified, 1 failed" in res.output


def test_a_changed_reply_line_is_named(logs: dict[str, Path], tmp_path: Path) -> None:
    path = sorted(logs["two"].glob("*.jsonl"))[0]
    records = _lines(path)
    k = next(k for k, r in enumerate(records) if r["type"] == "recv" and '"play"' in r["line"])
    reply = json.loads(records[k]["line"])
    reply["action"]["card"] = _other_card(reply["action"]["card"])
    records[k]["line"] = json.dumps(reply)
    bad = _write(tmp_path / "recv.jsonl", records)
    verdict = verify_file(bad)
    # the action record after it no longer matches what the bot sent
    assert verdict.message.startswith(f"{bad}:{k + 2}: action differs from the bot's reply on line {k + 1}")
    assert f'"card":"{reply["action"]["card"]}"' in verdict.message


def test_an_illegal_action_is_refused(tmp_path: Path, logs: dict[str, Path]) -> None:
    """An action replaced consistently (reply line too) is still checked against the rules."""
    path = sorted(logs["two"].glob("*.jsonl"))[0]
    records = _lines(path)
    k = next(k for k, r in enumerate(records) if r["type"] == "action" and r["action"]["type"] == "play")
    held = {
        c
        for r in records[:k]
        if r["type"] == "event" and r["event"]["type"] in ("hand_dealt", "drew")
        for c in r["event"]["cards"]
    }
    card = next(c for c in ALL_CARDS if c not in held)
    records[k]["action"]["card"] = card
    reply = json.loads(records[k - 1]["line"])
    reply["action"]["card"] = card
    records[k - 1]["line"] = json.dumps(reply)
    verdict = verify_file(_write(tmp_path / "illegal.jsonl", records))
    assert verdict.status == "mismatch"
    assert f":{k + 1}: illegal action" in verdict.message and "not in hand" in verdict.message


def test_changed_failure_and_default_records(logs: dict[str, Path], tmp_path: Path) -> None:
    path = sorted(logs["substitute"].glob("*.jsonl"))[0]
    bad, line = _tamper(
        path, tmp_path, lambda r: r["type"] == "action" and r["source"] == "default", lambda r: r.update(source="bot")
    )
    assert verify_file(bad).message.startswith(f"{bad}:{line}: action differs from the bot's reply")
    bad, line = _tamper(
        path, tmp_path, lambda r: r["type"] == "failure", lambda r: r.update(message=r["message"] + "!")
    )
    assert verify_file(bad).message.startswith(f"{bad}:{line}: failure message differs")


def test_a_failure_is_rejudged_from_its_reply_line(logs: dict[str, Path], tmp_path: Path) -> None:
    path = sorted(logs["bad_replies"].glob("*.jsonl"))[0]
    swap = {"malformed_json": "schema_violation", "schema_violation": "malformed_json"}
    bad, line = _tamper(
        path,
        tmp_path,
        lambda r: r["type"] == "failure" and r["reason"] in swap,
        lambda r: r.update(reason=swap[r["reason"]]),
    )
    assert verify_file(bad).message.startswith(f"{bad}:{line}: failure differs from the reply on line {line - 1}")


def test_a_changed_seed_is_caught(logs: dict[str, Path], tmp_path: Path) -> None:
    path = sorted(logs["two"].glob("*.jsonl"))[0]
    records = _lines(path)
    records[0]["seed"] += 1
    records[0]["match_seed"] = None  # not derived from a match seed: the first deal shows it
    verdict = verify_file(_write(tmp_path / "seed.jsonl", records))
    assert verdict.status == "mismatch", verdict


# ------------------------------------------------------------------ not logs


def _bad_files(tmp_path: Path, good: Path) -> dict[str, Path]:
    text = good.read_bytes()
    lines = text.split(b"\n")
    files = {
        "empty": b"",
        "garbage": b"\x00\x01\xff garbage\n",
        "foreign": b'{"hello": "world"}\n',
        "cut mid-line": text[: len(text) // 2],
        "no result": b"\n".join(lines[: len(lines) // 2]) + b"\n",
        "bad record": lines[0] + b"\n[1, 2]\n" + b"\n".join(lines[1:]),
        "unknown game": lines[0].replace(b'"game":"chicago"', b'"game":"bridge"', 1) + b"\n" + b"\n".join(lines[1:]),
    }
    out = {}
    for name, data in files.items():
        p = tmp_path / f"{name.replace(' ', '_')}.jsonl"
        p.write_bytes(data)
        out[name] = p
    return out


def test_unreadable_files_get_one_line_errors(logs: dict[str, Path], tmp_path: Path) -> None:
    good = sorted(logs["two"].glob("*.jsonl"))[0]
    bad = _bad_files(tmp_path, good)
    for name, path in bad.items():
        verdict = verify_file(path)
        assert verdict.status == "unreadable", (name, verdict)
        assert verdict.message.startswith(f"{path}:") and "\n" not in verdict.message, verdict.message
        with pytest.raises(CorruptLog) as info:
            load_log(path)
        assert not isinstance(info.value, LogMismatch)
    assert "truncated" in verify_file(bad["cut mid-line"]).message
    assert "without a result" in verify_file(bad["no result"]).message
    assert "unknown game 'bridge'" in verify_file(bad["unknown game"]).message
    empty_dir = tmp_path / "empty_dir"
    empty_dir.mkdir()
    res = runner.invoke(
        app, ["verify", *map(str, bad.values()), str(tmp_path / "missing.jsonl"), str(empty_dir), str(good)]
    )
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    errors = [line for line in res.output.splitlines() if line.startswith("error:")]
    assert len(errors) == len(bad) + 2
    assert f"1 verified, {len(bad) + 2} failed" in res.output
    cut_off = {bad["cut mid-line"], bad["no result"]}  # a game that never finished: replay shows what there is
    for path in [*bad.values(), tmp_path / "missing.jsonl"]:
        res = runner.invoke(app, ["replay", str(path)])
        if path in cut_off:
            assert res.exit_code == 0 and "is cut off after line" in " ".join(res.stderr.split()), res.output
            continue
        assert res.exit_code == 2 and "Traceback" not in res.output
        assert len(res.output.strip().splitlines()) == 1 and res.output.startswith("error:"), res.output


# ------------------------------------------------------------------ terminal replay


def _scenario_log(logs: dict[str, Path]) -> Path:
    return logs["scenario"] / "game-00001.jsonl"


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"replay output changed; compare with {path} (UPDATE_GOLDEN=1 to accept)"


def test_replay_matches_the_golden_text(logs: dict[str, Path]) -> None:
    path = _scenario_log(logs)
    res = runner.invoke(app, ["replay", str(path), "--width", "100"], env={"NO_COLOR": "1", "TERM": "dumb"})
    assert res.exit_code == 0, res.output
    text = res.stdout
    _golden("replay_chicago_all.txt", text)
    assert text == render_to_text(load_log(path), width=100)
    # the fixed deals are there: the first hands, named showdowns, scores
    assert "random_bot       A♠ 2♠ A♥ K♦ 7♣" in text and "first_legal_bot  K♠ 3♠ K♥ Q♦ 5♣" in text
    assert re.search(r"Showdown after exchange 1: \S+ wins with", text)
    assert "Final showdown" in text and "scores after deal 1:" in text and "Game over" in text


def test_replay_for_one_seat_matches_its_golden_text(logs: dict[str, Path]) -> None:
    res = runner.invoke(
        app,
        ["replay", str(_scenario_log(logs)), "--seat", "1", "--width", "100", "--step"],
        env={"NO_COLOR": "1", "TERM": "dumb"},
    )
    assert res.exit_code == 0, res.output  # --step is ignored without a terminal
    _golden("replay_chicago_seat1.txt", res.stdout)


_CARD_RE = re.compile(r"(10|[2-9JQKA])([♠♥♦♣])")
_SYMBOL_SUIT = {"♠": "s", "♥": "h", "♦": "d", "♣": "c"}


def _cards_in(text: str) -> set[str]:
    return {("T" if r == "10" else r) + _SYMBOL_SUIT[s] for r, s in _CARD_RE.findall(text)}


def _cards_of(value: Any) -> set[str]:
    """Every card string inside a JSON value."""
    if isinstance(value, str):
        return {value} if value in ALL_CARDS else set()
    if isinstance(value, dict):
        return set().union(*map(_cards_of, value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*map(_cards_of, value)) if value else set()
    return set()


@pytest.mark.parametrize("scenario", ["scenario", "three", "four"])
def test_seat_view_never_shows_a_card_before_the_seat_knows_it(logs: dict[str, Path], scenario: str) -> None:
    import msgspec

    for path in sorted(logs[scenario].glob("*.jsonl"))[:2]:
        log = load_log(path)
        for seat in range(log.n_players):
            renderer = renderer_for(log, Viewer.for_seat(seat))
            known: set[str] = set()
            shown_hidden = False
            other = renderer_for(log, Viewer.everything())
            for frame in frames(log):
                for audience, event in frame.events:
                    if audience in (PUBLIC, seat):
                        known |= _cards_of(msgspec.to_builtins(event))
                if frame.seat == seat:
                    known |= _cards_of(msgspec.to_builtins(frame.action))
                lines = "\n".join(t.plain for t in renderer.render(frame))
                leaked = _cards_in(lines) - known
                assert not leaked, f"{path} seat {seat}, line {frame.line}: {sorted(leaked)} shown\n{lines}"
                everything = "\n".join(t.plain for t in other.render(frame))
                shown_hidden |= bool(_cards_in(everything) - known)
            assert shown_hidden, "the everything view should show cards this seat did not know"


def test_public_view_shows_no_hand_before_it_is_revealed(logs: dict[str, Path]) -> None:
    text = render_to_text(load_log(_scenario_log(logs)), Viewer.public())
    deal1 = text.split("Deal 1")[1].split("Exchange 1")[0]
    assert not _cards_in(deal1) and "░░ ░░ ░░ ░░ ░░" in deal1


def test_replay_from_a_later_deal(logs: dict[str, Path]) -> None:
    path = _scenario_log(logs)
    deals = load_log(path).deal_count
    assert deals >= 2
    res = runner.invoke(app, ["replay", str(path), "--deal", "2", "--width", "100"])
    assert res.exit_code == 0, res.output
    assert "(deal 1 skipped; scores:" in res.stdout
    assert "Deal 2 · dealer" in res.stdout and "Deal 1 ·" not in res.stdout
    assert "Cut for the first deal" not in res.stdout
    full = runner.invoke(app, ["replay", str(path), "--width", "100"]).stdout
    assert full.endswith(res.stdout.split("Deal 2 · dealer", 1)[1])
    res = runner.invoke(app, ["replay", str(path), "--deal", str(deals + 1)])
    assert res.exit_code == 2 and f"has {deals} deals" in res.output
    res = runner.invoke(app, ["replay", str(path), "--seat", "2"])
    assert res.exit_code == 2 and "seats 0-1" in res.output
    res = runner.invoke(app, ["replay", str(path), "--seat", "0", "--public"])
    assert res.exit_code == 2


def test_euchre_replay_names_bids_trump_and_hides_other_hands(logs: dict[str, Path]) -> None:
    log = load_log(sorted(logs["euchre"].glob("*.jsonl"))[0])
    assert {"bid_made", "trump_named"} <= set(log.game.text.events)  # drawn by the game's own hooks
    text = render_to_text(log, Viewer.for_seat(0))
    assert "Ghost Hand Euchre" in text and "Deal 1 · dealer" in text and "░░" in text
    assert "names trump" in text and ("bids" in text or "passes" in text)
    assert "bid_made" not in text and "trump_named" not in text  # no raw event dumps


def test_html_option_calls_the_html_writer(
    logs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    fake = types.ModuleType("referee.replay.html")
    fake.write_html = lambda log_path, out_path: calls.append((log_path, out_path))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "referee.replay.html", fake)
    out = tmp_path / "game.html"
    res = runner.invoke(app, ["replay", str(_scenario_log(logs)), "--html", str(out)])
    assert res.exit_code == 0, res.output
    assert calls == [(_scenario_log(logs), out)]
