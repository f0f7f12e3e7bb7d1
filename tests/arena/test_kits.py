"""Starter kits (`arena kit LANG FOLDER`): the command writes a kit, or refuses
in one line; each kit, written by the command, packed as `arena submit` packs
it and built in the arena's sandbox with its language's toolchain alone,
passes the arena's gate in both games and plays a game against `random`; and
every kit answers one scripted session exactly as the documented rule says
(its lowest card in a trick, else a legal action drawn with SplitMix64 seeded
by the game's seed), so all of them make the same moves."""

from __future__ import annotations

import hashlib
import itertools
import json
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from needs import needs_sandbox
from timing import scaled
from typer.testing import CliRunner

from referee.arena.archives import ArchiveLimits, pack_folder
from referee.arena.builds import BuildResult, build, run_spec
from referee.arena.config import CONFIG_NAME, Arena, load_arena, template
from referee.arena.kits import KIT_LANGUAGES, KITS, kit_files, missing_toolchains
from referee.arena.recipes import MANIFEST, read_manifest
from referee.arena.toolchains import probe_toolchains
from referee.cli import app
from referee.games import get_game
from referee.games.rules import build_rules
from referee.play.check import check_bot
from referee.play.match import MatchConfig, run_match
from referee.seats.bot_command import resolve_command
from referee.seats.sandbox import SANDBOX_PATH

runner = CliRunner()
MASK = (1 << 64) - 1
RANKS = "23456789TJQKA"


