"""`match --start POSITION`: every game begins from a position, end to end.

Real bot processes play matches from a mid-trick Swedish Chicago position and
a Ghost Hand Euchre position met in seeded random play. The logs must verify,
start where the position says (the seat to act, its hand, the deal number of
the next deal), rotate the bots through the position's seats, and follow each
deal set's seed after it. A tampered start is refused by `verify`; `replay`
shows the position as each viewer may see it, in the terminal and in the
HTML page's data. Bad positions are one line, exit 2, before any bot starts.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from logfiles import read_json_log
from needs import needs_sandbox
from paths import FIRST_LEGAL_BOT, RANDOM_BOT, SAMPLE_BOTS, TEST_BOTS
from timing import scaled
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import ConfigError
from referee.games import format_position, get_game, new_game, parse_position, position_of, state_from_position
from referee.games.position import Position
from referee.games.rules import build_rules
from referee.play.match import MatchConfig, MatchResult, run_match
from referee.play.start import read_start
from referee.replay.cardtext import cards_text
from referee.replay.html import build_replay_data
from referee.replay.load import load_log
from referee.replay.text import Viewer, render_to_text
from referee.replay.verify import OK, verify_file
from referee.seats.bot_command import BotSpec, resolve_command

runner = CliRunner()


def _bot(file: str, name: str | None = None) -> BotSpec:
    return BotSpec(name=name or file.removesuffix(".py"), argv=(sys.executable, "-u", str(SAMPLE_BOTS / file)))


def met_in_play(game: str, n: int, seed: int, phase: str, *, min_deal: int = 2, mid_trick: bool = False) -> Position:
    """A position of a seeded random game: the first one in `phase` from deal `min_deal` on."""
    state = new_game(game, n, seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        position = position_of(state)
        if position.phase == phase and position.deal >= min_deal and (position.trick or not mid_trick):
            return position
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    raise AssertionError(f"no {phase} position in {game} seed {seed}")


def _play(config: MatchConfig) -> MatchResult:
    async def main() -> MatchResult:
        with trio.fail_after(scaled(240)):
            return await run_match(config)

    return trio.run(main)


def _records(path: Path) -> list[dict[str, Any]]:
    return [rec for _, rec in read_json_log(path)[1]]


def _to_act(position: Position) -> int:
    return state_from_position(position).current_player()


@pytest.fixture(scope="module")
def chicago_start() -> Position:
    position = met_in_play("chicago", 2, 3, "trick", mid_trick=True)
    assert position.trick and position.deal >= 2 and not position.revealed
    return position


@pytest.fixture(scope="module")
def chicago_match(chicago_start: Position, tmp_path_factory: pytest.TempPathFactory) -> tuple[MatchResult, Path]:
    log_dir = tmp_path_factory.mktemp("start_chicago")
    game = get_game("chicago")
    config = MatchConfig(
        game=game,
        rules=build_rules(game, None),
        bots=[_bot("first_legal_bot.py"), _bot("random_bot.py")],
        games=4,
        seed=21,
        log_dir=log_dir,
        start=format_position(chicago_start),
    )
    return _play(config), log_dir


# ----------------------------------------------------------------- matches from a position


def test_chicago_match_plays_every_game_from_the_position(
    chicago_start: Position, chicago_match: tuple[MatchResult, Path]
) -> None:
    result, log_dir = chicago_match
    logs = sorted(log_dir.glob("game-*.jsonl"))
    assert len(logs) == 4 and len(result.records) == 4
    seat = _to_act(chicago_start)
    first_decks = {}
    for path, rec in zip(logs, result.records, strict=True):
        assert verify_file(path).status == OK, verify_file(path).message
        header, _ = read_json_log(path)
        assert header.start == format_position(replace(chicago_start, seed=header.seed))
        records = _records(path)
        first = next(r for r in records if r["type"] == "action")
        assert first["seat"] == seat and first["action"]["type"] == "play"
        assert first["action"]["card"] in chicago_start.hands[seat]
        requests = [r for r in records if r["type"] == "send" and r["msg"]["type"] == "request"]
        assert requests[0]["seat"] == seat and requests[0]["msg"]["events"] == []  # nothing before the position
        deal = next(r for r in records if r["type"] == "deal")
        assert deal["deal"] == chicago_start.deal + 1  # deals are numbered on from the position's
        first_decks.setdefault(rec.deal_set, set()).add(tuple(deal["deck"]))
        assert rec.failures == []
    for k in (0, 1):  # a deal set: the same seed, both seatings of the position's seats
        pair = [r for r in result.records if r.deal_set == k]
        assert pair[0].seed == pair[1].seed and pair[0].seat_names == list(reversed(pair[1].seat_names))
        assert len(first_decks[k]) == 1
    assert result.records[0].seed != result.records[2].seed
    assert first_decks[0] != first_decks[1]  # later deals follow each deal set's seed


def test_euchre_match_from_a_position_verifies(tmp_path: Path) -> None:
    position = met_in_play("ghost_euchre", 3, 4, "trick", mid_trick=True)
    game = get_game("ghost_euchre")
    config = MatchConfig(
        game=game,
        rules=build_rules(game, None),
        bots=[resolve_command("euchre"), resolve_command("euchre", "euchre#2"), _bot("random_bot.py")],
        games=3,
        seed=5,
        log_dir=tmp_path,
        start=format_position(position),
    )
    result = _play(config)
    seat = _to_act(position)
    assert len(result.records) == 3
    for path in sorted(tmp_path.glob("game-*.jsonl")):
        verdict = verify_file(path)
        assert verdict.status == OK, verdict.message
        header, _ = read_json_log(path)
        assert parse_position(header.start) == replace(position, seed=header.seed)
        first = next(r for r in _records(path) if r["type"] == "action")
        assert first["seat"] == seat and first["action"]["card"] in position.hands[seat]
    seats = [r.seat_names for r in result.records]
    for name in {n for s in seats for n in s}:
        assert sorted(s.index(name) for s in seats) == [0, 1, 2]  # every bot plays every seat's hand


# ----------------------------------------------------------------- verify


def _rewrite_header(src: Path, dst: Path, change: Any) -> Path:
    lines = src.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    change(header)
    lines[0] = json.dumps(header).encode()
    dst.write_bytes(b"\n".join(lines))
    return dst


def test_verify_refuses_a_tampered_start(
    chicago_start: Position, chicago_match: tuple[MatchResult, Path], tmp_path: Path
) -> None:
    log = chicago_match[1] / "game-00001.jsonl"
    assert verify_file(log).status == OK
    header, _ = read_json_log(log)
    logged = parse_position(header.start)

    def swapped(h: dict[str, Any]) -> None:  # one card of each hand trades places: a possible position
        a, b = list(logged.hands[0]), list(logged.hands[1])
        a[0], b[-1] = b[-1], a[0]
        h["start"] = format_position(replace(logged, hands=(tuple(a), tuple(b)), start_hands=None))

    def reseeded(h: dict[str, Any]) -> None:
        h["start"] = format_position(replace(logged, seed=logged.seed + 1))

    def scores(h: dict[str, Any]) -> None:
        h["start"] = format_position(replace(logged, scores=(logged.scores[0] + 1, logged.scores[1])))

    def dropped(h: dict[str, Any]) -> None:
        del h["start"]

    messages = {}
    for change in (swapped, reseeded, scores, dropped):
        verdict = verify_file(_rewrite_header(log, tmp_path / f"{change.__name__}.jsonl", change))
        assert verdict.status != OK, change.__name__
        messages[change.__name__] = verdict.message
    assert ":1: " in messages["reseeded"] and "seed" in messages["reseeded"]


# ----------------------------------------------------------------- replay


def _start_block(text: str) -> str:
    """The replay's lines from the start position to its first trick line."""
    block = text.split("the game starts here", 1)[1]
    return block.split("  Play", 1)[0]


