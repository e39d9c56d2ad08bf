"""Where a run stands: the counters callbacks read, and why the last fit stopped.

One object, owned by the Trainer and handed to its loops, so the loops never reach into the
Trainer's private fields and the Trainer's public properties (``global_step``, ``current_epoch``,
``should_stop``...) are views of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["LoopState", "Stage", "StopReason"]


class Stage(str, Enum):
    """What the Trainer is doing (Lightning's ``trainer.state.stage`` values)."""

    FITTING = "fit"
    SANITY_CHECKING = "sanity_check"
    VALIDATING = "validate"
    TESTING = "test"
    PREDICTING = "predict"


class StopReason(str, Enum):
    """Why a fit ended, recorded so a user (and the start-up/summary lines) can tell."""

    MAX_STEPS = "max_steps reached"
    MAX_EPOCHS = "max_epochs reached"
    MAX_TIME = "max_time reached"
    REQUESTED = "a callback or the module set trainer.should_stop"
    SIGNAL = "stopped by a signal"
    NON_FINITE_LOSS = "the loss was not finite"
    FAST_DEV_RUN = "fast_dev_run finished"


@dataclass
class LoopState:
    global_step: int = 0
    current_epoch: int = 0
    should_stop: bool = False
    stop_reason: StopReason | None = None
    #: What the Trainer is doing now (``validate`` inside a fit, ``sanity_check``...).
    stage: Stage | None = None
    #: The Trainer method running (Lightning's ``trainer.state.fn``): ``fit`` throughout a fit, its validation included.
    fn: Stage | None = None
    #: Batches of the current epoch consumed (restored on resume to skip them).
    batches_done: int = 0
    #: Whether the current epoch's training batches are all done (and its epoch-end work is pending or done).
    epoch_done: bool = False
    #: Whether the loop left the current epoch (its end hooks ran, or it stopped inside it): Lightning then
    #: counts the epoch as completed, so ``trainer.current_epoch`` shows the next one.
    epoch_left: bool = False
    #: Whether the epoch-level schedulers stepped for the finished epoch.
    epoch_schedulers_done: bool = False
    #: Random-number state at the start of the current epoch (a resume replays the epoch's shuffle).
    epoch_start_rng: dict[str, Any] | None = None
    #: The latest value of every metric the module or the loop reported, as floats.
    callback_metrics: dict[str, Any] = field(default_factory=dict)
    #: What went to the loggers last (Lightning's ``logged_metrics``).
    logged_metrics: dict[str, float] = field(default_factory=dict)
    #: What the progress bar shows (``self.log(..., prog_bar=True)`` values and the loss).
    progress_bar_metrics: dict[str, float] = field(default_factory=dict)
    #: ``compile=...``: seconds the first training step of the last fit took, torch.compile's work included.
    compile_seconds: float | None = None
    #: The loaders of the last calls as this process iterates them, with their batch counts after the limits,
    #: by "train", "val", "test", "predict" (a loader and a count, or lists of them).
    data: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: During a fit: makes (once) and returns the training loader and what remakes it.
    train_source: Callable[[], tuple[Any, Callable[[], Any] | None]] | None = None
    #: Whether the training batch being processed is its epoch's last.
    is_last_batch: bool = False
    #: The checkpoint the last call restored; ``ckpt_path_set``: a user set it for the next call.
    ckpt_path: str | None = None
    ckpt_path_set: bool = False
    #: Set (with ``should_stop``) by a checkpoint save that failed in the background: raises its error, which
    #: the loop's stop check calls, so the fit ends at the next step with no per-step cost.
    raise_failed_save: Callable[[], None] | None = None

    @property
    def epoch(self) -> int:
        """Lightning's ``current_epoch``: the epoch being trained, or after it was left, the next one."""
        return self.current_epoch + 1 if self.epoch_left else self.current_epoch

    def start_fit(self) -> None:
        """A new ``fit`` call keeps the counters (as Lightning's: a Trainer that reached its limits stays there)."""
        self.should_stop = False
        self.stop_reason = None
        self.compile_seconds = None
        self.raise_failed_save = None

    def clear_metrics(self) -> None:
        """Each call (fit, validate, test, predict) starts with no metrics, as Lightning's does: new dicts, so one
        a script kept from the previous call (``train_metrics = trainer.callback_metrics``) keeps its values."""
        self.callback_metrics, self.logged_metrics, self.progress_bar_metrics = {}, {}, {}
