"""Lightning's loop objects (``trainer.fit_loop``, ``validate_loop``, ``test_loop``, ``predict_loop``) as views.

accelplug's loops are plain functions over a :class:`~accelplug.trainer.state.LoopState`, built for each call;
Lightning's are long-lived objects that projects read (``fit_loop.epoch_progress.current.completed``,
``fit_loop.epoch_loop.batch_progress``, ``epoch_loop._batches_that_stepped``, ``predict_loop.predictions``)
and write (``trainer.fit_loop.max_epochs += 2`` before another ``fit`` to train on). These objects answer
those names from the state and the options, computed when read, so the loops keep no second set of
counters and pay nothing per step. A limit written here replaces the Trainer's option, checked as the
Trainer's argument is, and takes effect at the next ``fit``.

The progress trackers are snapshots (Lightning's ``_ProcessedTracker``: ``ready``, ``started``,
``processed``, ``completed``); writing into one changes nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from ..options.entries import TrainerOptions, validate_options
from ..state import LoopState, RunningStage
from ._counters import BatchProgress, LoopProgress, Tracker, batches_that_stepped, finished
from ._limits import parsed_max_epochs, parsed_min_epochs

__all__ = [
    "EvaluationLoopView",
    "FitLoopView",
    "PredictionLoopView",
]


class Host(Protocol):
    """What the views read of the Trainer (typed here, so this module never imports it)."""

    state: LoopState
    options: TrainerOptions

    @property
    def lightning_module(self) -> Any: ...


def _set_option(host: Host, name: str, value: Any) -> None:
    """Replace one Trainer option, checked exactly as the Trainer's argument (the same words on a bad value)."""
    checked = getattr(validate_options(**{name: value}), name)
    host.options = replace(host.options, **{name: checked})


class EvaluationLoopView:
    """``validate_loop``, ``test_loop`` and ``fit_loop.epoch_loop.val_loop``: the batches of their last run."""

    def __init__(self, host: Host, key: str) -> None:
        self._host, self._key = host, key

    @property
    def batch_progress(self) -> BatchProgress:
        """``current``: the last run's batches; ``total``: the same, except that the fit's validation adds up
        the runs of the current training epoch (Lightning resets it when an epoch starts)."""
        counts = self._host.state.eval_batches
        count = counts.get(self._key, 0)
        total = counts.get(f"{self._key}#epoch", count)
        return BatchProgress(finished(total), finished(count), is_last_batch=count > 0)

    @property
    def done(self) -> bool:
        return self._key in self._host.state.eval_batches

    @property
    def restarting(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._key!r}, batch_progress={self.batch_progress})"


class PredictionLoopView(EvaluationLoopView):
    """``trainer.predict_loop``: the last call's predictions (empty when ``return_predictions=False``)."""

    def __init__(self, host: Host) -> None:
        super().__init__(host, "predict")

    @property
    def predictions(self) -> Any:
        return self._host.state.predict.predictions

    @property
    def return_predictions(self) -> bool:
        return self._host.state.predict.return_predictions

    @property
    def num_dataloaders(self) -> int:
        return self._host.state.predict.num_dataloaders

    @property
    def epoch_batch_indices(self) -> list[list[list[int]]]:
        """Per loader, each batch's dataset indices, while a prediction writer writes per epoch."""
        return self._host.state.predict.epoch_batch_indices

    @property
    def current_batch_indices(self) -> list[int]:
        """The dataset indices of the batch being predicted, while a prediction writer writes per batch."""
        return self._host.state.predict.current_batch_indices


class TrainingEpochLoopView:
    """``fit_loop.epoch_loop``: the training batches of every fit so far, and those of the current epoch."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self.val_loop = EvaluationLoopView(host, "fit:validation")

    def _in_epoch(self) -> tuple[int, int]:
        """The current epoch's batches taken (the running one included) and done, not yet in the totals."""
        state = self._host.state
        if state.epoch_left:
            return 0, 0
        return max(state.batches_taken, state.batches_done), state.batches_done

    @property
    def batch_progress(self) -> BatchProgress:
        """``ready``/``started``: the batches taken, the running one included (and one that
        ``on_train_batch_start`` skipped with -1); ``processed``/``completed``: the batches done."""
        state = self._host.state
        taken, done = self._in_epoch()
        before = state.batches_before_epoch
        total = _taken(before + done, before + state.skipped_before_epoch + taken)
        current = _taken(state.batches_done, max(state.batches_taken, state.batches_done))
        return BatchProgress(total, current, is_last_batch=state.is_last_batch or state.epoch_done)

    @property
    def total_batch_idx(self) -> int:
        """The index of the current (or last) training batch over every epoch (-1 before the first), as Lightning
        counts: from the moment the batch is taken."""
        return self.batch_progress.total.ready - 1

    @property
    def batch_idx(self) -> int:
        """The index in its epoch of the current (or last) training batch, from the moment it is taken."""
        return self.batch_progress.current.ready - 1

    @property
    def global_step(self) -> int:
        return self._host.state.global_step

    @property
    def _batches_that_stepped(self) -> int:
        state = self._host.state
        module = self._host.lightning_module
        automatic = bool(getattr(module, "automatic_optimization", True))
        accumulate = self._host.options.accumulate_grad_batches
        current = 0 if state.epoch_left else batches_that_stepped(state.batches_done, accumulate, automatic, False)
        return state.stepped_before_epoch + state.stepped_offset + current

    @_batches_that_stepped.setter
    def _batches_that_stepped(self, value: int) -> None:
        self._host.state.stepped_offset += int(value) - self._batches_that_stepped

    @property
    def max_steps(self) -> int:
        steps = self._host.options.max_steps
        return -1 if steps is None else steps

    @max_steps.setter
    def max_steps(self, value: int) -> None:
        _set_option(self._host, "max_steps", value)

    @property
    def min_steps(self) -> int | None:
        return self._host.options.min_steps

    @min_steps.setter
    def min_steps(self, value: int | None) -> None:
        _set_option(self._host, "min_steps", value)

    @property
    def restarting(self) -> bool:
        """False, as the fit loop's: a restored fit replays no loop state that a hook could tell apart."""
        return False

    @property
    def done(self) -> bool:
        steps = self.max_steps
        return steps != -1 and self._host.state.global_step >= steps


