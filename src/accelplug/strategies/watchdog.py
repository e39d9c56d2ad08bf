"""Naming a hung rank: a thread per rank that watches where the training thread is, not how fast it goes.

A rank that hangs (a deadlocked data loader, a stuck file system, ``time.sleep`` in a step) makes the
others wait in their next collective. gloo then fails only after the collective timeout
(``ACCELPLUG_DDP_TIMEOUT_S``), on a *waiting* rank, so the job's error blames the wrong one. torch has
no switch that says which rank a collective waits for: gloo's ``monitored_barrier`` names missing
ranks but is a collective of its own (one per step would cost far more than the loop's budget), and
the NCCL watchdog only enforces the same timeout. So this part is written by hand, and costs the
training loop nothing:

- every ``interval`` seconds (a tenth of the timeout, at most 5 s) a daemon thread samples the training
  thread's Python stack (``sys._current_frames``) and classifies it: *waiting* in a collective
  (torch.distributed, DDP's gradient all-reduce at the end of backward, accelplug's reductions),
  *busy* with work only some ranks do (writing a checkpoint, compiling), or *running* anything else;
- it publishes that, with how long the same collective call has been waiting, in the job's c10d store
  (the TCPStore torchrun serves at ``MASTER_ADDR:MASTER_PORT``), and reads the other ranks' reports;
- a rank that is *running* while another has waited ``ACCELPLUG_HANG_TIMEOUT_S`` seconds in one
  collective is the rank being waited for: it prints its stack, records the message in torchrun's
  error file and exits with :data:`HUNG_EXIT_CODE`; ``accelplug launch`` then names it and the agent
  stops the others at once;
- a rank whose watcher has gone silent (a frozen or suspended process, or one holding the GIL) is named
  by the lowest-ranked waiting rank, which ends the job the same way.

All ranks busy in long work (a slow step, a long validation) is not a hang: nobody waits in a
collective, so nothing happens. Only one rank making the others wait that long is.

The same thread ends a rank whose peer has *failed*. A rank that raises out of the training loop
publishes ``rank N failed: <error>`` in the store as it leaves; every other rank's watcher looks for it
every :data:`FAILURE_POLL_S` seconds and, on seeing it, prints it, records it in torchrun's error file
and exits with :data:`PEER_FAILED_EXIT_CODE`. This is what ends a job on NCCL in about a second: there
a rank blocked in a collective whose peer is gone never returns to Python (NCCL does not notice a dead
peer over NVLink or shared memory before the collective timeout), so a SIGTERM from the agent only
sets the flag of Python's handler, which would run after the collective, and torchrun waits its grace
period before killing it. A thread can act meanwhile: torch releases the GIL while it waits. Out of
memory and the tuner's own stop are not published (a caller may recover from them).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from types import FrameType, TracebackType
from typing import Any

from ..envvars import env_float

__all__ = [
    "DEFAULT_HANG_TIMEOUT_S",
    "FAILURE_POLL_S",
    "HANG_TIMEOUT_ENV",
    "HUNG_EXIT_CODE",
    "PEER_FAILED_EXIT_CODE",
    "HangWatchdog",
    "Report",
    "classify",
    "find_hung",
    "hang_timeout",
]

HANG_TIMEOUT_ENV = "ACCELPLUG_HANG_TIMEOUT_S"
#: Well under the 300 s collective timeout: on a CPU job ranks drift apart by milliseconds per step,
#: and the one-rank work that legitimately takes long (writing a checkpoint, compiling) is exempt, so
#: a minute of one rank making the others wait is a hang, found 4 minutes sooner.
DEFAULT_HANG_TIMEOUT_S = 60.0
#: Exit code of a rank ended by the watchdog (``timeout(1)``'s code for "timed out").
HUNG_EXIT_CODE = 124
#: Exit code of a rank that stopped because another rank failed (the job's cause is that rank's error).
PEER_FAILED_EXIT_CODE = 125
#: How often each rank's watcher looks for a peer's failure in the store (one small request).
FAILURE_POLL_S = 0.2

WAITING, BUSY, RUNNING = "waiting", "busy", "running"

_COLLECTIVE_FILES = ("torch/distributed/", "torch/nn/parallel/distributed.py", "accelplug/strategies/ddp.py")
#: ``_engine_run_backward``: DDP's gradient all-reduce is waited for at the end of backward, inside
#: autograd's engine. ``reduce_to_floats``: a CUDA read-back of reduced values waits for NCCL there.
_COLLECTIVE_FUNCTIONS = frozenset({"_engine_run_backward", "reduce_to_floats"})
_BUSY_FILES = {
    "accelplug/checkpoint/file.py": "writing a checkpoint",
    "accelplug/checkpoint/": "waiting for a checkpoint write",
    "torch/_dynamo/": "compiling",
    "torch/_inductor/": "compiling",
}


def hang_timeout() -> float | None:
    """``ACCELPLUG_HANG_TIMEOUT_S`` (default 60 s; 0 turns the watchdog off), read when a fit starts."""
    value = env_float(HANG_TIMEOUT_ENV, DEFAULT_HANG_TIMEOUT_S, minimum=0.0, maximum=7 * 24 * 3600.0)
    return value or None


# ---- what a stack says -----------------------------------------------------------------------------
def classify(stack: list[tuple[str, str, int]]) -> tuple[str, str]:
    """``(WAITING | BUSY | RUNNING, where)`` for a stack given innermost first as ``(file, function, line)``."""
    if not stack:
        return RUNNING, "an unknown place"
    frames = [(file.replace(os.sep, "/"), function, line) for file, function, line in stack]
    for file, _function, _line in frames:
        for part, what in _BUSY_FILES.items():
            if part in file:
                return BUSY, what
    file, function, line = frames[0]
    where = f"{function} ({os.path.basename(file)}:{line})"
    if function in _COLLECTIVE_FUNCTIONS or any(part in file for part in _COLLECTIVE_FILES):
        return WAITING, where
    return RUNNING, where


@dataclass(frozen=True)
class Report:
    """One rank's latest report, as another rank reads it."""

    rank: int
    state: str
    #: Seconds the current collective call has been waiting (0 unless ``state`` is WAITING).
    waited_s: float
    where: str
    step: int
    #: Seconds since this rank's watcher last reported, measured by the reader (0 for itself).
    silent_s: float = 0.0


