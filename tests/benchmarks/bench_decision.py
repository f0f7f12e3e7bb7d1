"""Benchmark (not a test): where one decision's time goes in the referee.

1. The whole: `bench`'s workload (first-legal at both seats of Chicago,
   games through the referee and the same request lines as a raw stream,
   rounds interleaved) with the referee process's own CPU time per decision
   (`time.thread_time`) beside each side's wall time. The referee's CPU per
   decision minus the raw stream's per round trip is what the referee adds
   to each decision; waiting for the bot is not CPU time, so the bot's own
   work drops out.
2. The parts, each timed alone (`perf_counter_ns` around the very calls
   the runner makes, over every decision of the same games, logs written to
   a temporary file): encode view, legality, apply, decode, log, clock, CPU
   time (a live child's `/proc` tree), and the pipe's write and read (CPU of
   one round trip to a `cat`). The least mean of five passes: a pass
   another process interrupted counts for nothing, but on a busy machine
   every pass is slowed (compare with the runner alone, in CPU time).
3. The runner alone: whole games through `GameRunner` with seats in this
   process that answer at once (the replies of first-legal, made in advance)
   and whose CPU time is read from a live child's `/proc` tree, as a bot
   process's is: the referee's own work per decision with no pipe and no
   wait (so its CPU time, `time.thread_time`, which a busy machine inflates
   less than wall time), logs off (as in `bench`) and on, and with the live
   stream `serve` watches; the least of five passes.
4. The bots' wait: in those games, the wall time from the moment a seat's
   reply is handed to the runner to the moment the next request is handed
   to a seat (what a bot process waits for, beyond the pipe), logs off and
   on; the median decision of the pass with the least CPU time. Work the
   runner does once the request is out (a decision's log records, the CPU
   time of the seat that answered) is not in it.

Run: python tests/benchmarks/bench_decision.py [ROUNDS]
Figures of a shared machine are noisy: compare runs made in one session.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import msgspec
import trio

from protocol.messages import TimeControl
from referee.games import get_game
from referee.games.base import PUBLIC
from referee.games.rules import build_rules
from referee.live.stream import LiveWriter, stream_paths
from referee.logs.gamelog import GameLogWriter
from referee.logs.records import PlayerInfo
from referee.play import bench
from referee.play.game_spec import FailurePolicy, GameSpec, make_request
from referee.play.handle import BotHandle
from referee.play.match import MatchConfig
from referee.play.recorder import GameRecorder
from referee.play.replies import decode_reply
from referee.play.runner import GameRunner
from referee.play.seeding import derive_seed
from referee.play.start import initial_state
from referee.seats.bot_command import resolve_command
from referee.seats.clock import SeatClock
from referee.seats.cputime import ProcessTreeCpu
from referee.seats.seat import Seat, Unmetered

GAME = get_game("chicago")
RULES = build_rules(GAME)
GAMES = 16
_encoder = msgspec.json.Encoder()


def _seeds(count: int) -> list[int]:
    return [derive_seed(1, "bench", g) for g in range(count)]


def parts(count: int = GAMES, repeats: int = 5) -> dict[str, float]:
    """Microseconds per decision of each part, the runner's own calls timed
    alone; the least of `repeats` passes over the games (a pass that another
    process interrupted counts for nothing)."""
    passes = [_one_pass(count) for _ in range(repeats)]
    return {name: min(p[name] for p in passes) for name in passes[0]}


def _spec(game_id: int, seed: int) -> GameSpec:
    """A two-seat game of the workload, with the default clock and failure policy."""
    return GameSpec(
        game=GAME,
        rules=RULES,
        n_players=2,
        seed=seed,
        game_id=game_id,
        time_control=TimeControl(),
        policy=FailurePolicy(),
    )


def _one_pass(count: int) -> dict[str, float]:
    ns: dict[str, int] = dict.fromkeys(("encode view", "legality", "apply", "decode", "log", "clock", "CPU time"), 0)
    now = time.perf_counter
    tick = time.perf_counter_ns
    decisions = 0
    sleeper = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(600)"])
    tree = ProcessTreeCpu(sleeper.pid)
    tree.seconds()
    with tempfile.TemporaryDirectory() as tmp:
        for game_id, seed in enumerate(_seeds(count), start=1):
            spec = _spec(game_id, seed)
            writer = GameLogWriter(Path(tmp) / f"game-{game_id}.jsonl")
            log = GameRecorder(writer, spec, now)
            log.header([PlayerInfo(seat=s, name=f"b{s}", argv=["b"]) for s in range(2)])
            state = initial_state(GAME, RULES, 2, seed, (), None)
            clocks = [SeatClock(spec.time_control) for _ in range(2)]
            cursor = [0, 0]
            log.engine(state)
            rid = 0
            while not state.is_terminal():
                decisions += 1
                rid += 1
                t0 = tick()
                seat = state.current_player()
                legal = state.legal_actions()
                t1 = tick()
                clock = clocks[seat]
                limit = clock.limit_s()
                snapshot = clock.snapshot()
                sent = now()
                t2 = tick()
                events = [ev for aud, ev in state.events[cursor[seat] :] if aud in (PUBLIC, seat)]
                cursor[seat] = len(state.events)
                req = make_request(rid, game_id, events, state.view(seat), legal, snapshot)
                data = bytearray()
                _encoder.encode_into(req, data)
                data += b"\n"
                t3 = tick()
                log.request(seat, rid, events, req.clock)
                t4 = tick()
                tree.seconds()
                t5 = tick()
                reply = b'{"type":"action","id":%d,"action":%s}' % (rid, _encoder.encode(legal[0]))
                t6 = tick()
                msg = decode_reply(reply)
                t7 = tick()
                log.received(seat, reply)
                t7b = tick()
                elapsed = now() - sent
                clock.charge(elapsed)
                assert limit > 0
                t8 = tick()
                tree.seconds()
                t9 = tick()
                state.apply_action(msg.action)
                t10 = tick()
                log.action(seat, rid, "bot", msg.action, elapsed, 0.0, state)
                t11 = tick()
                ns["legality"] += t1 - t0
                ns["clock"] += (t2 - t1) + (t8 - t7b)
                ns["encode view"] += t3 - t2
                ns["log"] += (t4 - t3) + (t7b - t7) + (t11 - t10)
                ns["CPU time"] += (t5 - t4) + (t9 - t8)
                ns["decode"] += t7 - t6
                ns["apply"] += t10 - t9
            writer.close()
    sleeper.kill()
    sleeper.wait()
    tree.close()
    return {name: total / decisions / 1000 for name, total in ns.items()}


async def pipe_costs(lines: list[bytes]) -> tuple[float, float]:
    """CPU microseconds of a write and of a read (trio's wait for the reply
    included) per round trip with `cat`, the referee's own pipe calls."""
    from referee.seats.bot_process import start_bot

    spec = replace(resolve_command("first-legal"), argv=("cat",), name="cat")
    async with trio.open_nursery() as nursery:
        proc = await start_bot(nursery, spec)
        try:
            write = read = 0.0
            for line in lines:
                t0 = time.thread_time()
                await proc.send(line)
                t1 = time.thread_time()
                await proc.receive_line()
                write += t1 - t0
                read += time.thread_time() - t1
        finally:
            await proc.close()
    return write / len(lines) * 1e6, read / len(lines) * 1e6


