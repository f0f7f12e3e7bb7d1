"""Bot processes: start, talk line by line, drain stderr, and kill for sure.

Each bot runs in its own process group inside a Trio nursery. stdout has
exactly one reader with a maximum line length; stderr is always drained into
a bounded tail (a bot that floods stderr can never block on a full pipe). At
the end the bot gets `bye`, its stdin is closed, it has a short grace period
to exit, and then its whole process group is killed. A child that left the
group (a new session) is found by the tag every bot process carries in its
environment, which its children inherit, and killed too.

A spec with `sandbox` limits runs in a sandbox instead (`seats/sandbox.py`):
its own namespaces, identity, files and limits, and a session whose group
kill takes the whole sandbox down. It waits behind a gate until the guardian
knows it and, where it has cgroup v2 groups, until its processes are in
them (`seats/sandbox/gate.py`).
"""

from __future__ import annotations

import errno
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import NoReturn

import trio

from referee.bots import BUILTIN_BOTS, BuiltinBot
from referee.errors import BotCrashed, BotStartError, ProtocolViolation, SandboxUnavailable
from referee.seats.cputime import ProcessTreeCpu
from referee.seats.guardian import GUARDIAN, TAG_VARIABLE
from referee.seats.sandbox import SandboxedBot, SandboxLimits, forbidden_paths, plan
from referee.seats.sandbox.files import stage

MAX_LINE = 256 * 1024
READ_SIZE = 65536
MAX_READS_WITHOUT_YIELD = 16
LINES_WITHOUT_YIELD = 4
STDERR_TAIL = 8 * 1024
SHUTDOWN_GRACE_S = 0.5
GAME_STDERR_KEEP = 1 << 20  # the last 1 MB of each game's stderr is kept beside its log


@dataclass(frozen=True)
class BotSpec:
    """A bot as the user names it: a label and the argv that starts it; with
    `sandbox` limits it runs isolated, and `hidden` names paths of the run
    (logs, config, results) its visible folder must not contain."""

    name: str
    argv: tuple[str, ...]
    cwd: str | None = None
    sandbox: SandboxLimits | None = None
    hidden: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] | None = None  # unsandboxed: this environment instead of the referee's


def resolve_command(command: str | Sequence[str], name: str | None = None, cwd: str | None = None,
                    sandbox: SandboxLimits | None = None) -> BotSpec:
    """Split like a shell; run `.py` with this Python (in a sandbox: the system
    Python of the same version) and `.js` with node. A first word that is a
    built-in bot's name (`pimc`, `greedy`, ...: `referee.bots`) runs that bot,
    its options after it (`pimc --budget-ms 100`); a word with a `/` is always
    a path, so a file of the same name is `./pimc`."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError as exc:  # an unbalanced quote
        raise BotStartError(f"bot command {command!r} cannot be split into words: {exc}; "
                            "check its quotes") from None
    if not argv:
        raise BotStartError("empty bot command")
    first = argv[0]
    builtin = BUILTIN_BOTS.get(first)
    if builtin is not None:
        return BotSpec(name=name or builtin.name, argv=_builtin_argv(builtin, argv[1:]), cwd=cwd, sandbox=sandbox)
    base = Path(cwd) if cwd else Path.cwd()
    path = Path(first) if Path(first).is_absolute() else base / first
    words = list(argv)  # as written: the name comes from these
    if first.endswith(".py"):
        argv = [sys.executable, "-u", first, *argv[1:]]
    elif first.endswith(".js"):
        node = shutil.which("node") or shutil.which("nodejs")
        if node is None:
            raise BotStartError(f"cannot run {first}: node (Node.js) is not installed")
        argv = [node, first, *argv[1:]]
    elif path.is_dir():
        raise BotStartError(f"bot {first!r} is a directory; give the program to run")
    named = _named_after(words)
    label = name or Path(named).stem or named
    return BotSpec(name=label, argv=tuple(argv), cwd=cwd, sandbox=sandbox)


def _builtin_argv(bot: BuiltinBot, options: Sequence[str] = ()) -> tuple[str, ...]:
    """This Python running the bot's module. `-P`: the working folder is not
    put on the module path, so a `referee/` folder there cannot stand in for
    the installed one."""
    return (sys.executable, "-u", "-P", "-m", bot.module, *options)


# Interpreter options whose value is the next word, and the option after
# which the next word is the program (`java -jar my.jar`, `python -m pkg.bot`).
_OPTIONS_WITH_VALUE = {"-W", "-X", "-cp", "-classpath", "--class-path", "-r", "--require"}
_PROGRAM_OPTIONS = {"-jar", "-m"}
_INLINE_PROGRAM = {"-c", "-e", "--eval"}  # the program is text on the command line: named after the interpreter


def _named_after(words: Sequence[str]) -> str:
    """The word a command is named after: the script, jar or module an
    interpreter runs (`python3 -u mybot.py` is `mybot`, `java -jar my.jar`
    is `my`, `python -m pkg.bot` is `bot`), else the program itself."""
    first = words[0]
    if not _is_interpreter(first):
        return first
    i = 1
    while i < len(words):
        word = words[i]
        if word in _PROGRAM_OPTIONS and i + 1 < len(words):
            following = words[i + 1]
            return following.rsplit(".", 1)[-1] if word == "-m" else following
        if word in _INLINE_PROGRAM:
            return first
        if word == "--":
            return words[i + 1] if i + 1 < len(words) else first
        if not word.startswith("-"):
            return word
        i += 2 if word in _OPTIONS_WITH_VALUE else 1
    return first


def _is_interpreter(word: str) -> bool:
    name = Path(word).name
    return name in ("node", "nodejs", "ruby", "perl", "java") or re.fullmatch(r"python[0-9.]*", name) is not None


def check_runnable(spec: BotSpec, label: str | None = None) -> None:
    """Fail before the first game, naming the bot, when its program cannot run:
    a missing script or program, a file without its exec bit, a folder.
    (A typo would otherwise lose every game of the match.)"""
    who = label or spec.name
    argv, cwd = list(spec.argv), Path(spec.cwd) if spec.cwd else Path.cwd()
    script = True
    if len(argv) > 2 and argv[1] == "-u" and argv[2].endswith(".py") and "python" in Path(argv[0]).name:
        target = argv[2]  # a .py script run with a Python
    elif len(argv) > 1 and Path(argv[0]).name.startswith("node") and argv[1].endswith(".js"):
        target = argv[1]
    else:
        target, script = argv[0], False
    if not script and "/" not in target:
        if shutil.which(target) is None:
            raise BotStartError(f"{who}: {target!r} is not a program on the PATH")
        return
    path = Path(target) if Path(target).is_absolute() else cwd / target
    if not path.exists():
        near = [p.name for p in (path.with_suffix(s) for s in (".py", ".js")) if p.exists() and p != path]
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise BotStartError(f"{who}: {target} does not exist{hint} (looked in {path.parent})")
    if path.is_dir():
        raise BotStartError(f"{who}: {target} is a folder; give the program to run")
    if not script and not os.access(path, os.X_OK):
        raise BotStartError(f"{who}: {target} is not executable: chmod +x {target}, or name its interpreter "
                            f"(e.g. \"python3 {target}\")")


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


def _io_error(exc: OSError) -> trio.ClosedResourceError | trio.BrokenResourceError:
    """The error trio's own pipe stream would raise for a failed read or write."""
    if exc.errno == errno.EBADF:
        return trio.ClosedResourceError("file was already closed")
    return trio.BrokenResourceError(str(exc))