def find_hung(me: int, reports: dict[int, Report], timeout: float, fresh_s: float) -> tuple[list[int], list[int]]:
    """``(hung ranks, ranks waiting for them)`` when rank ``me`` must end the job, else two empty lists.

    ``me`` acts when it is running while another rank has waited ``timeout`` in one collective (it is
    the rank they wait for), or when it is the lowest-ranked of those waiting and a rank has gone
    silent, or still runs ``fresh_s`` after it should have ended itself.
    """
    waiters = sorted(
        r for r, rep in reports.items() if rep.state == WAITING and rep.waited_s >= timeout and rep.silent_s <= fresh_s
    )
    if not waiters or me not in reports:
        return [], []
    if reports[me].state == RUNNING:
        return [me], waiters
    if me != waiters[0]:
        return [], []
    silent = [r for r, rep in reports.items() if r != me and rep.silent_s >= max(timeout / 2, 3 * fresh_s)]
    overdue = [
        r
        for r, rep in reports.items()
        if r != me and rep.state == RUNNING and rep.silent_s <= fresh_s and reports[me].waited_s >= timeout + fresh_s
    ]
    culprits = sorted(set(silent) | set(overdue))
    return (culprits, waiters) if culprits else ([], [])


# ---- the thread ------------------------------------------------------------------------------------
class HangWatchdog:
    """A context manager: a daemon thread watches the entering thread while the block runs."""

    def __init__(
        self, *, rank: int, world_size: int, timeout: float, progress: Callable[[], int], generation: int = 0
    ) -> None:
        self.rank = rank
        self.world_size = world_size
        self.timeout = timeout
        self.progress = progress
        self.interval = min(5.0, max(0.2, timeout / 10))
        restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
        self.prefix = f"accelplug/watchdog/{os.environ.get('TORCHELASTIC_RUN_ID', '')}/{restart}/{generation}/"
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._wait_frame: FrameType | None = None
        self._wait_step = -1
        self._wait_since = 0.0
        self._seen: dict[int, tuple[int, float]] = {}

    def __enter__(self) -> HangWatchdog:
        self._thread = threading.Thread(target=self._run, name="accelplug-hang-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is not None and _ends_the_job(exc):
            self._publish_failure(exc)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 1.0)
        self._wait_frame = None

    # ---- one sample ----------------------------------------------------------------------------------
    def sample(self) -> tuple[Report, list[str]]:
        """This rank's report and its training thread's stack (formatted), as of now."""
        frame = sys._current_frames().get(self._target)
        stack: list[tuple[str, str, int]] = []
        cursor = frame
        while cursor is not None and len(stack) < 200:
            stack.append((cursor.f_code.co_filename, cursor.f_code.co_name, cursor.f_lineno or 0))
            cursor = cursor.f_back
        state, where = classify(stack)
        step = self.progress()
        now = time.monotonic()
        if state != WAITING or frame is None:
            self._wait_frame = None
        elif frame is not self._wait_frame or step != self._wait_step:
            # A new collective call. The frame object is kept so that a later call cannot be mistaken for
            # this one (a freed frame's id is soon reused by the next call).
            self._wait_frame, self._wait_step, self._wait_since = frame, step, now
        waited = now - self._wait_since if self._wait_frame is not None else 0.0
        lines = traceback.format_stack(frame) if frame is not None else []
        del frame, cursor
        return Report(self.rank, state, waited, where, step), lines

    # ---- the loop --------------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            store = self._connect()
        except Exception as exc:  # the watchdog is a diagnosis: never let it break training
            warnings.warn(
                f"accelplug: the hang watchdog is off for this fit (the job's store at {_store_address()} cannot be "
                f"reached: {exc}); a hung rank then ends the job only after ACCELPLUG_DDP_TIMEOUT_S.",
                RuntimeWarning,
                stacklevel=1,
            )
            return
        seq = 0
        next_report = 0.0
        while True:
            try:
                if time.monotonic() >= next_report:
                    report, stack = self.sample()
                    seq += 1
                    store.set(self.prefix + str(self.rank), json.dumps({"seq": seq, **report.__dict__}))
                    reports = self._read(store)
                    reports[self.rank] = report
                    hung, waiters = find_hung(self.rank, reports, self.timeout, fresh_s=3 * self.interval + 1.0)
                    if hung and not self._stop.is_set():
                        self._end_job(hung, waiters, reports, stack)
                    next_report = time.monotonic() + self.interval
                failed = self._peer_failure(store)
            except Exception:  # the store went away: the job is ending anyway
                return
            if failed is not None and not self._stop.is_set():
                self._end_for_peer(failed)
            if self._stop.wait(FAILURE_POLL_S):
                return

    def _connect(self) -> Any:
        host, port = _store_address().rsplit(":", 1)
        return _store_client(host, int(port), timedelta(seconds=max(10.0, 2 * self.interval)))

    def _read(self, store: Any) -> dict[int, Report]:
        """The other ranks' latest reports, with how long each has been silent (measured here)."""
        now = time.monotonic()
        reports: dict[int, Report] = {}
        for rank in range(self.world_size):
            if rank == self.rank:
                continue
            key = self.prefix + str(rank)
            if not store.check([key]):
                continue
            data = json.loads(store.get(key))
            seq = int(data.pop("seq"))
            last_seq, since = self._seen.get(rank, (-1, now))
            if seq != last_seq:
                self._seen[rank] = (seq, now)
                since = now
            data.pop("silent_s", None)
            reports[rank] = Report(**data, silent_s=now - since)
        return reports

    # ---- a peer that failed ---------------------------------------------------------------------------
    def _publish_failure(self, exc: BaseException) -> None:
        """Tell the other ranks that this one leaves on ``exc`` (the first rank to fail is the one named)."""
        text = f"{type(exc).__name__}: {exc}".strip().splitlines()
        record = json.dumps({"rank": self.rank, "error": (text[0] if text else type(exc).__name__)[:300]})
        try:
            host, port = _store_address().rsplit(":", 1)
            store = _store_client(host, int(port), timedelta(seconds=5))
            store.compare_set(self.prefix + "failed", "", record)  # the first failure wins
        except Exception:  # the store is gone: nobody is left to tell
            pass

    def _peer_failure(self, store: Any) -> dict[str, Any] | None:
        """Another rank's published failure, or None."""
        key = self.prefix + "failed"
        if not store.check([key]):
            return None
        failure: dict[str, Any] = json.loads(store.get(key))
        return None if failure.get("rank") == self.rank else failure

    def _end_for_peer(self, failure: dict[str, Any]) -> None:
        report, _stack = self.sample()
        doing = f"while waiting at {report.where}" if report.state == WAITING else f"at {report.where}"
        message = (
            f"rank {failure['rank']} failed ({failure['error']}); rank {self.rank} stopped {doing} instead of waiting "
            "for it."
        )
        sys.stdout.flush()
        sys.stderr.write(f"accelplug: {message}\n")
        sys.stderr.flush()
        _record_error(message)
        os._exit(PEER_FAILED_EXIT_CODE)

    def _end_job(self, hung: list[int], waiters: list[int], reports: dict[int, Report], stack: list[str]) -> None:
        waited = max(reports[r].waited_s for r in waiters)
        who = ", ".join(map(str, waiters))
        if hung == [self.rank]:
            mine = reports[self.rank]
            message = (
                f"rank {self.rank} is hung: rank(s) {who} waited {waited:.0f} s for it in a collective while it was "
                f"at {mine.where} (step {mine.step}); ending the job (ACCELPLUG_HANG_TIMEOUT_S={self.timeout:g})."
            )
            details = "".join(["its stack:\n", *stack])
        else:
            silent = ", ".join(f"rank {r} ({_describe(reports[r])})" for r in hung)
            message = (
                f"{silent} stopped responding while rank(s) {who} waited {waited:.0f} s in a collective; rank "
                f"{self.rank} ends the job (ACCELPLUG_HANG_TIMEOUT_S={self.timeout:g})."
            )
            details = ""
        sys.stdout.flush()
        sys.stderr.write(f"accelplug: {message}\n{details}")
        sys.stderr.flush()
        _record_error(message)
        os._exit(HUNG_EXIT_CODE)