async def whole(rounds: int) -> tuple[list[float], list[float], list[float], list[float]]:
    """Per round: referee CPU us per decision, raw stream CPU us per round trip,
    and both sides' wall us."""
    spec = resolve_command("first-legal")
    bots = [spec, replace(spec, name=f"{spec.name}#2")]
    config = MatchConfig(game=GAME, rules=RULES, games=rounds * 4, seed=1, bots=bots)
    ref_cpu: list[float] = []
    raw_cpu: list[float] = []
    ref_wall: list[float] = []
    raw_wall: list[float] = []
    async with trio.open_nursery() as nursery:
        handles = [BotHandle(b, nursery) for b in config.seat_specs()]
        try:
            for h in handles:
                await h.ensure(config.time_control, [GAME.name])
            procs = [h.proc for h in handles if h.proc is not None]
            for r in range(rounds + 1):
                games = [(r * 4 + g + 1, derive_seed(1, "bench", r * 4 + g)) for g in range(4)]
                rotations = [g % 2 for g in range(4)]
                stream = bench.game_stream(config, games)

                async def referee() -> tuple[float, float]:
                    c0, w0 = time.thread_time(), time.perf_counter()
                    _, n, _ = await bench._referee_rate(config, handles, games, rotations, r)
                    return (time.thread_time() - c0) / n * 1e6, (time.perf_counter() - w0) / n * 1e6

                async def raw() -> tuple[float, float]:
                    c0, w0 = time.thread_time(), time.perf_counter()
                    await bench._stream_rate(procs, stream, rotations)
                    return (time.thread_time() - c0) / len(stream) * 1e6, (time.perf_counter() - w0) / len(stream) * 1e6

                order: list[Callable[[], object]] = [referee, raw] if r % 2 else [raw, referee]
                got = {f: await f() for f in order}  # type: ignore[misc]
                if r:
                    ref_cpu.append(got[referee][0])  # type: ignore[index]
                    ref_wall.append(got[referee][1])  # type: ignore[index]
                    raw_cpu.append(got[raw][0])  # type: ignore[index]
                    raw_wall.append(got[raw][1])  # type: ignore[index]
        finally:
            with trio.CancelScope(shield=True):
                for h in handles:
                    await h.close()
    return ref_cpu, raw_cpu, ref_wall, raw_wall