class LineReader:
    """Splits a byte stream into lines, refusing lines over `max_len` bytes.

    On a pipe (a stream with `fileno`) it reads the fd directly and yields to
    trio only to wait for data: trio's `receive_some` adds a scheduler round
    trip to every read, and each one delays the referee's next request. Lines
    served from the buffer (a bot that writes many lines at once) yield every
    `LINES_WITHOUT_YIELD` lines, so a flooding bot cannot starve other games.
    """

    def __init__(self, stream: trio.abc.ReceiveStream, max_len: int = MAX_LINE) -> None:
        self._stream = stream
        self._fileno = getattr(stream, "fileno", None)
        self._buf = bytearray()
        self._max_len = max_len
        self._scan = 0
        self._unyielded = 0  # reads served without yielding to other tasks
        self._buffered_lines = 0  # lines served from the buffer without yielding
        self._poll: select.poll | None = None  # made on first use by `ready_lines`

    async def _receive_some(self) -> bytes:
        if self._fileno is None:
            return await self._stream.receive_some(READ_SIZE)
        if self._unyielded >= MAX_READS_WITHOUT_YIELD:  # stay fair to other tasks
            self._unyielded = 0
            await trio.lowlevel.checkpoint()
        while True:
            fd = self._fileno()
            try:
                chunk = os.read(fd, READ_SIZE)
            except BlockingIOError:
                self._unyielded = 0
                await trio.lowlevel.wait_readable(fd)
                continue
            except OSError as exc:
                raise _io_error(exc) from exc
            self._unyielded += 1
            return chunk

    def _take_line(self) -> bytes | None:
        """The next complete line in the buffer, if there is one within the limit."""
        i = self._buf.find(b"\n", self._scan)
        if 0 <= i <= self._max_len:  # a longer line, newline or not, is refused by `receive_line`
            line = bytes(self._buf[:i])
            del self._buf[: i + 1]
            self._scan = 0
            return line[:-1] if line.endswith(b"\r") else line
        self._scan = len(self._buf)
        return None

    def ready_lines(self, max_bytes: int, max_lines: int) -> list[bytes]:
        """The complete lines the bot has written so far, taken without waiting
        (at most about `max_bytes` read, at most `max_lines` taken; the rest
        stays buffered). Called before a request is sent: no line written
        before it can be the answer to it."""
        fd = self._fileno() if self._fileno is not None else -1
        if fd >= 0:  # a pipe still open (else only what is buffered)
            if self._poll is None:
                self._poll = select.poll()
                self._poll.register(fd, select.POLLIN)
            while len(self._buf) < max_bytes and self._poll.poll(0):  # poll: no exception when empty
                try:
                    chunk = os.read(fd, READ_SIZE)
                except OSError:  # nothing after all (or broken: `receive_line` will say so)
                    break
                if not chunk:
                    break
                self._buf += chunk
        if not self._buf:
            return []  # the usual case: nothing was written
        lines: list[bytes] = []
        while len(lines) < max_lines and (line := self._take_line()) is not None:
            lines.append(line)
        return lines

    async def receive_line(self) -> bytes:
        while True:
            if self._buf:
                if self._buffered_lines >= LINES_WITHOUT_YIELD:  # many lines at once: stay fair
                    self._buffered_lines = 0
                    await trio.lowlevel.checkpoint()
                line = self._take_line()
                if line is not None:
                    self._buffered_lines += 1
                    return line
            if len(self._buf) > self._max_len:
                head = bytes(self._buf[:200])
                raise ProtocolViolation(
                    f"line longer than {self._max_len} bytes without a newline",
                    detail=head.decode("utf-8", "replace"),
                    reason="line_too_long",
                )
            try:
                chunk = await self._receive_some()
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise BotCrashed("bot's stdout broke") from exc
            if not chunk:
                partial_line = bytes(self._buf[:200]).decode("utf-8", "replace")
                raise BotCrashed("bot closed stdout (exited?)", detail=partial_line)
            if not self._buf and chunk.find(b"\n") == len(chunk) - 1 and len(chunk) <= self._max_len + 1:
                # The usual case, one whole line: no copy through the buffer.
                self._buffered_lines = 0
                return bytes(chunk[:-2] if chunk.endswith(b"\r\n") else chunk[:-1])
            self._buf += chunk


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
    stderr_bytes: int = 0
    dead: bool = False
    closed: bool = False
    stderr_eof: trio.Event = field(default_factory=trio.Event)
    late_id: int = 0  # the last request that timed out unanswered: a reply to it is late, not wrong
    _unsent: bytearray = field(default_factory=bytearray)  # written when the pipe has room
    _cpu_tree: ProcessTreeCpu | None = None  # without a CPU-accounting cgroup: /proc

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

    def send_nowait(self, data: bytes) -> bool:
        """Write `data` at once if the pipe has room (it nearly always has):
        True. Otherwise the rest is queued for `flush` (which also reports a
        broken pipe): False."""
        if not self._unsent:
            stdin = self.proc.stdin
            assert stdin is not None
            try:
                n = os.write(stdin.fileno(), data)
            except OSError:  # full, or broken: `flush` retries and says which
                n = 0
            if n == len(data):
                return True
            data = data[n:]
        self._unsent += data
        return False

    async def send(self, data: bytes) -> None:
        """Write `data`: at once when the pipe has room, else as room appears."""
        if not self.send_nowait(data):
            await self.flush()

    async def flush(self) -> None:
        """Write what `send` could not yet. Cancelled while the pipe is full,
        the rest stays queued for the next `flush`: nothing is sent twice."""
        stdin = self.proc.stdin
        assert stdin is not None
        while self._unsent:
            try:
                n = os.write(stdin.fileno(), self._unsent)
            except BlockingIOError:
                try:
                    await trio.lowlevel.wait_writable(stdin.fileno())
                except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                    await self._broken(exc)
                continue
            except OSError as exc:
                await self._broken(_io_error(exc))
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
            bot.stderr_bytes += len(chunk)
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


