"""The hang watchdog's two decisions, on made-up stacks and reports (the real thing: test_launch_faults).

Which state a stack shows (waiting in a collective, busy with one-rank work, running), and which rank
ends the job given every rank's report. Plus the sampler on this very thread.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
import torch

from accelplug.errors import TunerExit
from accelplug.strategies.watchdog import (
    BUSY,
    RUNNING,
    WAITING,
    HangWatchdog,
    Report,
    _ends_the_job,
    classify,
    find_hung,
)

SITE = "/venv/lib/python3.11/site-packages"


@pytest.mark.parametrize(
    ("innermost", "state"),
    [
        ((f"{SITE}/torch/distributed/distributed_c10d.py", "all_reduce", 2900), WAITING),
        ((f"{SITE}/torch/autograd/graph.py", "_engine_run_backward", 979), WAITING),  # DDP's gradient all-reduce
        ((f"{SITE}/torch/nn/parallel/distributed.py", "_pre_forward", 1500), WAITING),
        (("/repo/src/accelplug/trainer/loops/_readback.py", "reduce_to_floats", 47), WAITING),  # a CUDA read-back
        (("/home/me/train.py", "training_step", 12), RUNNING),
        ((f"{SITE}/torch/utils/data/dataloader.py", "_next_data", 700), RUNNING),  # a stuck loader is a hang
    ],
)
def test_the_innermost_frame_says_whether_a_rank_waits_for_the_others(
    innermost: tuple[str, str, int], state: str
) -> None:
    outer = [("/repo/src/accelplug/trainer/loops/fit.py", "run_epoch", 99), ("/home/me/train.py", "<module>", 40)]
    assert classify([innermost, *outer])[0] == state


def test_one_rank_work_anywhere_on_the_stack_is_busy_not_hung() -> None:
    stack = [
        ("/usr/lib/python3.11/zipfile.py", "write", 10),
        ("/repo/src/accelplug/checkpoint/file.py", "atomic_save", 79),
        ("/repo/src/accelplug/trainer/loops/fit.py", "run_epoch", 99),
    ]
    assert classify(stack) == (BUSY, "writing a checkpoint")
    assert classify([(f"{SITE}/torch/_inductor/compile_fx.py", "compile", 1), *stack[2:]]) == (BUSY, "compiling")


def test_where_names_the_function_file_and_line() -> None:
    assert classify([("/home/me/train.py", "training_step", 12)]) == (RUNNING, "training_step (train.py:12)")


def _report(rank: int, state: str, waited: float = 0.0, silent: float = 0.0) -> Report:
    return Report(rank, state, waited, "somewhere (x.py:1)", 3, silent)


def test_the_running_rank_others_waited_for_ends_the_job_itself() -> None:
    reports = {0: _report(0, WAITING, 61), 1: _report(1, RUNNING), 2: _report(2, WAITING, 60.5)}
    assert find_hung(1, reports, 60, fresh_s=6) == ([1], [0, 2])
    assert find_hung(0, reports, 60, fresh_s=6) == ([], []), "a waiter leaves it to the hung rank"
    assert find_hung(2, reports, 60, fresh_s=6) == ([], [])


def test_nobody_is_named_before_the_timeout_or_when_everyone_waits_or_works() -> None:
    assert find_hung(1, {0: _report(0, WAITING, 59), 1: _report(1, RUNNING)}, 60, fresh_s=6) == ([], [])
    everyone_waits = {0: _report(0, WAITING, 300), 1: _report(1, WAITING, 300)}  # a long collective
    assert find_hung(0, everyone_waits, 60, fresh_s=6) == ([], [])
    everyone_works = {0: _report(0, RUNNING), 1: _report(1, RUNNING)}  # a slow step on every rank
    assert find_hung(0, everyone_works, 60, fresh_s=6) == ([], [])


def test_a_rank_writing_a_checkpoint_while_the_others_wait_is_not_hung() -> None:
    reports = {0: _report(0, BUSY), 1: _report(1, WAITING, 120)}
    assert find_hung(0, reports, 60, fresh_s=6) == ([], [])
    assert find_hung(1, reports, 60, fresh_s=6) == ([], [])


def test_a_silent_rank_is_named_by_the_lowest_waiting_rank() -> None:
    reports = {0: _report(0, WAITING, 70), 1: _report(1, RUNNING, silent=45), 2: _report(2, WAITING, 70)}
    assert find_hung(0, reports, 60, fresh_s=6) == ([1], [0, 2])
    assert find_hung(2, reports, 60, fresh_s=6) == ([], []), "one rank reports it, not every waiter"


def test_a_stale_waiting_report_does_not_count() -> None:
    reports = {0: _report(0, WAITING, 100, silent=30), 1: _report(1, RUNNING)}
    assert find_hung(1, reports, 60, fresh_s=6) == ([], [])


def test_the_sampler_times_one_collective_call_and_restarts_the_clock_for_the_next() -> None:
    step = [0]
    watchdog = HangWatchdog(rank=0, world_size=2, timeout=10.0, progress=lambda: step[0])
    inside = threading.Event()
    read_end, write_end = os.pipe()

    def _engine_run_backward() -> None:  # named like autograd's, and blocked in C as it would be
        inside.set()
        os.read(read_end, 1)

    worker = threading.Thread(target=_engine_run_backward)
    worker.start()
    inside.wait(10)
    watchdog._target = worker.ident  # type: ignore[assignment]
    first, _ = watchdog.sample()
    time.sleep(0.3)
    second, stack = watchdog.sample()
    os.write(write_end, b"x")
    worker.join()
    os.close(read_end)
    os.close(write_end)
    assert first.state == second.state == WAITING
    assert second.waited_s >= 0.25 > first.waited_s
    assert any("os.read(read_end, 1)" in line for line in stack), "the stack is the watched thread's"
    step[0] = 1  # a new step: a new call, even if the frame looked the same
    watchdog._wait_frame = None
    assert watchdog.sample()[0].waited_s == 0.0


def test_every_accelplug_file_the_watchdog_names_exists() -> None:
    """The watchdog tells work from waiting by file path; a moved module must move its entry too."""
    from accelplug.strategies import watchdog

    src = Path(watchdog.__file__).resolve().parents[2]
    named = [p for p in (*watchdog._COLLECTIVE_FILES, *watchdog._BUSY_FILES) if p.startswith("accelplug/")]
    assert named
    assert all((src / p).exists() for p in named), [p for p in named if not (src / p).exists()]


def test_the_first_failure_is_published_for_the_other_ranks_and_not_read_back_by_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import timedelta

    from torch.distributed import TCPStore  # type: ignore[attr-defined]

    store = TCPStore("127.0.0.1", 0, 1, is_master=True, timeout=timedelta(seconds=10), wait_for_workers=False)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(store.port))
    failed, other, later = (HangWatchdog(rank=r, world_size=3, timeout=60, progress=lambda: 0) for r in (1, 0, 2))
    assert other._peer_failure(store) is None
    failed._publish_failure(RuntimeError("rank 1 crashes\nsecond line of the message"))
    later._publish_failure(ValueError("a consequence, after the cause"))
    assert other._peer_failure(store) == {"rank": 1, "error": "RuntimeError: rank 1 crashes"}
    assert later._peer_failure(store) == {"rank": 1, "error": "RuntimeError: rank 1 crashes"}
    assert failed._peer_failure(store) is None, "a rank does not stop for its own failure"


def test_what_a_caller_may_recover_from_is_not_a_failure_of_the_job() -> None:
    assert _ends_the_job(RuntimeError("boom"))
    assert not _ends_the_job(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"))
    assert not _ends_the_job(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried... out of memory"))
    assert not _ends_the_job(TunerExit())
    assert not _ends_the_job(KeyboardInterrupt())