class _AnsweringSeat(Unmetered):
    """A seat in this process: each request is answered at once with the next
    reply of `replies`, and its CPU time is a live child's, read as a bot's."""

    measures_cpu = True
    dead = False
    late_id = 0
    pid = 0

    def __init__(self, replies: list[bytes], tree: ProcessTreeCpu, waits: list[int]) -> None:
        self._replies = replies
        self._tree = tree
        self._answer = b""
        self._waits = waits  # ns from a reply handed over to the next request; [-1] holds the reply's time

    def cpu_seconds(self) -> float:
        return self._tree.seconds()

    def send_nowait(self, data: bytes | bytearray) -> bool:
        if data.startswith(b'{"type":"request"'):
            now = time.perf_counter_ns()
            if self._waits and self._waits[-1] < 0:
                self._waits[-1] += now
            self._answer = self._replies.pop()
        return True

    async def send(self, data: bytes | bytearray) -> None:
        self.send_nowait(data)

    async def flush(self) -> None:
        pass

    def ready_lines(self, max_bytes: int, max_lines: int) -> list[bytes]:
        return []

    async def receive_line(self) -> bytes:
        self._waits.append(-time.perf_counter_ns())
        return self._answer

    async def close(self, farewell: bytes | None = None) -> None:
        pass


def _replies(seed: int) -> list[bytes]:
    """first-legal's replies in a game of this seed, last first (popped)."""
    state = initial_state(GAME, RULES, 2, seed, (), None)
    out = []
    rid = 0
    while not state.is_terminal():
        rid += 1
        action = state.legal_actions()[0]
        out.append(b'{"type":"action","id":%d,"action":%s}' % (rid, _encoder.encode(action)))
        state.apply_action(action)
    return out[::-1]


async def runner_alone(count: int, logged: bool, watched: bool = False) -> tuple[float, float]:
    """Microseconds per decision of whole games through the runner, seats
    answering at once, and the median wait from a reply to the next request
    (wall); `watched`: with the live stream (`serve`'s watcher)."""
    sleeper = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(600)"])
    tree = ProcessTreeCpu(sleeper.pid)
    tree.seconds()
    decisions = 0
    spent = 0.0
    waits: list[int] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            live = None
            if watched:
                public, private = stream_paths(Path(tmp))
                live = LiveWriter(
                    public, private, source="match", name="b", game=GAME.name, bots=["b0", "b1"], scheduled=count
                )
            for game_id, seed in enumerate(_seeds(count), start=1):
                replies = _replies(seed)
                seats: list[Seat | None] = [_AnsweringSeat(replies, tree, waits), _AnsweringSeat(replies, tree, waits)]
                spec = _spec(game_id, seed)
                log = GameLogWriter(Path(tmp) / f"game-{game_id}.jsonl" if logged else None)
                players = [PlayerInfo(seat=s, name=f"b{s}", argv=["b"]) for s in range(2)]
                watch = live.watch_games(spec, ["b0", "b1"]) if live is not None else None
                t0 = time.thread_time()  # nothing waits here: CPU time, which another process cannot inflate
                record = await GameRunner(spec, seats, ["b0", "b1"], log, watch).run(players, {})
                spent += time.thread_time() - t0
                log.close()
                assert not record.failures, record.failures
                decisions += record.decisions
    finally:
        sleeper.kill()
        sleeper.wait()
        tree.close()
    return spent / decisions * 1e6, statistics.median(w for w in waits if w > 0) / 1000


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    med = statistics.median
    ref_cpu, raw_cpu, ref_wall, raw_wall = trio.run(whole, rounds)
    print(f"bench workload, medians of {rounds} interleaved rounds (load {os.getloadavg()[0]:.1f}):")
    print(f"  referee: {med(ref_wall):6.1f} us wall, {med(ref_cpu):6.1f} us CPU per decision")
    print(f"  raw stream: {med(raw_wall):6.1f} us wall, {med(raw_cpu):6.1f} us CPU per round trip")
    print(f"  the referee's own CPU per decision: {med(ref_cpu) - med(raw_cpu):6.1f} us")
    config = MatchConfig(game=GAME, rules=RULES, games=GAMES, seed=1, bots=[resolve_command("first-legal")] * 2)
    lines = [line for _, _, line in bench.game_stream(config, [(i + 1, s) for i, s in enumerate(_seeds(4))])]
    write, read = trio.run(pipe_costs, lines)
    print(f"parts, us per decision over {GAMES} games (each timed alone):")
    for name, us in parts().items():
        print(f"  {name:<12} {us:6.2f}")
    print(f"  {'write':<12} {write:6.2f}  (CPU; the raw stream pays it too)")
    print(f"  {'read':<12} {read:6.2f}  (CPU, trio's wait included; the raw stream pays it too)")
    for logged, watched in ((False, False), (True, False), (False, True)):
        us, wait = min(trio.run(runner_alone, GAMES, logged, watched) for _ in range(5))
        what = "log on" if logged else "log off, live stream on" if watched else "log off"
        print(f"the runner alone, seats answering at once, {what}: {us:6.2f} us CPU per decision,")
        print(f"  the bots' wait from a reply to the next request {wait:6.2f} us (wall, median decision)")


if __name__ == "__main__":
    main()