async def start_bot(nursery: trio.Nursery, spec: BotSpec) -> BotProcess:
    """Start `spec` in its own process group (or its sandbox), owned by `nursery`.

    The caller must `await bot.close()` (which kills the group); if the
    nursery is cancelled first, the group is killed by `deliver_cancel`.
    Raises SandboxUnavailable if a sandbox was asked for and cannot be had.
    """
    box = None
    if spec.sandbox is not None:
        tag = ""
        box = plan(spec.argv, spec.cwd, spec.name, spec.sandbox, forbidden_paths([Path(p) for p in spec.hidden]),
                   uuid.uuid4().hex)
        # If this process dies, however it dies, the guardian empties and removes what its sandboxes left.
        GUARDIAN.clean_after([str(d.parent) for d in box.cgroup.dirs.values()] if box.cgroup else [], [str(stage())])
        argv, options = box.argv, box.spawn_options()
    else:
        tag = uuid.uuid4().hex
        argv = list(spec.argv)
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
                raise SandboxUnavailable(f"cannot put bot {spec.name!r} into its cgroups: the new process could "
                                         "not enter them, and was stopped before it ran bubblewrap") from exc
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BotStartError(f"cannot start bot {spec.name!r} ({shlex.join(spec.argv)}): {why}") from exc
    if box is not None:
        box.spawned()
    GUARDIAN.watch(proc.pid, tag)  # before the gate opens: a dying referee leaves no bot behind
    if box is not None:
        await _let_in(box, proc)
    assert proc.stdout is not None and proc.stderr is not None
    bot = BotProcess(spec=spec, proc=proc, reader=LineReader(proc.stdout), tag=tag, sandbox=box)
    nursery.start_soon(_drain, proc.stderr, bot)
    return bot