def test_replay_shows_the_start_to_each_viewer(
    chicago_start: Position, chicago_match: tuple[MatchResult, Path]
) -> None:
    log = load_log(chicago_match[1] / "game-00001.jsonl")
    names = log.names
    everything = render_to_text(log, Viewer.everything(), width=400)
    assert f"started from a position in deal {chicago_start.deal} (trick): {log.start}" in everything
    block = _start_block(everything)
    assert f"scores: {names[0]} {chicago_start.scores[0]} · {names[1]} {chicago_start.scores[1]}" in block
    for seat in (0, 1):
        assert cards_text(chicago_start.hands[seat], sort=True).plain in block
    trick_so_far = everything.split("  Play", 1)[1].splitlines()[1]
    assert cards_text(chicago_start.trick).plain in trick_so_far and trick_so_far.split()[0] == "1"

    seat0 = render_to_text(log, Viewer.for_seat(0), width=400)
    assert log.start not in seat0  # the position's text holds every hand
    block = _start_block(seat0)
    assert cards_text(chicago_start.hands[0], sort=True).plain in block
    assert cards_text(chicago_start.hands[1], sort=True).plain not in block
    other = next(line for line in block.splitlines() if line.strip().startswith(names[1]) and "░" in line)
    assert other.count("░░") == len(chicago_start.hands[1])


