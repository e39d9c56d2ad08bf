"""The last line of ``accelplug launch`` names the rank that failed, whatever order the agent saw the exits in."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

from accelplug.launcher import _failure_line
from accelplug.strategies.watchdog import PEER_FAILED_EXIT_CODE


def _failure(tmp_path: Path, rank: int, exitcode: int, message: str | None = None) -> ProcessFailure:
    error_file = tmp_path / f"error{rank}.json"
    if message is not None:  # what a worker's watchdog records (accelplug.strategies.watchdog._record_error)
        record = {"message": {"message": message, "extraInfo": {"py_callstack": "", "timestamp": "1"}}}
        error_file.write_text(json.dumps(record))
    return ProcessFailure(local_rank=rank, pid=100 + rank, exitcode=exitcode, error_file=str(error_file))


def test_a_survivor_that_left_first_gives_the_failed_ranks_error_not_its_own_exit(tmp_path: Path) -> None:
    said = "rank 1 failed (RuntimeError: boom); rank 0 stopped while waiting at all_reduce instead of waiting for it."
    failures = {
        0: _failure(tmp_path, 0, PEER_FAILED_EXIT_CODE, said),
        1: _failure(tmp_path, 1, -signal.SIGTERM),  # still exiting when the agent stopped it
    }
    _rank, code, line = _failure_line(ChildFailedError("train.py", failures), 0)
    assert line.startswith(f"accelplug launch: {said}"), line
    assert code == PEER_FAILED_EXIT_CODE


def test_the_rank_that_failed_on_its_own_is_named_before_those_stopped_for_it(tmp_path: Path) -> None:
    failures = {
        0: _failure(tmp_path, 0, -signal.SIGTERM),
        1: _failure(tmp_path, 1, 1),
        2: _failure(tmp_path, 2, PEER_FAILED_EXIT_CODE, "rank 1 failed (ValueError: x); rank 2 stopped ..."),
    }
    _rank, code, line = _failure_line(ChildFailedError("train.py", failures), 0)
    assert line.startswith("accelplug launch: rank 1 failed (exit code 1)"), line
    assert code == 1
