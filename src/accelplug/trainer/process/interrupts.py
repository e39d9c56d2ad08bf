"""SIGTERM and SIGINT during ``fit``: finish the optimizer step, write a checkpoint, exit 143 or 130.

Schedulers (Slurm, Kubernetes) send SIGTERM some seconds before they kill a job, and Ctrl-C sends
SIGINT. While ``fit`` trains, :class:`SignalGuard` replaces the handlers of both (in the main thread
only; the previous handlers come back when ``fit`` ends). The handler only records the signal:

- one process: it sets ``should_stop`` with :attr:`~accelplug.trainer.state.StopReason.SIGNAL`, which the loop's
  existing per-batch stop check sees, so the fast path does no new work per step. The stop waits for
  the end of a gradient-accumulation window: the checkpoint is at an optimizer-step boundary.
- several processes (DDP): every rank must stop at the same step, or their collectives would no longer
  pair up, and a signal may reach only some of them. The flag rides on the all-reduce that already
  runs every ``log_every_n_steps`` (the step metrics, :func:`..loops.readback.read_step_metrics`), so all ranks
  learn of it at the same step; one more agreement when the loop ends covers a signal that came after
  the last logging step. No collective is added per step; the stop comes at most
  ``log_every_n_steps`` optimizer steps after the signal.

Then ``fit`` writes ``last.ckpt`` in the checkpoint folder (atomically; see :func:`checkpoint_target`),
the epoch's metrics are published and the loggers flushed and finalised as "interrupted",
``on_exception`` runs, and the process exits with 128 + the signal number after one line on stderr
that says where the checkpoint is and how to resume.

A second signal in a plain process stops at once (a ``KeyboardInterrupt``), even in the middle of the
save: the save is atomic, so the previous checkpoint stays intact. Under torchrun a repeated signal is
ignored, because the agent forwards the signal it received (Ctrl-C reaches a worker twice) and
enforces its own grace period with SIGKILL. A signal that comes too late to stop the loop (during
``on_fit_end``) is raised again, for the previous handler, when ``fit`` has ended.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import torch

from ..state import StopReason

if TYPE_CHECKING:
    from ..state import LoopState

__all__ = ["FitInterrupted", "SignalGuard", "checkpoint_target", "save_on_signal"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _flag(signum: int) -> str:
    """The key of a signal's stop flag in the logging step's all-reduce (no metric name starts with a NUL)."""
    return f"\x00stop:{signal.Signals(signum).name}"


class FitInterrupted(KeyboardInterrupt):
    """Carries an interrupted fit through the run's teardown; ``run_fit`` turns it into the exit."""

    def __init__(
        self,
        signum: int,
        *,
        step: int,
        path: Path | None = None,
        error: str | None = None,
        requeued: str | None = None,
    ) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.step = step
        self.path = path
        self.error = error
        self.aborted = False
        #: What requeueing the Slurm job said (the job id, or why it failed), for the requeue signal.
        self.requeued = requeued

    @property
    def exit_code(self) -> int:
        """128 + the signal number, the shell's convention: 143 for SIGTERM, 130 for SIGINT."""
        return 128 + self.signum

    def line(self) -> str:
        """The one line printed on stderr."""
        name = signal.Signals(self.signum).name
        if self.requeued is not None:
            saved = f"checkpoint saved to {self.path}" if self.path is not None else f"no checkpoint: {self.error}"
            return f"accelplug: {name}: stopped after step {self.step}; {saved}; {self.requeued}."
        if self.path is not None:
            how = f'resume with trainer.fit(..., ckpt_path="auto") or ckpt_path="{self.path}"'
            return f"accelplug: {name}: stopped after step {self.step}; checkpoint saved to {self.path}; {how}."
        if self.error is not None:
            return f"accelplug: {name}: stopped after step {self.step}; the checkpoint was not written: {self.error}"
        return (
            f"accelplug: {name} again: stopped at once, without writing a checkpoint (an earlier one, if any, is "
            'intact); resume with trainer.fit(..., ckpt_path="auto").'
        )


