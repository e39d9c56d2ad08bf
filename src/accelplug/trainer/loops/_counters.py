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
    "finished",
    "leave_epoch",
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
    state.stepped_before_epoch += batches_that_stepped(state.batches_done, accumulate, automatic, complete)


class EvaluationRecord:
    """The batches one evaluation run goes through, counted per loader (never per batch) for the views."""

    def __init__(self, state: LoopState, prefix: str, *, sanity: bool) -> None:
        self._counts = state.eval_batches
        self.key = f"{state.fn.value if state.fn is not None else 'fit'}:{prefix}"
        self._counts[self.key] = 0
        self._epoch_key: str | None = None
        if state.fn is TrainerFn.FITTING:  # the fit's validation adds up within a training epoch, as Lightning's
            self._epoch_key, at = f"{self.key}#epoch", -1 if sanity else state.current_epoch
            if self._counts.get(f"{self.key}#at") != at:
                self._counts[self._epoch_key], self._counts[f"{self.key}#at"] = 0, at

    def add(self, batches: int) -> None:
        self._counts[self.key] += batches
        if self._epoch_key is not None:
            self._counts[self._epoch_key] += batches