def _taken(done: int, taken: int) -> Tracker:
    """A tracker of ``done`` batches finished and ``taken`` ones made ready and started."""
    tracker = finished(done)
    tracker.ready = tracker.started = taken
    return tracker


class FitLoopView:
    """``trainer.fit_loop``: the fit's limits (settable, for the next ``fit``) and its epoch counts."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self.epoch_loop = TrainingEpochLoopView(host)

    def _fitted(self) -> bool:
        return "train" in self._host.state.data  # a fit set up its data: Lightning has parsed the limits by then

    def _timed(self) -> bool:
        """Whether a time limit bounds the fit (``max_time``, or a ``Timer`` among the Trainer's callbacks)."""
        from ...callbacks.timer import Timer

        callbacks = getattr(self._host, "callbacks", ())
        return self._host.options.max_time is not None or any(isinstance(c, Timer) for c in callbacks)

    @property
    def _skip_backward(self) -> bool:
        """Whether this epoch runs ``training_step`` forward only (StochasticWeightAveraging's BatchNorm pass); a
        callback may set it in ``on_train_epoch_start``, as Lightning's does (``state.forward_only``)."""
        return self._host.state.forward_only

    @_skip_backward.setter
    def _skip_backward(self, value: bool) -> None:
        self._host.state.forward_only = bool(value)

    @property
    def max_epochs(self) -> int | None:
        """The epoch limit: ``trainer.fit_loop.max_epochs += 2`` and a second ``fit`` trains two epochs more.

        Once a fit started, an unset limit reads as Lightning's parsed one: 1000, or -1 with ``max_steps``.
        """
        options = self._host.options
        if options.max_epochs is None and self._fitted():
            return parsed_max_epochs(None, options.max_steps, timed=self._timed())
        return options.max_epochs

    @max_epochs.setter
    def max_epochs(self, value: int | None) -> None:
        _set_option(self._host, "max_epochs", value)

    @property
    def min_epochs(self) -> int | None:
        """``min_epochs``; after a fit started an unset one reads 0 (1 with ``min_steps``), as Lightning parses it."""
        options = self._host.options
        if options.min_epochs is None and self._fitted():
            return parsed_min_epochs(None, options.min_steps)
        return options.min_epochs

    @min_epochs.setter
    def min_epochs(self, value: int | None) -> None:
        _set_option(self._host, "min_epochs", value)

    @property
    def max_steps(self) -> int:
        """Read-only here, as in Lightning: ``fit_loop.epoch_loop.max_steps = N`` sets it."""
        return self.epoch_loop.max_steps

    @property
    def min_steps(self) -> int | None:
        return self.epoch_loop.min_steps

    @min_steps.setter
    def min_steps(self, value: int | None) -> None:
        self.epoch_loop.min_steps = value

    @property
    def epoch_progress(self) -> LoopProgress:
        """Epochs left so far (Lightning's ``current_epoch`` is ``current.completed``); one more while in one."""
        state = self._host.state
        completed = state.epoch
        in_flight = state.stage is RunningStage.TRAINING and not state.epoch_left
        tracker = finished(completed, in_flight)
        if in_flight and state.epoch_done:
            tracker.processed += 1
        return LoopProgress(tracker, replace(tracker))

    @property
    def total_batch_idx(self) -> int:
        return self.epoch_loop.total_batch_idx

    @property
    def batch_idx(self) -> int:
        return self.epoch_loop.batch_idx

    @property
    def done(self) -> bool:
        """Whether a limit is reached: a further ``fit`` would train nothing (until a limit is raised)."""
        if self.epoch_loop.done:
            return True
        options = self._host.options
        epochs = parsed_max_epochs(options.max_epochs, options.max_steps, timed=self._timed())
        return epochs != -1 and self._host.state.epoch >= epochs

    @property
    def restarting(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"FitLoopView(max_epochs={self.max_epochs}, max_steps={self.max_steps}, epoch={self._host.state.epoch})"
