"""Expected errors that stop a command together are said once: the same
failure from several games, and the same refusal from several cluster
workers, which stop a run in the same moment when each holds a batch."""

from __future__ import annotations

import pytest
import typer

from referee.cli.common import error_lines, expected_errors
from referee.errors import ClusterError, ConfigError

DIFFERS = "bot 'alice.v1' at /builds/5d5c differs from the coordinator's copy (sha256 e07c here, 78bc there)"


def test_the_same_refusal_from_two_workers_is_one_line_naming_both() -> None:
    errors: list[BaseException] = [
        ClusterError(f"worker wA: {DIFFERS}"),
        ClusterError(f"worker wB: {DIFFERS}"),
        ClusterError(f"worker wA: {DIFFERS}"),  # a second game of the same batch
    ]
    assert error_lines(errors) == [f"workers wA, wB: {DIFFERS}"]


def test_one_worker_and_different_failures_keep_their_own_lines() -> None:
    other = "bot 'bob.v2': no such file; every worker needs the bots at the same paths as the coordinator"
    errors: list[BaseException] = [
        ClusterError(f"worker wA: {DIFFERS}"),
        ClusterError(f"worker wB: {other}"),
        ConfigError("worker wC: not a cluster error, so its text is kept whole"),
    ]
    assert error_lines(errors) == [
        f"worker wA: {DIFFERS}",
        f"worker wB: {other}",
        "worker wC: not a cluster error, so its text is kept whole",
    ]


def test_a_run_stopped_by_two_workers_prints_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    @expected_errors
    def run() -> None:
        raise ExceptionGroup(
            "two units",
            [ExceptionGroup("a unit", [ClusterError(f"worker wA: {DIFFERS}")]), ClusterError(f"worker wB: {DIFFERS}")],
        )

    with pytest.raises(typer.Exit) as stopped:
        run()
    assert stopped.value.exit_code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert lines == [f"error: workers wA, wB: {DIFFERS}"]
