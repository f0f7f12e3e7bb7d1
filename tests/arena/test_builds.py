"""Builds in the sandbox: real builds of real bots, the conformance check on
what they built, and builds that misbehave (no network, no host files, the
wall clock, the output cap, the process limit), kept small for the machine."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import trio
from needs import needs_sandbox
from paths import ROOT
from proctools import procs_with, wait_no_procs
from timing import scaled

from referee.arena import builds as builds_module
from referee.arena.archives import ArchiveLimits, pack_folder
from referee.arena.builds import BuildResult, build, recorded_build, run_spec
from referee.arena.config import BuildLimits
from referee.arena.kits import KITS, kit_files
from referee.games import get_game
from referee.play.check import check_bot
from referee.seats.cgroups import GROUP_PREFIX
from referee.seats.clock import DEFAULT_TIME_CONTROL, parse_time_control
from referee.seats.sandbox import SandboxLimits, probe_host
from referee.seats.sandbox.files import stage

pytestmark = needs_sandbox

LIMITS = BuildLimits(wall_seconds=50, memory_mib=1024, processes=128, output_bytes=1 << 20)
C_SAMPLE = ROOT / "sample_bots" / "c" / "chicago_bot.c"
JS_SAMPLE = ROOT / "sample_bots" / "js" / "chicago_bot.js"
PY_SAMPLE = ROOT / "sample_bots" / "python" / "random_bot.py"  # check wants every decision kind made
MAKEFILE = "bot: chicago_bot.c\n\tcc -O2 -std=c99 -o bot chicago_bot.c\n"
GO_BOT = r"""package main

import (
	"bufio"
	"encoding/json"
	"os"
)