class SignalGuard:
    """Turns SIGTERM/SIGINT into a stop at the next step boundary all ranks agree on (a context manager)."""

    def __init__(self, state: LoopState, *, distributed: bool, repeat_aborts: bool, requeue: int | None = None) -> None:
        self.state = state
        #: The signals handled, in the order one is chosen when ranks received different ones; Slurm's
        #: requeue signal (``requeue``, see :mod:`.requeue`) last.
        self.signals: tuple[int, ...] = (*_SIGNALS, *([requeue] if requeue is not None else []))
        self.distributed = distributed
        self.repeat_aborts = repeat_aborts
        #: The first signal this process received.
        self.received: int | None = None
        #: The signal every rank stops for, once agreed.
        self.stopping: int | None = None
        self._previous: dict[int, Any] = {}
        #: ``should_stop``/``stop_reason`` before a signal set them (put back if the signal came too late).
        self._before: tuple[bool, StopReason | None] | None = None

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():  # signal.signal works only there
            for signum in self.signals:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        self._previous.clear()
        if kind is None and self.received is not None:
            # It came too late to stop the loop (after the last agreement, in on_fit_end): deliver it now
            # to the handler it was meant for, rather than swallow a scheduler's SIGTERM.
            if self._before is not None:
                self.state.should_stop, self.state.stop_reason = self._before
            signal.raise_signal(self.received)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
            if not self.distributed:
                self._stop(signum)
        elif self.repeat_aborts:
            self.repeat_aborts = False
            interrupted = FitInterrupted(signum, step=self.state.global_step)
            interrupted.aborted = True
            raise interrupted

    def _stop(self, signum: int) -> None:
        self._before = (self.state.should_stop, self.state.stop_reason)
        self.stopping = signum
        self.state.should_stop = True
        self.state.stop_reason = StopReason.SIGNAL

    # ---- agreeing across processes -------------------------------------------------------------------
    def flags(self) -> dict[str, torch.Tensor] | None:
        """This rank's stop flags for the logging step's all-reduce (None with one process)."""
        if not self.distributed:
            return None
        return {_flag(signum): torch.tensor(1.0 if self.received == signum else 0.0) for signum in self.signals}

    def agree(self, reduced: dict[str, float]) -> None:
        """Take the reduced flags out of ``reduced``; stop every rank when any rank received a signal."""
        raised = [signum for signum in self.signals if reduced.pop(_flag(signum), 0.0) > 0]
        if self.stopping is None and raised:
            self._stop(raised[0])

    def settle(self, reduce: Callable[[dict[str, torch.Tensor]], dict[str, float]]) -> int | None:
        """When the loop has ended: the signal all ranks stop for (one last agreement), or None.

        ``reduce`` averages the flags across processes (the loop's read-back, handed over so this module
        needs nothing of the loops).
        """
        flags = self.flags()
        if flags is not None and self.stopping is None:
            self.agree(reduce(flags))
        return self.stopping


# ---- the checkpoint --------------------------------------------------------------------------------
def checkpoint_target(trainer: Any) -> Path:
    """``last.ckpt`` in the checkpoint callback's folder, else in the run's ``checkpoints/`` folder.

    ``last.ckpt`` because it is the newest state of the run, the name Lightning users look for, and
    what ``ckpt_path="last"`` (in that folder) or ``"auto"`` (any folder of the run) then resume from.
    """
    callback = trainer.checkpoint_callback
    folder = callback.folder(trainer) if callback is not None else Path(trainer.log_dir) / "checkpoints"
    return Path(folder) / "last.ckpt"


def save_on_signal(trainer: Any, signum: int) -> FitInterrupted:
    """Write the interrupted run's checkpoint (every rank calls this; one writes) and say what happened.

    For Slurm's requeue signal the checkpoint is ``hpc_ckpt_N.ckpt`` and the job is requeued (:mod:`.requeue`).
    """
    from .requeue import requeue_signal

    environment = getattr(trainer, "_cluster_environment", None)
    if requeue_signal(environment) == signum:
        return _save_and_requeue(trainer, environment, signum)
    step = trainer.state.global_step
    target = checkpoint_target(trainer)
    try:
        path = trainer.save_checkpoint(target)
    except OSError as exc:  # a full disk: say so in the one line, the signal still ends the process
        return FitInterrupted(signum, step=step, error=str(exc))
    callback = trainer.checkpoint_callback
    if callback is not None:
        callback.last_model_path = path
    return FitInterrupted(signum, step=step, path=path)


def _save_and_requeue(trainer: Any, environment: Any, signum: int) -> FitInterrupted:
    """``hpc_ckpt_N.ckpt`` in ``default_root_dir`` (every rank calls this), then rank 0 requeues the job."""
    from .requeue import hpc_save_path

    step = trainer.state.global_step
    target = hpc_save_path(Path(trainer.default_root_dir))
    target = trainer.strategy.broadcast_object(target)  # rank 0 looked; every rank saves to the same name
    try:
        path: Path | None = trainer.save_checkpoint(target)
        error = None
    except OSError as exc:  # the requeue goes ahead: the job resumes from the previous checkpoint, if any
        path, error = None, str(exc)
    requeued = "rank 0 requeues the job"
    if trainer.is_global_zero:
        try:
            environment.requeue()
            requeued = f"requeued Slurm job {environment.requeue_job_id()}; it resumes from this checkpoint"
        except (RuntimeError, OSError, ValueError) as exc:
            requeued = f"requeueing failed: {exc}"
    return FitInterrupted(signum, step=step, path=path, error=error, requeued=requeued)