def test_replay_deal_option_counts_from_the_position(
    chicago_start: Position, chicago_match: tuple[MatchResult, Path]
) -> None:
    log = chicago_match[1] / "game-00001.jsonl"
    later = runner.invoke(app, ["replay", str(log), "--deal", str(chicago_start.deal + 1)])
    assert later.exit_code == 0, later.output
    assert "the game starts here" not in later.stdout and f"Deal {chicago_start.deal + 1} ·" in later.stdout
    past = runner.invoke(app, ["replay", str(log), "--deal", "999"])
    assert past.exit_code == 2 and f"started from a position in deal {chicago_start.deal}" in past.output


def test_html_data_opens_on_the_position(chicago_start: Position, chicago_match: tuple[MatchResult, Path]) -> None:
    data = build_replay_data(chicago_match[1] / "game-00001.jsonl")
    types = [t[0] for t in data["types"]]
    items = data["items"]
    start = items[0]
    assert start[0] >= 0 and types[start[0]] == "@start"  # public
    fields = dict(zip(data["types"][start[0]][1:], start[1:], strict=False))
    assert fields["deal"] == chicago_start.deal and fields["dealer"] == chicago_start.dealer
    assert fields["scores"] == list(chicago_start.scores) and fields["phase"] == "trick"
    assert fields["trick"] == [{"seat": 1 - _to_act(chicago_start), "card": c} for c in chicago_start.trick]
    hands = [it for it in items[1:3] if it[0] < 0 and types[~it[0]] == "@hand"]
    assert [h[1] for h in hands] == [0, 1]  # each seen by its own seat only
    for seat, item in enumerate(hands):
        packed = item[3]
        assert packed[0] == "~"
        assert sorted(packed[i : i + 2] for i in range(1, len(packed), 2)) == sorted(chicago_start.hands[seat])


@pytest.mark.browser
def test_html_viewer_shows_the_start_hands(
    chicago_start: Position, chicago_match: tuple[MatchResult, Path], tmp_path: Path, driver: Any
) -> None:
    from referee.replay.html import write_html

    page = tmp_path / "start.html"
    write_html(chicago_match[1] / "game-00001.jsonl", page)
    snap = """
      var o = {hands: [],
               trick: Array.from(document.querySelectorAll('#trick .card'))
                   .map(function (c) { return c.getAttribute('data-card'); }),
               scores: Array.from(document.querySelectorAll('.seat .pscore'))
                   .map(function (e) { return +e.textContent; }),
               status: document.getElementById('status').textContent, step: +document.body.getAttribute('data-step')};
      document.querySelectorAll('.hand').forEach(function (h) {
        o.hands[+h.getAttribute('data-seat')] = {
            faces: Array.from(h.querySelectorAll('.card.face'))
                .map(function (c) { return c.getAttribute('data-card'); }),
            backs: h.querySelectorAll('.card.back').length};
      });
      return o;"""
    driver.get(page.resolve().as_uri())
    everything = driver.execute_script(snap)
    driver.find_element("id", "view-0").click()
    seat0 = driver.execute_script(snap)
    assert everything["step"] == 0 and "the game starts here" in everything["status"]
    assert everything["scores"] == list(chicago_start.scores)
    assert everything["trick"] == list(chicago_start.trick)
    for seat in (0, 1):
        assert sorted(everything["hands"][seat]["faces"]) == sorted(chicago_start.hands[seat])
    assert sorted(seat0["hands"][0]["faces"]) == sorted(chicago_start.hands[0])
    assert seat0["hands"][1] == {"faces": [], "backs": len(chicago_start.hands[1])}


# ----------------------------------------------------------------- bad positions: one line, before any bot starts


def _match_cli(tmp_path: Path, start: str, *extra: str) -> Any:
    pidfile = tmp_path / "started"
    bot = f"{TEST_BOTS / 'exit_at_once.py'} mark pidfile={pidfile}"
    res = runner.invoke(app, ["match", bot, bot, "-n", "2", "--start", start, *extra])
    assert not pidfile.exists(), "a bot was started before the position was checked"
    return res


