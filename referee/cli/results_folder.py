"""Where a tournament's results live, and what a run does to them.

The results database is `results/<config stem>/tournament.db` and the game
logs are in `results/<config stem>/logs/`, both next to the config file (so
re-running the same command resumes, from any current directory); with
`--db PATH` the logs default to `PATH-without-suffix-logs/`. `--fresh`
deletes what this referee wrote there, `--resume` needs it, and logs of
finished games beside a missing database are a lost database, refused.
"""

from __future__ import annotations

import re
from pathlib import Path

from referee.errors import RefereeError
from referee.tournament.store import Store

_OUR_FILES = re.compile(r"^\d{5}-.+\.(jsonl|jsonl\.part|html)$")


def default_paths(config: Path, db: Path | None, log_dir: Path | None) -> tuple[Path, Path]:
    """(database, log folder) for a config and the options given."""
    if db is None:
        folder = config.resolve().parent / "results" / config.stem
        return folder / "tournament.db", (log_dir or folder / "logs")
    return db, (log_dir or db.with_name(db.stem + "-logs"))


def ignore_in_git(db: Path, config: Path) -> None:
    """The default results folder is data, not source: keep it out of git."""
    results = config.resolve().parent / "results"
    if results in db.resolve().parents:
        ignore = results / ".gitignore"
        if not ignore.exists():
            results.mkdir(parents=True, exist_ok=True)
            ignore.write_text("# chicago-referee tournament results\n*\n")


def _fresh(db: Path, log_dir: Path) -> None:
    """--fresh: drop the database, its live stream and the game logs this referee wrote."""
    Store.remove(db)  # refuses while another referee runs it; works on a damaged file too
    from referee.live.stream import stream_paths

    for stream in stream_paths(db):  # the live stream of the games just dropped
        stream.unlink(missing_ok=True)
    if log_dir.is_dir():
        for p in log_dir.iterdir():
            if _OUR_FILES.match(p.name):
                p.unlink()


def _finished_logs(log_dir: Path) -> int:
    """Game logs of finished games (not `.part`) this referee wrote in `log_dir`."""
    if not log_dir.is_dir():
        return 0
    return sum(1 for p in log_dir.iterdir() if _OUR_FILES.match(p.name) and p.name.endswith(".jsonl"))


def refuse_lost_results(db: Path, log_dir: Path, finished_in_db: int) -> None:
    """An empty or missing database next to logs of finished games is a lost
    database, not a new tournament: starting over silently would hide it."""
    logs = _finished_logs(log_dir)
    if logs and not finished_in_db:
        state = "is empty" if db.exists() else "does not exist"
        raise RefereeError(
            f"{db} {state}, but {log_dir} holds {logs} finished game logs: the results database "
            "was lost or replaced. Restore it, or start again with --fresh (deletes those logs)"
        )


def check_results(db_path: Path, logs: Path, resume: bool | None) -> None:
    """--fresh clears the results; --resume needs them; neither keeps what is there."""
    if resume is False:
        _fresh(db_path, logs)
    elif resume is True and not db_path.exists():
        raise RefereeError(f"nothing to resume: {db_path} does not exist (run without --resume to start)")
    elif not db_path.exists():
        refuse_lost_results(db_path, logs, 0)


def resume_command(config: Path, db: Path | None, log_dir: Path | None, workers: int, cluster: str | None) -> list[str]:
    """The command line that resumes this tournament where it stopped."""
    cmd = ["chicago-referee", "tournament", str(config)]
    if db is not None:
        cmd += ["--db", str(db)]
    if log_dir is not None:
        cmd += ["--log-dir", str(log_dir)]
    if workers:
        cmd += ["--workers", str(workers)]
    if cluster:
        cmd += ["--cluster", cluster]
    return cmd + ["--resume"]
