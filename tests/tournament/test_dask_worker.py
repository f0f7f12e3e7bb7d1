"""What a Dask worker does with the games it gets, called as Dask calls it
(`run_jobs`, in a thread, no cluster needed): every game in one long-lived
Trio loop, a game refused or failed alone in its batch, and a bot whose
files change between two games refused at the next one, however cheap the
check of an unchanged bot has become."""

from __future__ import annotations

import os
import re
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from proctools import wait_no_procs
from tournament_runs import coordinator_jobs, det_bot_folder

from referee.errors import ClusterError, ConfigError
from referee.tournament.bot_files import check_same_files, files_digest
from referee.tournament.game_job import GameJob, PlayedGame
from referee.tournament.worker import GAMES, run_jobs

DIFFERS = r"bot 'a' at .*bot differs from the coordinator's copy"


def _loop_threads() -> list[threading.Thread]:
    return [th for th in threading.enumerate() if th.name == "chicago-referee-games"]


def test_every_game_a_worker_gets_is_played_in_one_loop_and_a_file_changed_between_games_is_refused(
    tmp_path: Path,
) -> None:
    marker = f"loopmark-{uuid.uuid4().hex}"
    bot_dir = det_bot_folder(tmp_path)
    jobs = coordinator_jobs(tmp_path, marker)
    assert len(jobs) >= 3
    with ThreadPoolExecutor(2) as threads:  # as a Dask worker with 2 threads calls it
        played = [p for batch in threads.map(lambda job: run_jobs([job], sys.executable), jobs[:2]) for p in batch]
    assert all(isinstance(p, PlayedGame) for p in played), played
    assert all(p.record.decisions > 0 and not p.record.failures for p in played if isinstance(p, PlayedGame))
    assert all(isinstance(p, PlayedGame) and p.log_zlib for p in played)
    assert {p.record.game_id for p in played if isinstance(p, PlayedGame)} == {j.game.game_id for j in jobs[:2]}
    assert len(_loop_threads()) == 1, "each game started a Trio loop of its own"
    loop = _loop_threads()[0]
    # Edited on this worker between two games (same size, so only the contents and times differ).
    lib = bot_dir / "_botlib.py"
    text = lib.read_text()
    lib.write_text(text[:-1] + ("#" if text[-1] != "#" else " "))
    [refused] = run_jobs([jobs[2]], sys.executable)
    assert isinstance(refused, ClusterError) and re.search(DIFFERS, str(refused)), refused
    assert wait_no_procs(marker) == []  # refused before any bot started
    lib.write_text(text)  # put back: the same files again, the game is played
    assert _game_id(run_jobs([jobs[2]], sys.executable)[0]) == jobs[2].game.game_id
    assert _loop_threads() == [loop]


def _game_id(result: PlayedGame | Exception) -> str:
    assert isinstance(result, PlayedGame), result
    return result.record.game_id


def test_a_game_refused_or_failed_in_a_batch_fails_alone_and_its_batch_mates_are_played(tmp_path: Path) -> None:
    marker = f"loopmark-{uuid.uuid4().hex}"
    det_bot_folder(tmp_path)
    jobs = coordinator_jobs(tmp_path, marker)
    assert len(jobs) >= 4
    (bot, _digest, folder), other = jobs[1].bot_digests[0], jobs[1].bot_digests[1:]
    not_ours = replace(jobs[1], bot_digests=((bot, "0" * 64, folder), *other))  # the coordinator's copy differs
    unknown_game = replace(jobs[2], game_name="no-such-game")  # fails while being played, not when checked
    results = run_jobs([jobs[0], not_ours, unknown_game, jobs[3]], sys.executable)
    assert len(results) == 4
    assert _game_id(results[0]) == jobs[0].game.game_id and _game_id(results[3]) == jobs[3].game.game_id
    differs = rf"bot '{bot}' at .*bot differs from the coordinator's copy"
    assert isinstance(results[1], ClusterError) and re.search(differs, str(results[1])), results[1]
    assert isinstance(results[2], ConfigError) and "no-such-game" in str(results[2]), results[2]
    assert wait_no_procs(marker) == []


@pytest.mark.parametrize("change", ["added", "removed", "edited in place", "replaced", "folder renamed away"])
def test_a_checked_bot_is_checked_again_when_any_of_its_files_changes(tmp_path: Path, change: str) -> None:
    bot_dir = det_bot_folder(tmp_path)
    (bot_dir / "sub").mkdir()
    (bot_dir / "sub" / "data.txt").write_text("weights 1\n")
    argv = ("det_bot.py",)
    want = files_digest(argv, str(bot_dir), str(bot_dir))
    check_same_files("a", argv, str(bot_dir), str(bot_dir), want, "w1")
    check_same_files("a", argv, str(bot_dir), str(bot_dir), want, "w1")  # the cached answer
    data = bot_dir / "sub" / "data.txt"
    if change == "added":
        (bot_dir / "sub" / "more.txt").write_text("x")
    elif change == "removed":
        data.unlink()
    elif change == "edited in place":
        st = data.stat()
        data.write_text("weights 2\n")
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: only ctime tells
    elif change == "replaced":
        (bot_dir / "sub" / "new.txt").write_text("weights 3\n")
        os.replace(bot_dir / "sub" / "new.txt", data)
    else:
        os.rename(bot_dir, tmp_path / "elsewhere")
    with pytest.raises(ClusterError, match=r"worker w1: bot 'a'"):
        check_same_files("a", argv, str(bot_dir), str(bot_dir), want, "w1")


def test_a_bot_named_by_its_command_is_checked_again_when_its_script_changes(tmp_path: Path) -> None:
    script = tmp_path / "bot.py"
    script.write_text("print('v1')\n")
    argv = (sys.executable, "-u", str(script))
    want = files_digest(argv, None, None)
    check_same_files("s", argv, None, None, want, "w2")
    check_same_files("s", argv, None, None, want, "w2")
    script.write_text("print('v2')\n")
    with pytest.raises(ClusterError, match=r"worker w2: bot 's' at .*bot\.py differs"):
        check_same_files("s", argv, None, None, want, "w2")
    script.write_text("print('v1')\n")
    check_same_files("s", argv, None, None, want, "w2")  # the same contents again: played


def test_the_loop_survives_a_game_that_fails(tmp_path: Path) -> None:
    marker = f"loopmark-{uuid.uuid4().hex}"
    det_bot_folder(tmp_path)
    job = coordinator_jobs(tmp_path, marker)[0]
    broken = GameJob(**{**job.__dict__, "game_name": "no-such-game"})
    [failed] = GAMES.play([broken], {"name": "w"})
    assert isinstance(failed, Exception) and "no-such-game" in repr(failed), failed  # maybe in a group
    assert _game_id(run_jobs([job], sys.executable)[0]) == job.game.game_id
    assert len(_loop_threads()) == 1