def cli(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


# ------------------------------------------------------------------ the rule every kit follows


class SplitMix64:
    """The generator the kits use, written again here as the test's oracle."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def below(self, n: int) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return (z ^ (z >> 31)) % n


def test_the_oracle_is_splitmix64() -> None:
    # The published first outputs of SplitMix64 from seed 0.
    gen = SplitMix64(0)
    assert [gen.below(1 << 64) for _ in range(3)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def expected_move(view: dict[str, Any], legal: list[dict[str, Any]], rng: SplitMix64) -> dict[str, Any]:
    if view["phase"] == "trick":
        plays = [a for a in legal if a.get("type") == "play" and a.get("card")]
        if plays:
            return min(plays, key=lambda a: RANKS.find(a["card"][0]))
    return legal[rng.below(len(legal))]


# ------------------------------------------------------------------ one scripted session

CHICAGO_SEED = (1 << 63) - 1  # beyond 2^53: a JavaScript number would round it
EUCHRE_SEED = 12345
EXCHANGE_HAND = ["As", "Kd", "9h", "5c", "2c"]


def chicago_view(phase: str, hand: list[str], **more: Any) -> dict[str, Any]:
    view = {"game": "chicago", "seat": 1, "n_players": 3, "phase": phase, "deal": 2, "dealer": 0}
    # Keys a careless reader could take for the message's own: they are the view's.
    view |= {"active": [0, 1, 2], "scores": [16, 3, 0], "hand": hand, "notes": {"id": 77, "legal": [1], "type": "x"}}
    return view | more


def euchre_view(phase: str, hand: list[str]) -> dict[str, Any]:
    view = {"game": "ghost_euchre", "seat": 2, "n_players": 3, "phase": phase, "deal": 1, "dealer": 0}
    return view | {"scores": [-3, 0, 5], "hand": hand, "bids": [], "high_bid": None, "swapped_by": None}


def session() -> tuple[list[str], list[dict[str, Any]]]:
    """The lines the referee sends, and the replies the rule gives them (after the hello reply)."""
    sent: list[str] = []
    replies: list[dict[str, Any]] = []

    def line(message: dict[str, Any], spaced: bool = False) -> None:
        sent.append(json.dumps(message, ensure_ascii=True) if spaced else json.dumps(message, separators=(",", ":")))

    def request(rid: int, view: dict[str, Any], legal: list[dict[str, Any]], rng: SplitMix64, spaced: bool = False):
        line({"type": "request", "id": rid, "game_id": 1, "events": [], "view": view, "legal": legal}, spaced)
        replies.append({"type": "action", "id": rid, "action": expected_move(view, legal, rng)})

    line({"type": "hello", "referee": "chicago-referee 0.1.0", "games": ["chicago", "ghost_euchre"], "protocol": 1})
    players = ["\u00e9l\u00e8ve", 'ace \U0001f0a1 "quoted" \\ back', "c"]  # escapes, a surrogate pair
    start = {"type": "game_start", "game_id": 1, "game": "chicago", "rules": {"game": "chicago", "target_score": 52}}
    line(start | {"seat": 1, "n_players": 3, "players": players, "time_control": {}, "seed": CHICAGO_SEED}, True)
    rng = SplitMix64(CHICAGO_SEED)
    line({"type": "news", "id": 99, "legal": [{"type": "pass"}]})  # a message type it does not know: no reply
    subsets = [list(c) for n in range(6) for c in itertools.combinations(EXCHANGE_HAND, n)]
    exchanges = [{"type": "exchange", "discard": discard} for discard in subsets]
    request(2, chicago_view("exchange", EXCHANGE_HAND, exchange_round=1), exchanges, rng)
    calls = [{"type": "chicago", "call": False}, {"type": "chicago", "call": True}]
    request(4, chicago_view("chicago_call", EXCHANGE_HAND), calls, rng)
    plays = [{"type": "play", "card": card} for card in ("Kh", "4h", "Th", "4d")]  # two lowest: the first wins
    request(6, chicago_view("trick", ["Kh", "Th", "4h", "4d", "As"], trick_number=1), plays, rng, spaced=True)
    warning = {"type": "warning", "id": 6, "game_id": 1, "reason": "timeout", "message": "no reply: \u00e9 \u2660"}
    sent.append(json.dumps(warning, ensure_ascii=False))  # UTF-8 as it is, not escaped
    request(8, chicago_view("trick", ["2c"], trick_number=5), [{"type": "play", "card": "2c"}], rng)
    sent.append('{"type":"request","id":9,"legal":[')  # a broken line: skipped, the bot goes on
    over = {"type": "game_over", "game_id": 1, "events": [], "winner": 0, "scores": [52, 3, 0]}
    line(over | {"placements": [1, 2, 3], "reason": "target", "failures": []})
    start = {"type": "game_start", "game_id": 2, "game": "ghost_euchre", "rules": {"game": "ghost_euchre"}}
    line(start | {"seat": 2, "n_players": 3, "players": ["a", "b", "c"], "time_control": {}, "seed": EUCHRE_SEED})
    rng = SplitMix64(EUCHRE_SEED)
    hand = ["Jh", "Th", "Jd", "Td", "Kc", "9s"]
    bids = [{"type": "pass"}, *({"type": "bid", "bid": b} for b in (3, 4, 5, "moon")), {"type": "swap_ghost"}]
    request(10001, euchre_view("bidding", hand), bids, rng)
    suits = [{"type": "name_trump", "suit": s} for s in "hdcs"]
    request(10003, euchre_view("name_trump", hand), suits, rng)
    plays = [{"type": "play", "card": card} for card in ("Jd", "9s", "Td")]
    request(10004, euchre_view("trick", hand), plays, rng)
    line({"type": "bye"})
    line({"type": "request", "id": 10006, "view": euchre_view("trick", hand), "legal": plays})  # after bye: unread
    return sent, replies


def answers_the_session(argv: list[str], cwd: Path, language: str) -> None:
    sent, replies = session()
    done = subprocess.run(
        argv, cwd=cwd, input="\n".join(sent) + "\n", capture_output=True, text=True, timeout=scaled(60)
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert json.loads(lines[0]) == {"type": "hello", "name": f"{language}-starter", "version": "1.0", "protocol": 1}
    assert [json.loads(line) for line in lines[1:]] == replies
    assert done.stdout.endswith("\n") and "\n\n" not in done.stdout  # one object per line, nothing else
    said = done.stderr
    assert f"{language}-starter: " in said and "game 1: chicago, seat 1 of 3" in said
    assert "our place 2" in said  # it read game_over, and knew its seat


def test_the_session_covers_every_kind_of_choice() -> None:
    _sent, replies = session()
    chosen = [r["action"] for r in replies]
    kinds = [a["type"] for a in chosen]
    assert kinds[:4] == ["exchange", "chicago", "play", "play"] and kinds[5:] == ["name_trump", "play"]
    assert kinds[4] in ("pass", "bid", "swap_ghost")
    assert [chosen[2]["card"], chosen[3]["card"], chosen[6]["card"]] == ["4h", "2c", "9s"]
    assert chosen[0]["discard"] not in ([], EXCHANGE_HAND)  # drawn, not the first or the last of 32


@pytest.mark.parametrize(("language", "program"), [("python", "python3"), ("javascript", "node")])
def test_the_interpreted_kits_answer_the_session_from_their_source(language: str, program: str, tmp_path: Path) -> None:
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    code, _out, err = cli("arena", "kit", language, str(tmp_path / "kit"))
    assert code == 0, err
    recipe = read_manifest(tmp_path / "kit" / MANIFEST)
    answers_the_session(list(recipe.run), tmp_path / "kit", language)


# ------------------------------------------------------------------ the command


@pytest.mark.parametrize("language", KIT_LANGUAGES)
def test_arena_kit_writes_the_kit_and_says_how_to_build_check_and_submit_it(language: str, tmp_path: Path) -> None:
    folder = tmp_path / "new" / "mybot"  # its parents are made too
    code, out, err = cli("arena", "kit", language, str(folder))
    assert code == 0, err
    kit = KITS[language]
    files = kit_files(kit)
    written = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert written == [name for name, _content in files]
    assert all((folder / name).read_bytes() == content for name, content in files)
    assert {MANIFEST, "README.md"} <= set(written) and len(written) >= 3
    recipe = read_manifest(folder / MANIFEST)
    assert recipe.name == f"{language}-starter"
    command = shlex.join(recipe.run)
    check = f"chicago-referee check {shlex.quote(command)}"
    steps = [line.strip() for line in out.splitlines()]
    expected = [f"cd {shlex.quote(str(folder))}", *([recipe.build] if recipe.build else []), check]
    assert steps[:-1] == expected
    assert steps[-1] == f"chicago-referee arena submit URL {shlex.quote(str(folder))} --token-file FILE"
    assert f"wrote the {kit.title} starter kit to {folder}" in " ".join(err.split())
    # The README says the same: the build, the check of the run command, the submission.
    readme = (folder / "README.md").read_text()
    assert readme.startswith(f"# {kit.title.split(' ')[0]} starter kit\n")
    flat = " ".join(readme.split())
    assert recipe.build is None or recipe.build in flat
    assert f"chicago-referee check {command}" in flat or f'chicago-referee check "{command}"' in flat
    assert "chicago-referee arena submit http://HOST:8000 . --token-file" in flat
    assert len(readme.splitlines()) <= 16  # about ten lines: the files, build, check, submit


def test_arena_kit_refuses_a_folder_that_holds_anything_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "bot.py").write_text("my own bot\n")
    code, out, err = cli("arena", "kit", "python", str(folder))
    assert code == 2 and out == ""
    assert err.strip() == f"error: {folder} is not empty: give a new or empty folder for the Python kit"
    assert [p.name for p in folder.iterdir()] == ["bot.py"] and (folder / "bot.py").read_text() == "my own bot\n"
    (tmp_path / "afile").write_text("x")
    code, _out, err = cli("arena", "kit", "go", str(tmp_path / "afile"))
    assert code == 2 and err.count("\n") == 1 and "is a file" in err
    assert (tmp_path / "afile").read_text() == "x"


def test_arena_kit_writes_into_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _out, err = cli("arena", "kit", "c", str(tmp_path / "empty"))
    assert code == 0, err
    assert (tmp_path / "empty" / "bot.c").is_file()


def test_an_unknown_language_is_one_line_that_names_the_languages(tmp_path: Path) -> None:
    code, out, err = cli("arena", "kit", "cobol", str(tmp_path / "k"))
    assert code == 2 and out == ""
    assert err.strip() == "error: no starter kit for 'cobol': the languages are " + ", ".join(KIT_LANGUAGES)
    assert not (tmp_path / "k").exists()


def test_the_help_lists_the_languages() -> None:
    code, out, _err = cli("arena", "kit", "--help")
    assert code == 0
    assert ", ".join(KIT_LANGUAGES) in " ".join(out.replace("│", " ").split())


# ------------------------------------------------------------------ built in the arena's sandbox


@dataclass(frozen=True)
class Built:
    language: str
    result: BuildResult
    seconds: float


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Arena:
    """An arena as `arena init` makes it: its build limits, sandbox and clock are the ones under test."""
    folder = tmp_path_factory.mktemp("arena")
    (folder / CONFIG_NAME).write_text(template("kits", "chicago", 2))
    (folder / "archives").mkdir()
    return load_arena(folder)


@pytest.fixture(scope="module", params=KIT_LANGUAGES)
def built(request: pytest.FixtureRequest, arena: Arena, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The kit of one language, written by the command, packed as `arena submit` packs it, built by the arena."""
    language: str = request.param
    kit = KITS[language]
    missing = missing_toolchains(kit, probe_toolchains(kit.toolchains, path=SANDBOX_PATH))
    if missing:
        pytest.skip(f"the {kit.title} kit: no {', '.join(missing)} in the sandbox's PATH (Debian: {kit.install})")
    folder = tmp_path_factory.mktemp(f"kit-{language}") / "bot"
    code, _out, err = cli("arena", "kit", language, str(folder))
    assert code == 0, err
    data = pack_folder(folder, arena.archives)
    sha256 = hashlib.sha256(data).hexdigest()
    archive = arena.folder / "archives" / sha256
    archive.write_bytes(data)
    started = time.monotonic()
    result = build(archive, sha256, arena.folder, arena.builds, ArchiveLimits())
    assert result.ok, f"{language}: {result.reason}"
    return Built(language, result, time.monotonic() - started)


@needs_sandbox
@pytest.mark.slow
def test_each_kit_builds_with_its_bot_toml(built: Built) -> None:
    result = built.result
    assert result.recipe is not None and result.recipe.source == MANIFEST
    assert result.recipe.name == f"{built.language}-starter"
    assert result.folder is not None
    program = result.folder / result.recipe.run[0]
    if result.recipe.build is not None:
        assert result.log_path is not None and result.log_path.read_text().startswith(f"$ {result.recipe.build}\n")
    if program.exists():  # a compiled kit: the build made the program `run` starts
        assert program.stat().st_mode & 0o111


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("game_name", ["chicago", "ghost_euchre"])
async def test_each_kit_passes_the_arena_gate(built: Built, arena: Arena, game_name: str) -> None:
    spec = run_spec(built.result, f"{built.language}-starter", arena.sandbox)
    report = await check_bot(spec, get_game(game_name), arena.time_control, sandbox=arena.sandbox)
    assert report.ok, report.problems
    assert not report.warnings, report.warnings


@needs_sandbox
@pytest.mark.slow
async def test_each_kit_plays_a_game_against_random(built: Built, arena: Arena) -> None:
    game = get_game("chicago")
    kit = run_spec(built.result, built.language, arena.sandbox)
    config = MatchConfig(
        game=game,
        rules=build_rules(game, None, {"target_score": 20}),
        bots=[kit, resolve_command("random")],
        games=2,  # one deal set: the kit in both seats
        seed=3,
        time_control=arena.time_control,
        sandbox=arena.sandbox,
    )
    match = await run_match(config)
    assert len(match.records) == 2
    for record in match.records:
        assert not record.failures and record.reason != "forfeit"
        assert record.decisions > 10
    assert match.bots[0].name == built.language and not match.bots[0].failures


@needs_sandbox
@pytest.mark.slow
def test_each_built_kit_answers_the_session(built: Built, arena: Arena) -> None:
    assert built.result.folder is not None
    argv = run_spec(built.result, built.language, arena.sandbox).argv  # the built program, run here unsandboxed
    answers_the_session(list(argv), built.result.folder, built.language)
