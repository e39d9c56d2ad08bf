"""The counts behind Lightning's loop objects, kept where the loops already touch the state: never per step.

An epoch's training batches are added when the loop leaves the epoch (:func:`leave_epoch`); an evaluation's
when each loader is done (:class:`EvaluationRecord`). :mod:`._views` turns them into Lightning's trackers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..state import LoopState, TrainerFn

__all__ = [
    "BatchProgress",
    "EvaluationRecord",
    "LoopProgress",
    "Tracker",
    "batches_that_stepped",
    "evaluation_key",
    "finished",
    "forget_sanity_check",
    "leave_epoch",
    "start_training_epoch",
]


@dataclass
class Tracker:
    """Lightning's ``_ProcessedTracker``: how many items were made ready, started, processed and completed."""

    ready: int = 0
    completed: int = 0
    started: int = 0
    processed: int = 0


@dataclass
class LoopProgress:
    """Lightning's ``_Progress``: counts over every call (``total``) and in the current epoch or run (``current``)."""

    total: Tracker = field(default_factory=Tracker)
    current: Tracker = field(default_factory=Tracker)


@dataclass
class BatchProgress(LoopProgress):
    """Lightning's ``_BatchProgress``: also whether the last batch of the epoch was reached."""

    is_last_batch: bool = False


def finished(count: int, in_flight: bool = False) -> Tracker:
    """A tracker for ``count`` finished items, plus one started but not finished when ``in_flight``."""
    extra = 1 if in_flight else 0
    return Tracker(ready=count + extra, completed=count, started=count + extra, processed=count)


def batches_that_stepped(batches: int, accumulate: int, automatic: bool, complete: bool) -> int:
    """Lightning's ``_batches_that_stepped`` for one epoch of ``batches``: the batches that closed an
    accumulation window (every batch under manual optimisation; the epoch's last one closes a window)."""
    if not automatic or accumulate <= 1:
        return batches
    return batches // accumulate + (1 if complete and batches % accumulate else 0)


def leave_epoch(state: LoopState, accumulate: int, automatic: bool, complete: bool) -> None:
    """The loop left its epoch: mark it, and add its batches to the totals (once per epoch, nothing per step)."""
    state.epoch_left = True
    state.batches_before_epoch += state.batches_done
    state.skipped_before_epoch += max(state.batches_taken - state.batches_done, 0)
    state.stepped_before_epoch += batches_that_stepped(state.batches_done, accumulate, automatic, complete)


class EvaluationRecord:
    """The batches one evaluation run goes through, counted per loader (never per batch) for the views.

    The fit's validation keeps a second count, the batches of all its runs in the current training epoch
    (Lightning's ``val_loop.batch_progress.total``): :func:`start_training_epoch` sets it back to 0, and so does
    :func:`forget_sanity_check` for both counts, as Lightning resets its validation progress after the check.
    """

    def __init__(self, state: LoopState, prefix: str) -> None:
        self._counts = state.eval_batches
        self.key = evaluation_key(state.fn, prefix)
        self._counts[self.key] = 0
        self._epoch_key: str | None = None
        if state.fn is TrainerFn.FITTING:
            self._epoch_key = f"{self.key}#epoch"
            self._counts.setdefault(self._epoch_key, 0)

    def add(self, batches: int) -> None:
        self._counts[self.key] += batches
        if self._epoch_key is not None:
            self._counts[self._epoch_key] += batches


def evaluation_key(fn: TrainerFn | None, prefix: str) -> str:
    """Where :class:`EvaluationRecord` counts a run of ``prefix`` (validation, test) under the call ``fn``."""
    return f"{fn.value if fn is not None else 'fit'}:{prefix}"


def start_training_epoch(state: LoopState) -> None:
    """A training epoch starts from its first batch: the fit's validation total counts this epoch's runs only."""
    key = f"{evaluation_key(TrainerFn.FITTING, 'validation')}#epoch"
    if key in state.eval_batches:
        state.eval_batches[key] = 0


def forget_sanity_check(state: LoopState) -> None:
    """The sanity check is over: the fit's validation counts start from nothing (Lightning's are reset)."""
    key = evaluation_key(TrainerFn.FITTING, "validation")
    state.eval_batches[key] = state.eval_batches[f"{key}#epoch"] = 0
