"""Where a run stands: the counters callbacks read, and why the last fit stopped.

One object, owned by the Trainer and handed to its loops, so the loops never reach into the
Trainer's private fields and the Trainer's public properties (``global_step``, ``current_epoch``,
``should_stop``...) are views of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from enum import Enum
from typing import Any

from .._record import record
from ..enums import LightningEnum

__all__ = [
    "LoopState",
    "PredictionRecord",
    "RunningStage",
    "Stage",
    "StopReason",
    "TrainerFn",
    "TrainerState",
    "TrainerStatus",
]


class TrainerStatus(LightningEnum):
    """Whether a Trainer call is under way, and how the last one ended (Lightning's ``TrainerStatus``)."""

    INITIALIZING = "initializing"
    RUNNING = "running"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"

    @property
    def stopped(self) -> bool:
        """The call is over, whether it finished or was interrupted."""
        return self in (TrainerStatus.FINISHED, TrainerStatus.INTERRUPTED)


class TrainerFn(LightningEnum):
    """The Trainer method a user called (Lightning's ``TrainerFn``; ``trainer.state.fn``)."""

    FITTING = "fit"
    VALIDATING = "validate"
    TESTING = "test"
    PREDICTING = "predict"


class RunningStage(LightningEnum):
    """What part of a call runs (Lightning's ``RunningStage``): a fit trains, checks its validation loop first
    (``sanity_check``) and validates; the other calls run their one stage."""

    TRAINING = "train"
    SANITY_CHECKING = "sanity_check"
    VALIDATING = "validate"
    TESTING = "test"
    PREDICTING = "predict"

    @property
    def evaluating(self) -> bool:
        """An evaluation stage: validating (the sanity check too) or testing."""
        return self in (RunningStage.VALIDATING, RunningStage.TESTING, RunningStage.SANITY_CHECKING)

    @property
    def dataloader_prefix(self) -> str | None:
        """The prefix of the stage's loader hook and limits: ``val`` for validation and the sanity check."""
        return "val" if self in (RunningStage.VALIDATING, RunningStage.SANITY_CHECKING) else self.value


@record
class TrainerState:
    """Lightning's record of where a Trainer is: the status, the method running and its stage."""

    status: TrainerStatus = TrainerStatus.INITIALIZING
    fn: TrainerFn | None = None
    stage: RunningStage | None = None

    def __eq__(self, other: object) -> bool:
        """Equal to another ``TrainerState`` with the same three values, and to a Trainer's ``trainer.state`` (a
        :class:`LoopState`, which carries the same three) standing there: ``trainer.state == TrainerState()`` holds
        for a new Trainer, as in Lightning."""
        if not isinstance(other, (TrainerState, LoopState)):
            return NotImplemented
        return (self.status, self.fn, self.stage) == (other.status, other.fn, other.stage)

    @property
    def finished(self) -> bool:
        return self.status == TrainerStatus.FINISHED

    @property
    def stopped(self) -> bool:
        return self.status.stopped


class Stage(str, Enum):
    """Which Trainer call runs (the run's own record; ``trainer.state`` holds Lightning's ``TrainerFn`` and
    ``RunningStage`` for it)."""

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
    NO_TRAINING_BATCHES = "no training batches"


@record
class PredictionRecord:
    """What a ``predict`` call collected, shown as Lightning's ``trainer.predict_loop`` (what prediction writers
    read): the outputs per loader, and with a writer the dataset indices of each batch."""

    return_predictions: bool = True
    #: Dataloaders x batches x sample indices, filled while a writer writes per epoch.
    epoch_batch_indices: list[list[list[int]]] = field(default_factory=list)
    #: The indices of the batch being predicted, while a writer writes per batch.
    current_batch_indices: list[int] = field(default_factory=list)
    #: Dataloaders x batch outputs.
    outputs: list[list[Any]] = field(default_factory=list)

    @property
    def num_dataloaders(self) -> int:
        return len(self.outputs)

    @property
    def predictions(self) -> list[Any]:
        """The outputs: a list of batches for one loader, a list of such lists for several (Lightning's shape)."""
        if not self.outputs:
            return []
        return self.outputs[0] if len(self.outputs) == 1 else self.outputs


@record
class LoopState:
    """The counters and records of a Trainer's calls (``trainer.state``): written by the loops, read through the
    Trainer's properties; Lightning's ``trainer.state`` names (``status``, ``fn``, ``stage``, ``finished``) too."""

    global_step: int = 0
    current_epoch: int = 0
    #: Batches whose optimizer stepped (every batch under manual optimisation): Lightning's
    #: ``_batches_that_stepped``, the step its loggers see; it differs from ``global_step`` with several optimizers.
    batches_stepped: int = 0
    #: 1 from the moment the current batch stepped until its batch-end work (logging, validation) is done: Lightning
    #: counts the batch only then, so rows logged in between carry the count before it.
    stepped_in_batch: int = 0
    should_stop: bool = False
    stop_reason: StopReason | None = None
    #: What the Trainer is doing now (``validate`` inside a fit, ``sanity_check``...).
    stage: RunningStage | None = None
    #: The Trainer method running (Lightning's ``trainer.state.fn``): ``fit`` throughout a fit, its validation included.
    fn: TrainerFn | None = None
    #: Lightning's ``trainer.state.status`` values: "initializing" until a call starts, "running" during it, then
    #: "finished", or "interrupted" when it raised (a signal, Ctrl-C, an error in user code).
    status: TrainerStatus = TrainerStatus.INITIALIZING
    #: Batches of the current epoch consumed (restored on resume to skip them).
    batches_done: int = 0
    #: Batches of the current epoch taken up, the one running included: set before each batch's step (Lightning's
    #: ``batch_progress.current.ready``), one ahead of ``batches_done`` while a batch runs and after
    #: ``on_train_batch_start`` returned -1 (the batch then counts as taken, never as done).
    batches_taken: int = 0
    #: Batches taken but never done in the epochs left before the current one (Lightning's ``total.ready`` counts
    #: them, its ``total.completed`` does not); added once per epoch.
    skipped_before_epoch: int = 0
    #: Batches consumed in the fit's earlier epochs (Lightning's checkpoints count batches over the whole fit).
    batches_in_past_epochs: int = 0
    #: ``global_step`` when the current epoch started (Lightning's checkpoints count the epoch's own steps too).
    epoch_first_step: int = 0
    #: Whether the current epoch's training batches are all done (and its epoch-end work is pending or done).
    epoch_done: bool = False
    #: Whether the loop left the current epoch (its end hooks ran, or it stopped inside it): Lightning then
    #: counts the epoch as completed, so ``trainer.current_epoch`` shows the next one.
    epoch_left: bool = False
    #: Whether the epoch-level schedulers stepped for the finished epoch.
    epoch_schedulers_done: bool = False
    #: Scheduler steps the Trainer took over every fit, and in the current epoch (Lightning's
    #: ``scheduler_progress`` in a checkpoint's ``loops``).
    scheduler_steps: int = 0
    scheduler_steps_in_epoch: int = 0
    #: Random-number state at the start of the current epoch (a resume replays the epoch's shuffle).
    epoch_start_rng: dict[str, Any] | None = None
    #: The latest value of every metric the module or the loop reported, as floats.
    callback_metrics: dict[str, Any] = field(default_factory=dict)
    #: What went to the loggers last (Lightning's ``logged_metrics``: scalar tensors).
    logged_metrics: dict[str, Any] = field(default_factory=dict)
    #: What the progress bar shows (``self.log(..., prog_bar=True)`` values, Lightning's keys): a step value stays the
    #: device tensor logged until someone reads it (``trainer.progress_bar_metrics`` settles them into floats).
    progress_bar_metrics: dict[str, Any] = field(default_factory=dict)
    #: ``compile=...``: seconds the first training step of the last fit took, torch.compile's work included.
    compile_seconds: float | None = None
    #: The loaders of the last calls as this process iterates them, with their batch counts after the limits,
    #: by "train", "val", "test", "predict" (a loader and a count, or lists of them).
    data: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: The last fit's training loader as its loop iterates it (a checkpoint keeps its stateful iterables' positions).
    train_loader: Any = None
    #: Whether this fit said once that a requested stop waits for ``min_epochs``/``min_steps`` (Lightning's line).
    min_wait_noted: bool = False
    #: During a fit: makes (once) and returns the training loader and what remakes it.
    train_source: Callable[[], tuple[Any, Callable[[], Any] | None]] | None = None
    #: During a fit: the ``(train_dataloaders, val_dataloaders)`` it was given (the tuner's trials read them too).
    fit_given: tuple[Any, Any] = (None, None)
    #: During a validate/test/predict call: the ``dataloaders`` it was given (the batch-size finder counts them).
    eval_given: Any = None
    #: Whether the training batch being processed is its epoch's last.
    is_last_batch: bool = False
    #: The checkpoint the last call restored; ``ckpt_path_set``: a user set it (``trainer.ckpt_path = path``), and
    #: every call restores it until it is set back to None.
    ckpt_path: str | None = None
    ckpt_path_set: bool = False
    #: ``trainer.accumulate_grad_batches`` once set during a run (GradientAccumulationScheduler); None: the option.
    #: The fit loop takes it at each epoch's start, after ``on_train_epoch_start``.
    accumulate_grad_batches: int | None = None
    #: The last ``predict`` call's outputs and batch indices (``trainer.predict_loop``).
    predict: PredictionRecord = field(default_factory=PredictionRecord)
    #: Training batches of the epochs left before the current one, over every fit (Lightning's
    #: ``batch_progress.total``), and those of them that closed an accumulation window (its
    #: ``_batches_that_stepped``; ``stepped_offset``: what a user wrote into that counter). Added once per epoch.
    batches_before_epoch: int = 0
    stepped_before_epoch: int = 0
    stepped_offset: int = 0
    #: Batches the last evaluation of each kind ran ("fit:validation", "validate:validation", "test:test",
    #: "predict"), for Lightning's loop objects.
    eval_batches: dict[str, int] = field(default_factory=dict)
    #: Epochs a callback added to this fit beyond ``max_epochs`` (StochasticWeightAveraging's BatchNorm pass);
    #: ``trainer.max_epochs`` counts them while they apply, as Lightning's ``fit_loop.max_epochs`` does.
    extra_epochs: int = 0
    #: Set by a callback in ``on_train_epoch_start`` (Lightning's ``fit_loop._skip_backward`` pass): this epoch
    #: runs ``training_step`` without ``zero_grad`` or backward (``trainer.loops.forward_only`` says exactly how).
    forward_only: bool = False

    @property
    def log_step(self) -> int:
        """The ``step`` a logger row carries now (Lightning's ``_batches_that_stepped`` at this point)."""
        return self.batches_stepped - self.stepped_in_batch

    #: Set (with ``should_stop``) by a checkpoint save that failed in the background: raises its error, which
    #: the loop's stop check calls, so the fit ends at the next step with no per-step cost.
    raise_failed_save: Callable[[], None] | None = None

    @property
    def finished(self) -> bool:
        """Whether the last call ran to its end (Lightning's ``trainer.state.finished``)."""
        return self.status is TrainerStatus.FINISHED

    @property
    def stopped(self) -> bool:
        """Whether the last call is over, finished or interrupted (Lightning's ``trainer.state.stopped``)."""
        return self.status.stopped

    @property
    def epoch(self) -> int:
        """Lightning's ``current_epoch``: the epoch being trained, or after it was left, the next one."""
        return self.current_epoch + 1 if self.epoch_left else self.current_epoch

    def count_batch(self) -> None:
        """A training batch stepped (under manual optimisation: ran), for the loggers' step; its rows until its
        batch-end work is done carry the count before it, as Lightning's do."""
        self.batches_stepped += 1
        self.stepped_in_batch = 1

    def begin_epoch(self, epoch: int, skip: int) -> None:
        """``epoch`` starts (``skip`` batches of it done already, on a resume): the counters move on."""
        if epoch != self.current_epoch or self.epoch_left:  # Lightning's checkpoints count batches over the fit
            self.batches_in_past_epochs += self.batches_done
        self.current_epoch, self.epoch_done, self.batches_done, self.epoch_left = epoch, False, skip, False
        self.batches_taken = skip
        if skip == 0:
            self.epoch_schedulers_done = False
            self.epoch_first_step = self.global_step
            self.scheduler_steps_in_epoch = 0

    def start_fit(self) -> None:
        """A new ``fit`` call keeps the counters (as Lightning's: a Trainer that reached its limits stays there)."""
        self.should_stop = False
        self.stop_reason = None
        self.compile_seconds = None
        self.extra_epochs, self.forward_only = 0, False
        self.raise_failed_save = None

    def clear_metrics(self) -> None:
        """Each call (fit, validate, test, predict) starts with no metrics, as Lightning's does: new dicts, so one
        a script kept from the previous call (``train_metrics = trainer.callback_metrics``) keeps its values."""
        self.callback_metrics, self.logged_metrics, self.progress_bar_metrics = {}, {}, {}
