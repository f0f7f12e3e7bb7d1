"""The non-Python sample bots (Node.js and C) speak the wire protocol.

Each bot runs as a real subprocess driven by a tiny synchronous referee
written here (pipes, a reader thread, timeouts on every read); the games
themselves come from the in-process engine. One bot process serves every
seat of a game, and several games in a row, as the protocol allows.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest
from paths import ROOT
from timing import scaled

from protocol.messages import (
    ActionReply,
    BotHello,
    BotMessage,
    Bye,
    Clock,
    GameOver,
    GameStart,
    Hello,
    Request,
    TimeControl,
)
from referee.games.playout import new_game

JS_BOT = ROOT / "sample_bots" / "js" / "chicago_bot.js"
C_SOURCE = ROOT / "sample_bots" / "c" / "chicago_bot.c"

NODE = shutil.which("node")
CC = shutil.which("cc")

READ_TIMEOUT = scaled(10.0)  # seconds for one reply; generous for loaded CI machines
MAX_DECISIONS = 40_000  # a game that needs more than this does not terminate

encoder = msgspec.json.Encoder()
bot_decoder = msgspec.json.Decoder(BotMessage)


# ------------------------------------------------------------------ driver


class BotProcess:
    """A bot subprocess with line I/O. Reads time out; the process is always killed."""

    def __init__(self, argv: list[str], stderr_path: Path) -> None:
        self.argv = argv
        self._stderr = open(stderr_path, "wb")  # noqa: SIM115 (open for the bot's lifetime; closed in close())
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=ROOT,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)  # end of output

    def send(self, msg: msgspec.Struct | bytes) -> None:
        data = msg if isinstance(msg, bytes) else encoder.encode(msg)
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float = READ_TIMEOUT) -> bytes:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"{self.argv}: no reply within {timeout} s; stderr:\n{self.stderr()}")
        if line is None:
            pytest.fail(f"{self.argv}: closed stdout (exit {self.proc.poll()}); stderr:\n{self.stderr()}")
        return line

    def no_more_output(self, timeout: float) -> bool:
        """True if the bot wrote nothing more within `timeout` seconds (or closed stdout)."""
        try:
            return self._lines.get(timeout=timeout) is None
        except queue.Empty:
            return True

    def read_message(self) -> BotHello | ActionReply:
        line = self.read_line()
        try:
            return bot_decoder.decode(line)
        except msgspec.ValidationError as exc:  # pragma: no cover - reported as a failure
            pytest.fail(f"{self.argv}: invalid message {line[:300]!r}: {exc}")

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")[-4000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=scaled(10))
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._stderr.close()


def handshake(bot: BotProcess, name: str) -> None:
    bot.send(Hello(referee="test-driver", games=["chicago"]))
    reply = bot.read_message()
    assert isinstance(reply, BotHello), reply
    assert reply.name == name
    assert reply.protocol == 1


def play_one_game(
    bot: BotProcess, game_id: int, n_players: int, seed: int, first_id: int, options: dict[str, Any] | None = None
) -> int:
    """Play a whole game with `bot` in every seat; return the next request id."""
    state = new_game("chicago", n_players, seed, options=options)
    for seat in range(n_players):
        bot.send(
            GameStart(
                game_id=game_id,
                game="chicago",
                rules=state.rules,
                seat=seat,
                n_players=n_players,
                players=[f"bot{s}" for s in range(n_players)],
                time_control=TimeControl(),
                seed=seed * 10 + seat,
            )
        )
    request_id = first_id
    sent_events = 0
    decisions = 0
    while not state.is_terminal():
        decisions += 1
        assert decisions <= MAX_DECISIONS, f"game {game_id} ({n_players} seats, seed {seed}) does not end"
        seat = state.current_player()
        # The events since the last request (all audiences: one process plays every seat).
        new_events = [event for _audience, event in state.events[sent_events:]]
        sent_events = len(state.events)
        legal = list(state.legal_actions())
        bot.send(
            Request(
                id=request_id,
                game_id=game_id,
                events=new_events,
                view=state.view(seat),
                legal=legal,
                clock=Clock(decision_ms=1000),
            )
        )
        reply = bot.read_message()
        assert isinstance(reply, ActionReply), reply
        assert reply.id == request_id
        assert reply.action in legal, f"illegal action {reply.action} (legal: {legal})"
        state.apply_action(reply.action)
        request_id += 1
    result = state.result()
    assert len(result.scores) == n_players and result.reason
    bot.send(
        GameOver(
            game_id=game_id,
            events=[event for _audience, event in state.events[sent_events:]],
            winner=result.winner,
            scores=result.scores,
            placements=result.placements,
            reason=result.reason,
            failures=[],
        )
    )
    return request_id


def expect_exit_after_bye(bot: BotProcess) -> None:
    bot.send(Bye())
    # stdin stays open: the bot must leave on `bye` alone.
    try:
        code = bot.proc.wait(timeout=READ_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{bot.argv}: still running {READ_TIMEOUT} s after bye")
    assert code == 0, bot.stderr()
    assert bot.no_more_output(timeout=scaled(1.0))


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CC is None:
        pytest.skip("no C compiler: `cc` is not on PATH")
    out = tmp_path_factory.mktemp("cbot") / ("chicago_bot.exe" if os.name == "nt" else "chicago_bot")
    build = subprocess.run(
        [CC, "-O2", "-o", str(out), str(C_SOURCE)], capture_output=True, text=True, timeout=scaled(120)
    )
    assert build.returncode == 0, f"C bot failed to build:\n{build.stdout}\n{build.stderr}"
    return out


@pytest.fixture(scope="module")
def js_bot() -> list[str]:
    if NODE is None:
        pytest.skip("no Node.js: `node` is not on PATH")
    return [NODE, str(JS_BOT)]


def bot_argv(which: str, request: pytest.FixtureRequest) -> tuple[list[str], str]:
    if which == "c":
        return [str(request.getfixturevalue("c_bot"))], "c-random"
    return request.getfixturevalue("js_bot"), "js-heuristic"


BOTS = ["js", "c"]


# -------------------------------------------------------------------- tests


@pytest.mark.parametrize("which", BOTS)
def test_bot_plays_whole_games(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    argv, name = bot_argv(which, request)
    bot = BotProcess(argv, tmp_path / "stderr.txt")
    try:
        handshake(bot, name)
        next_id = 1
        # 2, 3 and 4 seats; the `one_open` variant adds `take_open` decisions.
        games = ((2, 1, None), (3, 2, None), (4, 1, None), (3, 5, {"one_open": True}))
        for game_id, (n_players, seed, options) in enumerate(games, start=1):
            next_id = play_one_game(bot, game_id, n_players, seed, next_id, options)
        expect_exit_after_bye(bot)
    finally:
        bot.close()


@pytest.mark.parametrize("which", BOTS)
def test_bot_exits_at_end_of_input(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    argv, name = bot_argv(which, request)
    bot = BotProcess(argv, tmp_path / "stderr.txt")
    try:
        handshake(bot, name)
        assert bot.proc.stdin is not None
        bot.proc.stdin.close()
        assert bot.proc.wait(timeout=READ_TIMEOUT) == 0, bot.stderr()
    finally:
        bot.close()


def first_request(n_players: int = 3, seed: int = 4) -> dict[str, Any]:
    state = new_game("chicago", n_players, seed)
    seat = state.current_player()
    msg = Request(
        id=41,
        game_id=1,
        events=[],
        view=state.view(seat),
        legal=list(state.legal_actions()),
        clock=Clock(decision_ms=1000),
    )
    return msgspec.json.decode(encoder.encode(msg))


@pytest.mark.parametrize("which", BOTS)
def test_unknown_game_gets_a_legal_action(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A game the bot has never heard of (Ghost Hand Euchre-like tags): it echoes an element of `legal`."""
    argv, name = bot_argv(which, request)
    legal = [
        {"type": "bid", "level": 2},
        {"type": "swap_ghost", "card": "Jh"},
        {"type": "name_trump", "suit": "s"},
        {"type": "play", "card": "As"},
    ]
    msg = {
        "type": "request",
        "id": 9001,
        "game_id": 3,
        "view": {"game": "ghost_euchre", "seat": 1, "hand": ["As", "Jh"], "type": "bye", "legal": []},
        "legal": legal,
        "clock": {"decision_ms": 1000, "bank_ms": None},
    }
    bot = BotProcess(argv, tmp_path / "stderr.txt")
    try:
        handshake(bot, name)
        seen = []
        for i in range(12):
            msg["id"] = 9001 + i
            bot.send(msgspec.json.encode(msg))
            reply = msgspec.json.decode(bot.read_line())
            assert reply["type"] == "action" and reply["id"] == 9001 + i
            assert reply["action"] in legal
            seen.append(reply["action"]["type"])
        assert len(set(seen)) > 1, f"not random: always {seen[0]}"
        expect_exit_after_bye(bot)
    finally:
        bot.close()