// Answers request N with legal action N mod len(legal): every kind of decision comes up.
func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var msg struct {
			Type  string            `json:"type"`
			ID    int               `json:"id"`
			Legal []json.RawMessage `json:"legal"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			continue
		}
		switch msg.Type {
		case "hello":
			out.WriteString(`{"type":"hello","name":"go-bot","version":"1.0"}` + "\n")
		case "request":
			action := msg.Legal[msg.ID%len(msg.Legal)]
			reply, _ := json.Marshal(map[string]interface{}{"type": "action", "id": msg.ID, "action": action})
			out.Write(append(reply, '\n'))
		case "bye":
			out.Flush()
			return
		}
		out.Flush()
	}
}
"""

JAVA_BOT = r"""import java.io.*;

// Answers request N with legal action N mod len(legal), copied as it came.
public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith("{\"type\":\"hello\"")) {
                out.println("{\"type\":\"hello\",\"name\":\"java-bot\",\"version\":\"1.0\"}");
            } else if (line.startsWith("{\"type\":\"bye\"")) {
                return;
            } else if (line.startsWith("{\"type\":\"request\"")) {
                int at = line.indexOf("\"id\":") + 5;
                long id = Long.parseLong(line.substring(at, line.indexOf(',', at)));
                java.util.List<String> legal = new java.util.ArrayList<>();
                int depth = 0, start = line.indexOf("\"legal\":[") + 9;
                boolean quoted = false;
                for (int i = start; depth >= 0; i++) {
                    char c = line.charAt(i);
                    if (quoted) { if (c == '\\') i++; else if (c == '"') quoted = false; continue; }
                    if (c == '"') quoted = true;
                    else if (c == '{' || c == '[') depth++;
                    else if (c == '}' || c == ']') depth--;
                    if ((c == ',' && depth == 0) || depth < 0) { legal.add(line.substring(start, i)); start = i + 1; }
                }
                String action = legal.get((int) (id % legal.size()));
                out.println("{\"type\":\"action\",\"id\":" + id + ",\"action\":" + action + "}");
            }
        }
    }
}
"""
JAVA_TOML = """build = "javac -d classes Main.java && jar --create --file bot.jar --main-class Main -C classes ."
run = "java -XX:+UseSerialGC -jar bot.jar"
"""


def needs_tool(name: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        shutil.which(name, path="/usr/local/bin:/usr/bin:/bin") is None, reason=f"{name} is not installed"
    )


class Arena:
    """An arena folder and bot folders packed into its archives/."""

    def __init__(self, base: Path) -> None:
        self.folder = base / "arena"
        (self.folder / "archives").mkdir(parents=True)
        self.sources = base / "sources"
        self.sources.mkdir()

    def bot(self, **files: str | Path) -> Path:
        """A bot folder of these files (text, or a file to copy), names with `/` allowed."""
        folder = self.sources / uuid.uuid4().hex[:8]
        for name, content in files.items():
            path = folder / name.replace("__", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copy(content, path)
            else:
                path.write_text(content)
        return folder

    def submit(self, folder: Path) -> tuple[Path, str]:
        data = pack_folder(folder, ArchiveLimits())
        sha256 = hashlib.sha256(data).hexdigest()
        archive = self.folder / "archives" / sha256
        archive.write_bytes(data)
        return archive, sha256

    def build(self, folder: Path, limits: BuildLimits = LIMITS) -> BuildResult:
        archive, sha256 = self.submit(folder)
        return build(archive, sha256, self.folder, limits, ArchiveLimits())


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    yield Arena(tmp_path)
    # Nothing of a build outlives it: its working copy, its cgroups.
    assert not list((stage() / "builds").glob("*"))
    groups = [p / f"{GROUP_PREFIX}-{os.getpid()}-build-" for p in set(probe_host().cgroups.parents.values())]
    assert not [g for g in groups for _ in g.parent.glob(f"{g.name}*")]


def built_files(result: BuildResult) -> dict[str, int]:
    """name -> mode of everything in the built folder (and that it is root's, when root)."""
    assert result.folder is not None
    found = {}
    for path in sorted(result.folder.rglob("*")):
        info = path.lstat()
        assert stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode), path
        if os.geteuid() == 0:
            assert info.st_uid == 0, path
        found[str(path.relative_to(result.folder))] = stat.S_IMODE(info.st_mode)
    return found


async def passes_check(result: BuildResult, name: str) -> None:
    """The referee's conformance check, on the built bot, in the game sandbox."""
    spec = run_spec(result, name, SandboxLimits())
    assert spec.cwd == str(result.folder)
    report = await check_bot(spec, get_game("chicago"), parse_time_control(DEFAULT_TIME_CONTROL), sandbox=spec.sandbox)
    assert report.ok, report.problems


async def test_a_python_bot_needs_no_build_and_passes_the_check(arena: Arena) -> None:
    result = await trio.to_thread.run_sync(arena.build, arena.bot(**{"main.py": PY_SAMPLE}))
    assert result.ok and result.reason is None and result.log_path is None
    assert result.recipe is not None and result.recipe.source == "detected main.py"
    assert built_files(result) == {"main.py": 0o644}
    assert run_spec(result, "py", SandboxLimits()).argv == ("python3", "-u", str(result.folder / "main.py"))
    await passes_check(result, "random")


@needs_tool("cc")
@needs_tool("make")
async def test_the_c_sample_builds_with_its_makefile_and_passes_the_check(arena: Arena) -> None:
    folder = arena.bot(**{"chicago_bot.c": C_SAMPLE, "Makefile": MAKEFILE})
    result = await trio.to_thread.run_sync(arena.build, folder)
    assert result.ok, result.reason
    assert result.recipe is not None and (result.recipe.build, result.recipe.run) == ("make", ("./bot",))
    assert built_files(result) == {"Makefile": 0o644, "bot": 0o755, "chicago_bot.c": 0o644}
    assert result.log_path is not None and "cc -O2 -std=c99" in result.log_path.read_text()
    assert run_spec(result, "c", SandboxLimits()).argv == (str(result.folder / "bot"),)
    await passes_check(result, "c-random")


@needs_tool("go")
async def test_a_go_bot_of_the_standard_library_builds_offline_and_passes_the_check(arena: Arena) -> None:
    folder = arena.bot(**{"go.mod": "module example.com/bot\n\ngo 1.18\n", "main.go": GO_BOT})
    result = await trio.to_thread.run_sync(arena.build, folder)
    assert result.ok, result.reason
    assert result.recipe is not None and result.recipe.language == "go"
    assert built_files(result)["bot"] == 0o755
    await passes_check(result, "go-bot")


@needs_tool("go")
def test_a_go_bot_that_needs_a_module_from_the_network_fails_to_build(arena: Arena) -> None:
    go_mod = "module example.com/bot\n\ngo 1.18\n\nrequire github.com/google/uuid v1.6.0\n"
    main = 'package main\n\nimport "github.com/google/uuid"\n\nfunc main() { println(uuid.NewString()) }\n'
    result = arena.build(arena.bot(**{"go.mod": go_mod, "main.go": main}))
    assert not result.ok and result.reason is not None
    assert result.reason.startswith("build failed (exit 1): ")
    assert "GOPROXY=off" in result.reason or "github.com/google/uuid" in result.reason


@needs_tool("javac")
@needs_tool("jar")
async def test_a_java_bot_builds_with_its_bot_toml_and_passes_the_check(arena: Arena) -> None:
    result = await trio.to_thread.run_sync(arena.build, arena.bot(**{"Main.java": JAVA_BOT, "bot.toml": JAVA_TOML}))
    assert result.ok, result.reason
    assert built_files(result)["bot.jar"] == 0o644
    await passes_check(result, "java-bot")


@needs_tool("node")
def test_the_javascript_sample_needs_no_build(arena: Arena) -> None:
    result = arena.build(arena.bot(**{"main.js": JS_SAMPLE}))
    assert result.ok and result.recipe is not None and result.recipe.run == ("node", "main.js")
    assert built_files(result) == {"main.js": 0o644}


@needs_tool("cc")
def test_a_c_bot_that_does_not_compile_fails_with_the_compilers_line(arena: Arena) -> None:
    result = arena.build(arena.bot(**{"main.c": "int main(void) {\n  return 0\n}\n"}))
    assert not result.ok and result.folder is None
    assert result.reason is not None and result.reason.startswith("build failed (exit 1): main.c:2:")
    assert "error:" in result.reason and "\n" not in result.reason
    assert result.log_path is not None and "error:" in result.log_path.read_text()
    assert not (arena.folder / "builds" / result.log_path.stem).exists()


def test_a_missing_toolchain_is_named(arena: Arena) -> None:
    result = arena.build(arena.bot(**{"bot.toml": 'build = "rustcc-nowhere -o bot main.rs"\nrun = "./bot"\n'}))
    assert result.reason == "build failed (exit 127): rustcc-nowhere not found in the sandbox"
    result = arena.build(arena.bot(**{"bot.toml": 'run = "rubyish-nowhere bot.rb"\n', "bot.rb": ""}))
    assert result.reason == "rubyish-nowhere not found in the sandbox: `run` cannot start the bot there"


@needs_tool("make")
def test_a_compiler_make_cannot_find_is_named(arena: Arena) -> None:
    result = arena.build(arena.bot(Makefile="bot:\n\tnowhere-cc -o bot bot.c\n"))
    assert result.reason == "build failed (exit 2): nowhere-cc not found in the sandbox"


@pytest.mark.skipif(
    shutil.which("cargo", path="/usr/local/bin:/usr/bin:/bin") is not None, reason="cargo is a system package here"
)
def test_a_rust_bot_fails_clearly_when_cargo_is_not_a_system_package(arena: Arena) -> None:
    cargo = '[package]\nname = "bot"\nversion = "0.1.0"\nedition = "2021"\n'
    result = arena.build(arena.bot(**{"Cargo.toml": cargo, "src__main.rs": "fn main() {}\n"}))
    assert result.reason == "build failed (exit 127): cargo not found in the sandbox"


@needs_tool("cargo")
async def test_a_rust_bot_of_the_standard_library_builds_with_cargo_offline_and_passes_the_check(arena: Arena) -> None:
    # The Rust starter kit's crate without its bot.toml: found by its Cargo.toml, built by cargo, not rustc alone.
    crate = {name.replace("/", "__"): content.decode() for name, content in kit_files(KITS["rust"])}
    del crate["bot.toml"]
    result = await trio.to_thread.run_sync(arena.build, arena.bot(**crate))
    assert result.ok, result.reason
    assert result.recipe is not None and result.recipe.source == "detected Cargo.toml"
    assert result.recipe.run == ("target/release/rust-starter",)
    assert result.log_path is not None and "cargo build --release --offline" in result.log_path.read_text()
    assert built_files(result)["target/release/rust-starter"] == 0o755
    await passes_check(result, "rust-starter")


def test_a_build_has_no_network(arena: Arena) -> None:
    connect = "import socket; socket.create_connection(('1.1.1.1', 80), timeout=2)"
    result = arena.build(arena.bot(**{"bot.toml": f'build = "python3 -c \\"{connect}\\""\nrun = "./x"\n'}))
    assert not result.ok and result.reason is not None and "unreachable" in result.reason
    result = arena.build(arena.bot(**{"bot.toml": 'build = "getent hosts example.com"\nrun = "./x"\n'}))
    assert result.reason == "build failed (exit 2): the build printed nothing"


def test_a_build_cannot_touch_the_host(arena: Arena) -> None:
    marker = uuid.uuid4().hex[:12]
    targets = [Path(tempfile.gettempdir()) / f"escape-{marker}", Path.home() / f"x-{marker}", Path(f"/etc/x-{marker}")]
    tries = "; ".join(f"echo x > {t}" for t in targets)
    toml = f'build = "{tries}; ln -s /etc/passwd secrets; ln -s /etc bot; true"\nrun = "./bot"\n'
    result = arena.build(arena.bot(**{"bot.toml": toml}))
    for target in targets:
        assert not target.exists(), target
    # What it made of links is not kept, and a link is not a program: the game sandbox never follows one.
    assert result.reason == "the build did not leave ./bot, which `run` starts, as a file in the bot's folder"


def test_a_build_is_killed_at_the_wall_clock_and_leaves_no_process(arena: Arena) -> None:
    marker = f"{uuid.uuid4().int % 1000}.{os.getpid()}"
    toml = f'build = "sleep 7{marker} & sleep 8{marker}"\nrun = "./bot"\n'
    result = arena.build(arena.bot(**{"bot.toml": toml}), replace(LIMITS, wall_seconds=3))
    assert result.reason == "build took longer than 3 s"
    assert 3 <= result.seconds < scaled(15)
    assert wait_no_procs(f"sleep\0{7}{marker}") == [] and procs_with(f"sleep\0{8}{marker}") == []
    assert result.log_path is not None and result.log_path.read_text().endswith(
        "[stopped: build took longer than 3 s]\n"
    )


def test_output_past_the_cap_is_cut_and_the_build_goes_on(arena: Arena) -> None:
    toml = 'build = "yes 0123456789 | head -c 1000000; echo done > bot; chmod +x bot"\nrun = "./bot"\n'
    result = arena.build(arena.bot(**{"bot.toml": toml}), replace(LIMITS, output_bytes=64 << 10))
    assert result.ok, result.reason
    assert result.log_path is not None
    log = result.log_path.read_bytes()
    assert log.endswith(b"\n[output cut at 64 KiB]\n")
    assert len(log) < (64 << 10) + 200


def test_a_fork_bomb_is_held_at_the_process_limit(arena: Arena) -> None:
    marker = f"3{uuid.uuid4().int % 1000}.5"
    toml = f'build = "for i in $(seq 200); do sleep {marker} & done; exit 1"\nrun = "./bot"\n'
    try:
        result = arena.build(arena.bot(**{"bot.toml": toml}), replace(LIMITS, processes=32, wall_seconds=20))
    finally:
        left = wait_no_procs(f"sleep\0{marker}")
        for pid in left:
            os.kill(pid, 9)
    assert left == []
    # The shell gives up at its first refused fork. A pids cgroup says it refused; rlimits alone, the shell's words.
    said = r"(reached its limit of|could not start more than) 32 processes and threads"
    assert re.fullmatch(rf"build failed \(exit \d+\): the build {said}", result.reason or ""), result.reason
    assert result.log_path is not None and "Cannot fork" in result.log_path.read_text()


def test_a_build_over_its_memory_is_stopped(arena: Arena) -> None:
    toml = 'build = "python3 -c \\"x = bytearray(400 << 20); print(len(x))\\""\nrun = "./bot"\n'
    result = arena.build(arena.bot(**{"bot.toml": toml}), replace(LIMITS, memory_mib=128))
    assert result.reason is not None and "memory" in result.reason


def test_a_second_build_of_the_same_archive_is_the_recorded_one(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = arena.bot(**{"bot.toml": 'build = "echo built > bot.txt"\nrun = "python3 main.py"\n', "main.py": ""})
    first = arena.build(folder)
    assert first.ok and first.log_path is not None
    logged = first.log_path.stat().st_mtime_ns
    monkeypatch.setattr(builds_module, "_build", lambda *args: pytest.fail("built again"))
    again = arena.build(folder)
    assert again == first
    assert first.log_path.stat().st_mtime_ns == logged
    _archive, sha256 = arena.submit(folder)
    assert recorded_build(arena.folder, sha256) == first


async def test_two_builds_of_one_archive_at_once_build_it_once(arena: Arena) -> None:
    folder = arena.bot(
        **{"bot.toml": 'build = "sleep 1; date +%s%N > built.txt"\nrun = "python3 main.py"\n', "main.py": ""}
    )
    results: list[BuildResult] = []

    async def one() -> None:
        results.append(await trio.to_thread.run_sync(arena.build, folder))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one)
        nursery.start_soon(one)
    assert results[0] == results[1] and results[0].ok
    _archive, sha256 = arena.submit(folder)
    names = sorted(p.name for p in (arena.folder / "builds").iterdir())
    assert names == [sha256, f"{sha256}.json", f"{sha256}.log"]  # no temporary file or part left


def test_failures_are_recorded_too(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = arena.bot(README="no bot here\n")
    first = arena.build(folder)
    assert not first.ok and first.reason is not None and "looked for" in first.reason and first.recipe is None
    monkeypatch.setattr(builds_module, "_build", lambda *args: pytest.fail("built again"))
    assert arena.build(folder) == first


def test_a_build_killed_midway_is_run_again_cleanly(arena: Arena) -> None:
    folder = arena.bot(**{"bot.toml": 'build = "echo built > out.txt"\nrun = "python3 main.py"\n', "main.py": ""})
    _archive, sha256 = arena.submit(folder)
    builds = arena.folder / "builds"
    (builds / sha256).mkdir(parents=True)  # what a build killed while it installed leaves: no record
    (builds / sha256 / "half-written").write_text("x")
    (builds / f"{sha256}.log").write_text("an old log\n")
    result = arena.build(folder)
    assert result.ok, result.reason
    assert built_files(result) == {"bot.toml": 0o644, "main.py": 0o644, "out.txt": 0o644}
    assert result.log_path is not None and not result.log_path.read_text().startswith("an old log")


def test_a_hostile_archive_is_a_failed_build(arena: Arena) -> None:
    archive = arena.folder / "archives" / ("0" * 64)
    archive.write_bytes(b"this is no archive")
    result = build(archive, "0" * 64, arena.folder, LIMITS, ArchiveLimits())
    assert not result.ok and result.reason is not None and result.recipe is None and result.log_path is None


def test_a_bot_in_one_folder_of_the_archive_is_found(arena: Arena) -> None:
    result = arena.build(arena.bot(**{"mybot__main.py": PY_SAMPLE}))
    assert result.ok and built_files(result) == {"main.py": 0o644}


def test_run_spec_refuses_a_failed_build(arena: Arena) -> None:
    failed = BuildResult(False, "build failed (exit 2): boom", None, None, None, 1.0)
    with pytest.raises(Exception, match="has no build to run: build failed"):
        run_spec(failed, "x", SandboxLimits())


def test_a_build_uses_its_own_uid_when_root(arena: Arena) -> None:
    if os.geteuid() != 0:
        pytest.skip("as a user, a build runs as that user")
    toml = 'build = "id -u > uid.txt; touch /bot/written"\nrun = "python3 main.py"\n'
    result = arena.build(arena.bot(**{"bot.toml": toml, "main.py": ""}))
    assert result.ok and result.folder is not None
    uid = int((result.folder / "uid.txt").read_text())
    assert uid >= 2_100_000_000