@pytest.mark.parametrize(
    ("start", "extra", "says"),
    [
        ("chicago/2 dealer=x", (), "--start: position field 'dealer': 'x' is not a whole number"),
        (
            "ghost_euchre dealer=2 phase=bidding hands=9dJhKdKh9hKs/JdQhAcQcTcAs/QsAd9cTh9sJs ghost=TsKcTdAhQdJc",
            (),
            "--start: the position is for ghost_euchre, but the game is chicago",
        ),
        ("<three>", (), "--start: the position has 3 seats, but 2 players"),
        (
            "chicago/2 dealer=1 phase=trick hands=KsQsJsTs/KhQhJhTh "
            "stock=2s2h2d2c3s3h3d3c4s4h4d4c5s5h5d5c6s6h6d6c7s7h7d7c"
            "8s8h8d8c9s9h9d9cTdTcJdJcQdQcKdKcAdAs ex=0,0,0,0,0,0 tricks=AsAh",
            (),
            "--start: impossible position: card As is in two places",
        ),
        (
            "chicago/2 dealer=1 scores=3,4 phase=trick hands=KsQsJsTs/KhQhJhTh "
            "stock=2s2h2d2c3s3h3d3c4s4h4d4c5s5h5d5c6s6h6d6c"
            "7s7h7d7c8s8h8d8c9s9h9d9cTdTcJdJcQdQcKdKcAdAc ex=0,0,0,0,0,0 tricks=AsAh",
            ("--rule", "target_score=4"),
            "--start: impossible position: scores: seat 1 has 4 >= target 4",
        ),
        ("@no/such/file", (), "--start @no/such/file: cannot read the position file"),
    ],
)
def test_bad_start_is_one_line_exit_2_before_any_bot(
    tmp_path: Path, start: str, extra: tuple[str, ...], says: str
) -> None:
    if start == "<three>":
        start = format_position(met_in_play("chicago", 3, 5, "exchange"))
    res = _match_cli(tmp_path, start, *extra)
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and says in lines[0], res.output
    assert "Traceback" not in res.output


def test_start_from_a_file(chicago_start: Position, tmp_path: Path) -> None:
    path = tmp_path / "puzzle.pos"
    path.write_text(f"# a mid-trick position\n\n{format_position(chicago_start)}\n")
    assert read_start(f"@{path}") == format_position(chicago_start)
    res = runner.invoke(
        app,
        [
            "match",
            str(FIRST_LEGAL_BOT),
            str(RANDOM_BOT),
            "-n",
            "2",
            "-s",
            "4",
            "--start",
            f"@{path}",
            "--json",
            "--log-dir",
            str(tmp_path / "logs"),
        ],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["start"] == format_position(chicago_start)
    results = summary["results"]
    assert len(results) == 2
    for r in results:
        header, _ = read_json_log(Path(r["log"]))
        assert parse_position(header.start) == replace(chicago_start, seed=header.seed)
    two = tmp_path / "two.pos"
    two.write_text(f"{format_position(chicago_start)}\n{format_position(chicago_start)}\n")
    with pytest.raises(ConfigError, match="holds 2 position lines"):
        read_start(f"@{two}")


# ----------------------------------------------------------------- a person's table


def test_play_table_starts_from_the_position(chicago_start: Position, tmp_path: Path) -> None:
    from referee.play.table import TableConfig, play_table

    class FirstLegal:
        def __init__(self) -> None:
            self.requests: list[Any] = []

        def notify(self, message: Any) -> None:
            pass

        async def decide(self, request: Any, judge: Any) -> Any:
            self.requests.append(request)
            return request.legal[0]

    async def no_more(records: list[Any]) -> bool:
        return False

    game = get_game("chicago")
    with pytest.raises(ConfigError, match="--start: the position has 2 seats, but 3 players"):
        TableConfig(
            game=game,
            rules=build_rules(game, None),
            bots=[_bot("random_bot.py"), _bot("first_legal_bot.py")],
            seed=1,
            start=format_position(chicago_start),
        )
    me = _to_act(chicago_start)
    config = TableConfig(
        game=game,
        rules=build_rules(game, None),
        bots=[_bot("first_legal_bot.py")],
        seed=2,
        human_seat=me,
        log_dir=tmp_path,
        start=format_position(chicago_start),
    )
    person = FirstLegal()

    async def main() -> Any:
        with trio.fail_after(scaled(120)):
            return await play_table(config, person, no_more)

    result = trio.run(main)
    first = person.requests[0]
    assert sorted(first.view.hand) == sorted(chicago_start.hands[me])
    assert [pc.card for pc in first.view.trick] == list(chicago_start.trick)
    assert msgspec.to_builtins(first.view.scores) == list(chicago_start.scores)
    log = Path(result.records[0].log_path)
    assert verify_file(log).status == OK
    assert read_json_log(log)[0].start is not None


@needs_sandbox
def test_a_sandboxed_bot_may_not_see_the_position_file(chicago_start: Position, tmp_path: Path) -> None:
    """The file holds every hand: like a deals file, it must lie outside every sandboxed bot's folder."""
    folder = tmp_path / "bots"
    folder.mkdir()
    bot = folder / "random_bot.py"
    shutil.copy(SAMPLE_BOTS / "random_bot.py", bot)
    puzzle = folder / "puzzle.pos"
    puzzle.write_text(format_position(chicago_start) + "\n")
    res = runner.invoke(app, ["match", str(bot), str(FIRST_LEGAL_BOT), "-n", "2", "--sandbox", "--start", f"@{puzzle}"])
    assert res.exit_code == 2, res.output
    assert f"holds {puzzle}" in res.output and "Traceback" not in res.output