def _describe(report: Report) -> str:
    if report.state == RUNNING:
        return f"still running at {report.where} instead of ending itself"
    return f"its watchdog silent for {report.silent_s:.0f} s: frozen, suspended, or holding the GIL"


def _ends_the_job(exc: BaseException) -> bool:
    """An exception leaving the loop that the other ranks must hear of: not an interrupt, the tuner's stop or
    running out of memory (which a batch-size search catches and retries)."""
    from ..errors import TunerExit

    if not isinstance(exc, Exception) or isinstance(exc, TunerExit):
        return False
    import torch

    return not isinstance(exc, torch.OutOfMemoryError) and "out of memory" not in str(exc)


def _store_client(host: str, port: int, timeout: timedelta) -> Any:
    from torch.distributed import TCPStore  # type: ignore[attr-defined]

    return TCPStore(host, port, is_master=False, timeout=timeout, wait_for_workers=False)


def _store_address() -> str:
    return f"{os.environ.get('MASTER_ADDR', '127.0.0.1')}:{os.environ.get('MASTER_PORT', '29500')}"


def _record_error(message: str) -> None:
    """Write torchrun's error file for this worker, so the agent (and ``accelplug launch``) reports it."""
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        return
    data = {
        "message": {
            "message": message,
            "extraInfo": {"py_callstack": "", "timestamp": str(int(time.time())), "host": socket.gethostname()},
        }
    }
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
    except OSError:
        pass
