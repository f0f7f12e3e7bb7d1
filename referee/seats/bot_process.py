"""Bot processes: start, talk line by line, drain stderr, and kill for sure.

Each bot runs in its own process group inside a Trio nursery. stdout has
exactly one reader with a maximum line length; stderr is always drained into
a bounded tail (a bot that floods stderr can never block on a full pipe). At
the end the bot gets `bye`, its stdin is closed, it has a short grace period
to exit, and then its whole process group is killed. A child that left the
group (a new session) is found by the tag every bot process carries in its
environment, which its children inherit, and killed too.

No bot runs before the guardian knows it, so a referee killed at any moment
leaves none behind. A bot's pid is known only once it has been started, so
a plain bot starts as a shell that waits for one line on its stdin before it
execs the bot's program (`_GATE`); the referee writes that line once it has
told the guardian. Reaching end of input instead (the referee died first),
the shell exits and the bot never runs.

A spec with `sandbox` limits runs in a sandbox instead (`seats/sandbox/`):
its own namespaces, identity, files and limits, and a session whose group
kill takes the whole sandbox down. It waits behind a gate until the guardian
knows it and, where it has cgroup v2 groups, until its processes are in
them (`seats/sandbox/gate.py`).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import uuid
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import NoReturn

import trio

from referee.errors import BotCrashed, BotStartError, SandboxUnavailable
from referee.seats.bot_command import BotSpec
from referee.seats.cputime import ProcessTreeCpu
from referee.seats.guardian import GUARDIAN, TAG_VARIABLE
from referee.seats.line_reader import LineReader, io_error
from referee.seats.sandbox import SandboxedBot, forbidden_paths, plan
from referee.seats.sandbox.files import stage

STDERR_TAIL = 8 * 1024
SHUTDOWN_GRACE_S = 0.5
GAME_STDERR_KEEP = 1 << 20  # the last 1 MB of each game's stderr is kept beside its log
# A plain bot's start: wait for the referee's line on stdin (read byte by byte,
# so the bot gets the rest), then become the bot's program, the same process.
_GATE = ("/bin/sh", "-c", 'read -r _ || exit; exec "$@"', "bot-start")


def kill_group(pid: int) -> None:
    """Kill a bot's whole process group now (no goodbye)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tagged(needle: bytes) -> list[int]:
    """Processes whose environment holds `needle` (Linux /proc; [] elsewhere)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    found = []
    me = os.getpid()
    for name in names:
        if name.isdigit() and int(name) != me:
            try:
                with open(f"/proc/{name}/environ", "rb") as fh:
                    if needle in fh.read():
                        found.append(int(name))
            except OSError:  # gone meanwhile, or not ours to read
                pass
    return found


def kill_tagged(tag: str) -> int:
    """SIGKILL every process that carries this bot's tag: the processes of a
    bot that left its process group. Returns how many were killed."""
    needle = f"{TAG_VARIABLE}={tag}\0".encode()
    killed = 0
    for _ in range(5):  # one may fork while we look: look again until none is left
        pids = _tagged(needle)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed


async def _deliver_cancel(proc: trio.Process, tag: str, box: SandboxedBot | None = None) -> None:
    kill_group(proc.pid)  # a sandbox: its session, so its PID 1 and everything inside
    if tag:
        kill_tagged(tag)
    if box is not None and box.cgroup is not None:
        box.cgroup.kill_all()


@dataclass
class BotProcess:
    """A running bot: send lines, receive lines, read its stderr tail."""

    spec: BotSpec
    proc: trio.Process
    reader: LineReader
    tag: str = ""  # in the environment of the bot and of every child it starts (not in a sandbox)
    sandbox: SandboxedBot | None = None
    stderr_tail: bytearray = field(default_factory=bytearray)
    game_stderr: bytearray = field(default_factory=bytearray)  # since the last `take_game_stderr`
    stderr_file: str = ""  # where this game's stderr will be kept, named in failure reports
    dead: bool = False
    closed: bool = False
    stderr_eof: trio.Event = field(default_factory=trio.Event)
    late_id: int = 0  # the last request that timed out unanswered: a reply to it is late, not wrong
    _unsent: bytearray = field(default_factory=bytearray)  # written when the pipe has room
    _cpu_tree: ProcessTreeCpu | None = None  # without a CPU-accounting cgroup: /proc
    measures_cpu = True

    def cpu_seconds(self) -> float:
        """CPU time the bot (every process of it) has used so far: its sandbox's
        cgroup when it has one, else its process tree in /proc."""
        box = self.sandbox
        if box is not None and box.cgroup is not None and box.cgroup.counts_cpu:
            return box.cgroup.cpu_seconds()
        if self._cpu_tree is None:
            self._cpu_tree = ProcessTreeCpu(self.proc.pid)
        return self._cpu_tree.seconds()

    def freeze(self) -> None:
        """freeze_idle: stop every process of the sandbox (not this bot's turn)."""
        cgroup = self.sandbox.cgroup if self.sandbox is not None else None
        if cgroup is not None and cgroup.can_freeze and not self.closed:
            try:
                cgroup.freeze()
            except OSError as exc:  # fail closed: never run on unfrozen when freezing was asked
                raise SandboxUnavailable(f"cannot freeze bot {self.spec.name!r}: {exc.strerror or exc}") from exc

    def thaw(self) -> None:
        """Let a frozen sandbox run again (its turn, or the end)."""
        cgroup = self.sandbox.cgroup if self.sandbox is not None else None
        if cgroup is not None and cgroup.frozen:
            try:
                cgroup.thaw()
            except OSError as exc:
                raise SandboxUnavailable(f"cannot thaw bot {self.spec.name!r}: {exc.strerror or exc}") from exc

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stderr_text(self, limit: int = 2000) -> str:
        text = bytes(self.stderr_tail[-limit:]).decode("utf-8", "replace")
        if self.stderr_file and self.game_stderr:  # the file is written at the end of the game
            text += f"\n[referee: this game's stderr of the bot is kept in {self.stderr_file}]"
        return text

    def take_game_stderr(self) -> bytes:
        """The last 1 MB the bot wrote to stderr since the last call."""
        data = bytes(self.game_stderr[-GAME_STDERR_KEEP:])
        self.game_stderr.clear()
        return data

    def limit_breach(self) -> tuple[str, str] | None:
        """(reason, message) if a sandboxed bot ran into one of its limits."""
        if self.sandbox is None:
            return None
        tail = bytes(self.stderr_tail[-STDERR_TAIL:]).decode("utf-8", "replace")
        return self.sandbox.limit_breach(self.proc.returncode, tail)

    def _stdin_fd(self) -> int:
        """The bot's stdin, written directly (no trio round trip per line); -1
        once closed, so a write fails rather than reach a reused descriptor."""
        stdin = self.proc.stdin
        assert isinstance(stdin, trio.lowlevel.FdStream)
        return stdin.fileno()

    def send_nowait(self, data: bytes | bytearray) -> bool:
        """Write `data` at once if the pipe has room (it nearly always has):
        True. Otherwise the rest is queued for `flush` (which also reports a
        broken pipe): False."""
        if not self._unsent:
            try:
                n = os.write(self._stdin_fd(), data)
            except OSError:  # full, or broken: `flush` retries and says which
                n = 0
            if n == len(data):
                return True
            data = data[n:]
        self._unsent += data
        return False

    async def send(self, data: bytes | bytearray) -> None:
        """Write `data`: at once when the pipe has room, else as room appears."""
        if not self.send_nowait(data):
            await self.flush()

    async def flush(self) -> None:
        """Write what `send` could not yet. Cancelled while the pipe is full,
        the rest stays queued for the next `flush`: nothing is sent twice."""
        while self._unsent:
            try:
                n = os.write(self._stdin_fd(), self._unsent)
            except BlockingIOError:
                try:
                    await trio.lowlevel.wait_writable(self._stdin_fd())
                except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    await self._broken(exc)
                continue
            except OSError as exc:
                await self._broken(io_error(exc))
            del self._unsent[:n]

    async def _broken(self, exc: Exception) -> NoReturn:
        self.dead = True
        self._unsent.clear()
        await self._settle()
        raise BotCrashed("bot's stdin is closed (exited?)", detail=self.stderr_text()) from exc

    def ready_lines(self, max_bytes: int, max_lines: int) -> list[bytes]:
        """Lines the bot wrote before now, taken without waiting (see `LineReader`)."""
        return self.reader.ready_lines(max_bytes, max_lines)

    async def receive_line(self) -> bytes:
        try:
            return await self.reader.receive_line()
        except BotCrashed as exc:
            self.dead = True
            await self._settle()
            exc.detail = exc.detail or self.stderr_text()
            raise

    async def _settle(self) -> None:
        """After a crash, let the process exit and its stderr drain (briefly),
        so the report has the exit code and the bot's last words."""
        with trio.move_on_after(0.5, shield=True):
            await self.proc.wait()
            await self.stderr_eof.wait()

    def exit_note(self) -> str:
        rc = self.proc.returncode
        if rc is None:
            return ""
        return f" (exit code {rc})" if rc >= 0 else f" (killed by signal {-rc})"

    async def close(self, farewell: bytes | None = None) -> None:
        """`bye`, close stdin, a short grace, then kill the whole group."""
        if self.closed:
            return
        self.closed = True
        with trio.CancelScope(shield=True):
            try:
                self.thaw()  # to read its bye and exit (v1 kills a frozen process only once thawed)
            except SandboxUnavailable:
                pass  # the group is gone: the kill below still ends the sandbox
            if farewell is not None and not self.dead:
                with trio.move_on_after(0.2):
                    try:
                        await self.send(farewell)
                    except BotCrashed:
                        pass
            if self.proc.stdin is not None:
                with trio.move_on_after(0.2):
                    try:
                        await self.proc.stdin.aclose()
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass
            with trio.move_on_after(SHUTDOWN_GRACE_S):
                await self.proc.wait()
            kill_group(self.proc.pid)
            await self.proc.wait()
            if self.tag:
                kill_tagged(self.tag)  # children that left the group
            if self.sandbox is not None:
                self.sandbox.sweep()  # its cgroups (empty by now) and its uid
            if self._cpu_tree is not None:
                self._cpu_tree.close()
            # Close our ends of stdout/stderr now: frees the fds at once and ends
            # the stderr drain even if a child that left the group holds the pipe.
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    await stream.aclose()
            self.dead = True
            GUARDIAN.release(self.proc.pid)


async def _drain(stream: trio.abc.ReceiveStream, bot: BotProcess) -> None:
    """Read stderr forever into a bounded tail (never let the pipe fill)."""
    try:
        while True:
            chunk = await stream.receive_some(65536)
            if not chunk:
                return
            bot.stderr_tail += chunk
            if len(bot.stderr_tail) > 2 * STDERR_TAIL:
                del bot.stderr_tail[:-STDERR_TAIL]
            bot.game_stderr += chunk
            if len(bot.game_stderr) > 2 * GAME_STDERR_KEEP:
                del bot.game_stderr[:-GAME_STDERR_KEEP]
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        return
    finally:
        bot.stderr_eof.set()


async def _let_in(box: SandboxedBot, proc: trio.Process) -> None:
    """bwrap waits at its gate (`sandbox.gate`) until the guardian knows the
    sandbox, as it does by now, and, with cgroup v2 groups, until its
    processes are in them. If they cannot be, nothing of the bot has run: the
    sandbox is killed and SandboxUnavailable raised (fail closed)."""
    assert box.gate is not None
    box.gate.spawned()
    if box.cgroup is None or not box.cgroup.referee_admits:
        box.gate.open()
        return
    try:
        if await trio.to_thread.run_sync(box.admit, proc.pid):
            return
    except SandboxUnavailable:
        with trio.CancelScope(shield=True):
            kill_group(proc.pid)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    await stream.aclose()
            await proc.wait()
            box.sweep()
            GUARDIAN.release(proc.pid)
        raise
    # bwrap ended before the gate opened: whatever is left goes, and the
    # handshake then reports bwrap's own words from its stderr.
    kill_group(proc.pid)


def _open_gate(proc: trio.Process) -> None:
    """Let a plain bot's program run (`_GATE`): the guardian knows it by now.
    One byte into an empty pipe always fits; if the shell is gone already,
    the handshake reports how it ended."""
    stdin = proc.stdin
    assert isinstance(stdin, trio.lowlevel.FdStream)
    try:
        os.write(stdin.fileno(), b"\n")
    except OSError:
        pass


async def start_bot(nursery: trio.Nursery, spec: BotSpec) -> BotProcess:
    """Start `spec` in its own process group (or its sandbox), owned by `nursery`.

    The caller must `await bot.close()` (which kills the group); if the
    nursery is cancelled first, the group is killed by `deliver_cancel`.
    Raises SandboxUnavailable if a sandbox was asked for and cannot be had.
    """
    box = None
    if spec.sandbox is not None:
        tag = ""
        box = plan(
            spec.argv,
            spec.cwd,
            spec.name,
            spec.sandbox,
            forbidden_paths([Path(p) for p in spec.hidden]),
            uuid.uuid4().hex,
        )
        # If this process dies, however it dies, the guardian empties and removes what its sandboxes left.
        GUARDIAN.clean_after([str(d.parent) for d in box.cgroup.dirs.values()] if box.cgroup else [], [str(stage())])
        argv, options = box.argv, box.spawn_options()
    else:
        tag = uuid.uuid4().hex
        argv = [*_GATE, *spec.argv]
        env = dict(spec.env) if spec.env is not None else dict(os.environ)
        options = {"process_group": 0, "cwd": spec.cwd, "env": {**env, TAG_VARIABLE: tag}}
    try:
        proc: trio.Process = await nursery.start(
            partial(
                trio.run_process,
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                check=False,
                deliver_cancel=partial(_deliver_cancel, tag=tag, box=box),
                **options,
            )
        )
    except (OSError, subprocess.SubprocessError) as exc:
        if box is not None:
            box.sweep()
            if box.cgroup is not None and "preexec_fn" in str(exc):  # join_self failed: nothing ran
                raise SandboxUnavailable(
                    f"cannot put bot {spec.name!r} into its cgroups: the new process could "
                    "not enter them, and was stopped before it ran bubblewrap"
                ) from exc
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BotStartError(f"cannot start bot {spec.name!r} ({shlex.join(spec.argv)}): {why}") from exc
    if box is not None:
        box.spawned()
    GUARDIAN.watch(proc.pid, tag)  # before the gate opens: a dying referee leaves no bot behind
    if box is not None:
        await _let_in(box, proc)
    else:
        _open_gate(proc)
    assert proc.stdout is not None and proc.stderr is not None
    bot = BotProcess(spec=spec, proc=proc, reader=LineReader(proc.stdout), tag=tag, sandbox=box)
    nursery.start_soon(_drain, proc.stderr, bot)
    return bot