def test_c_bot_survives_a_megabyte_line(c_bot: Path, tmp_path: Path) -> None:
    msg = first_request()
    # A 1 MB padding field *before* the real fields, full of decoys: quotes,
    # brackets and the very words the scanner looks for.
    decoy = '"type":"bye"}]{["id":0,"legal":[1]\\'
    padding = (decoy * (2**20 // len(decoy) + 1))[: 2**20]
    padded = {"padding": padding, "nested": {"type": "hello", "deep": [[[[{"type": "bye"}]]]]}, **msg}
    line = msgspec.json.encode(padded)
    assert len(line) > 2**20
    bot = BotProcess([str(c_bot)], tmp_path / "stderr.txt")
    try:
        handshake(bot, "c-random")
        legal = msgspec.json.decode(msgspec.json.encode(msg["legal"]), type=list[Any])
        for request_id in (41, 42, 43):
            padded["id"] = request_id
            bot.send(msgspec.json.encode(padded))
            reply = bot.read_message()
            assert isinstance(reply, ActionReply)
            assert reply.id == request_id
            assert msgspec.to_builtins(reply.action) in legal
        # Still answering normal-sized requests afterwards.
        msg["id"] = 44
        bot.send(msgspec.json.encode(msg))
        reply = bot.read_message()
        assert isinstance(reply, ActionReply) and reply.id == 44
        expect_exit_after_bye(bot)
    finally:
        bot.close()


def test_c_bot_ignores_malformed_lines(c_bot: Path, tmp_path: Path) -> None:
    msg = first_request()
    bot = BotProcess([str(c_bot)], tmp_path / "stderr.txt")
    try:
        handshake(bot, "c-random")
        for junk in (
            b"not json",
            b'{"type":"request","id":5,"legal":[1,2',  # truncated
            b'{"type":"request","id":6,"legal":[]}',  # nothing to choose
            b'{"type":"request","id":"7","legal":[1]}',  # id not an integer
            b"[" * 100_000,  # deep nesting, never closed
            # `bye` only nested:
            b'{"type":"warning","id":null,"game_id":1,"reason":"x","message":"x","detail":{"type":"bye"}}',
        ):
            bot.send(junk)
        bot.send(msgspec.json.encode(msg))
        reply = bot.read_message()  # the first reply is to the good request
        assert isinstance(reply, ActionReply) and reply.id == 41
        expect_exit_after_bye(bot)
    finally:
        bot.close()


def exchange_request(hand: list[str]) -> dict[str, Any]:
    """A real Chicago exchange request, with the hand (and its legal discards) replaced."""
    from itertools import combinations

    msg = first_request(2, 1)
    assert msg["view"]["phase"] == "exchange"
    msg["view"]["hand"] = hand
    msg["legal"] = [{"type": "exchange", "discard": list(c)} for k in range(6) for c in combinations(sorted(hand), k)]
    return msg


@pytest.mark.parametrize(
    ("hand", "discard"),
    [
        (["7s", "7h", "2c", "5d", "Ac"], {"2c", "5d"}),  # keep the pair and the ace
        (["Qs", "Kh", "2c", "5d", "Ac"], {"2c", "5d"}),  # no pair: keep Q, K, A
        (["9s", "9h", "9c", "5d", "3c"], {"5d", "3c"}),  # trips
        (["2h", "6h", "9h", "Jh", "4c"], {"4c"}),  # four to a flush
        (["5s", "6h", "7c", "8d", "9s"], set()),  # a made straight: stand pat
    ],
)
def test_js_bot_exchange_heuristic(hand: list[str], discard: set[str], js_bot: list[str], tmp_path: Path) -> None:
    bot = BotProcess(js_bot, tmp_path / "stderr.txt")
    try:
        handshake(bot, "js-heuristic")
        bot.send(msgspec.json.encode(exchange_request(hand)))
        reply = msgspec.json.decode(bot.read_line())
        assert reply["id"] == 41
        assert reply["action"]["type"] == "exchange"
        assert set(reply["action"]["discard"]) == discard
    finally:
        bot.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-v"]))
