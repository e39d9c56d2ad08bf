"""How long a fit runs and when it validates, worked out once from the options and the loader.

Everything the loop needs to decide "go on or stop" lives here, so the loop itself only asks
:meth:`Limits.stop_reason`. Lightning's meanings are kept: ``max_epochs=None`` with no ``max_steps``
means 1000 epochs, ``-1`` means no epoch limit; ``min_epochs``/``min_steps`` keep a requested stop
waiting (a signal's stop does not wait for them); ``max_time`` ends the fit at the first batch boundary
after the time is up.
"""

from __future__ import annotations

import datetime
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...data.lengths import warn_iterable_datasets_with_len
from ...distributed.rank_zero import is_rank_zero, rank_zero_warn
from ...errors import MisconfigurationException, PossibleUserWarning
from ..state import StopReason

if TYPE_CHECKING:
    from ..options.entries import TrainerOptions
    from ..state import LoopState

__all__ = [
    "DEFAULT_MAX_EPOCHS",
    "Limits",
    "batch_limit",
    "count_batches",
    "epoch_length",
    "parsed_max_epochs",
    "parsed_min_epochs",
    "validates_in_epoch",
]

DEFAULT_MAX_EPOCHS = 1000


def parsed_max_epochs(max_epochs: int | None, max_steps: int | None, *, timed: bool) -> int:
    """Lightning's reading of ``max_epochs`` (its ``fit_loop.max_epochs`` once a fit starts): as given; unset, 1000
    epochs unless ``max_steps`` or a time limit (``max_time``, a ``Timer``) bounds the fit, then -1 (no limit)."""
    if max_epochs is not None:
        return max_epochs
    return DEFAULT_MAX_EPOCHS if max_steps in (None, -1) and not timed else -1


def validates_in_epoch(check_val_every_n_epoch: int | None, epoch: int) -> bool:
    """Whether ``check_val_every_n_epoch`` lets ``epoch`` validate at all (None: every epoch), as in Lightning."""
    return check_val_every_n_epoch is None or (epoch + 1) % check_val_every_n_epoch == 0


def parsed_min_epochs(min_epochs: int | None, min_steps: int | None) -> int:
    """Lightning's reading of ``min_epochs``: as given; unset, 1 with ``min_steps`` (so a stop requested in
    ``on_fit_start`` waits for them) and else 0."""
    if min_epochs is not None:
        return min_epochs
    return 0 if min_steps is None else 1


def batch_limit(limit: float | int, loader: Any, option: str) -> int | None:
    """How many batches ``limit_*_batches`` allows per epoch (None: all of them)."""
    if isinstance(limit, int):
        return limit
    if limit >= 1.0:
        return None
    try:
        length = len(loader)
    except (TypeError, NotImplementedError):
        raise MisconfigurationException(
            f"{option}={limit} is a fraction of an epoch, but this data loader has no length: when it is an "
            f"`IterableDataset`, `Trainer({option})` must be `1.0` or an int (a number of batches)."
        ) from None
    if length > 0 and int(length * limit) == 0 and limit > 0:  # Lightning refuses a fraction that rounds to nothing
        stage = option.removeprefix("limit_").removesuffix("_batches")
        raise MisconfigurationException(
            f"You requested to check {limit} of the `{stage}_dataloader` but {limit} * {length} < 1 batch: "
            f"{option}={limit} leaves no batch of its {length}. Try at least `{option}={1.0 / length}`, or an int "
            "number of batches."
        )
    return int(length * limit)


def epoch_length(loader: Any, limit: int | None) -> int | None:
    """Batches in one epoch after the limit, or None when the loader cannot tell its length."""
    try:
        length = len(loader)
    except (TypeError, NotImplementedError):  # no length, or a __len__ that says so (as Lightning's has_len)
        return limit
    return length if limit is None else min(length, limit)


def count_batches(loader: Any, limit: float | int, option: str) -> float:
    """Batches one pass over ``loader`` takes under ``limit`` (Lightning's ``max_batches``; ``inf``: no length)."""
    warn_iterable_datasets_with_len(loader)  # each stage counts its loaders once, where Lightning warns
    length = epoch_length(loader, batch_limit(limit, loader, option))
    return math.inf if length is None else length


@dataclass(frozen=True)
class Limits:
    max_steps: int | None
    max_epochs: int | None
    min_steps: int
    min_epochs: int
    max_time_s: float | None
    batch_limit: int | None
    epoch_length: int | None
    accumulate: int
    log_every: int
    #: Validate after every N training batches (None: at the end of each epoch).
    val_every: int | None
    check_val_every_n_epoch: int | None
    #: Time-based ``val_check_interval``: validate after the first batch this many seconds after the last validation
    #: (or the start of training); no batch schedule and no forced epoch-end validation then, as in Lightning.
    val_every_s: float | None = None
    limit_option: str = "limit_train_batches"
    #: The step and epoch limits are fast_dev_run's: reaching them is StopReason.FAST_DEV_RUN.
    fast_dev_run: bool = False
    #: ``min_epochs`` as Lightning reads it and ``min_steps`` as given, for the line a waiting stop request gets.
    min_epochs_given: int | None = None
    min_steps_given: int | None = None

    @classmethod
    def for_fit(cls, options: TrainerOptions, loader: Any, *, validating: bool, timer: bool = False) -> Limits:
        """The fit's limits; ``timer``: a ``Timer`` callback bounds the fit's time (as ``max_time`` does)."""
        from ..options.entries import DEFAULT_LOG_EVERY_N_STEPS  # at call: the options import the loops' names

        limit = batch_limit(options.limit_train_batches, loader, "limit_train_batches")
        length = epoch_length(loader, limit)
        max_steps = options.max_steps if options.max_steps is not None and options.max_steps >= 0 else None
        interval = options.val_check_interval
        timed = timer or options.max_time is not None
        parsed = parsed_max_epochs(options.max_epochs, options.max_steps, timed=timed)
        if options.max_epochs is None and parsed == DEFAULT_MAX_EPOCHS and not options.fast_dev_run:
            rank_zero_warn(
                f"`max_epochs` was not set. Setting it to {DEFAULT_MAX_EPOCHS} epochs. To train without an epoch "
                "limit, set `max_epochs=-1`.",
                category=PossibleUserWarning,
            )
        max_epochs = None if parsed == -1 else parsed
        limits = cls(
            max_steps=max_steps,
            max_epochs=max_epochs,
            min_steps=options.min_steps or 0,
            min_epochs=options.min_epochs or 0,
            max_time_s=options.max_time_seconds,
            batch_limit=limit,
            epoch_length=length,
            accumulate=options.accumulate_grad_batches,
            # fast_dev_run reads every step's values back, as Lightning logs each of its few steps
            # log_every_n_steps=0 logs no step (_readback.py), yet the loop reads its values back as by default
            log_every=1 if options.fast_dev_run else (options.log_every_n_steps or DEFAULT_LOG_EVERY_N_STEPS),
            val_every=_val_every(interval, length, options.check_val_every_n_epoch) if validating else None,
            check_val_every_n_epoch=options.check_val_every_n_epoch,
            val_every_s=interval.total_seconds() if validating and isinstance(interval, datetime.timedelta) else None,
            fast_dev_run=bool(options.fast_dev_run),
            min_epochs_given=parsed_min_epochs(options.min_epochs, options.min_steps),
            min_steps_given=options.min_steps,
        )
        if length == 0 and limit != 0:  # an empty loader: Lightning warns and fit() returns without training
            rank_zero_warn(
                f"Total length of `{type(loader).__name__}` across ranks is zero, so fit() trains nothing (an empty "
                "dataset, or drop_last=True with fewer samples than batch_size?). Please make sure this was your "
                "intention."
            )
        return limits

    @property
    def total_steps(self) -> int | None:
        """Optimizer steps the fit will take, when that can be known (for the progress display)."""
        total = self.max_steps
        if self.epoch_length is not None and self.max_epochs is not None:
            by_epochs = self.max_epochs * math.ceil(self.epoch_length / self.accumulate)
            total = by_epochs if total is None else min(total, by_epochs)
        return total

    def stop_reason(
        self, state: LoopState, elapsed_s: float, *, within_epoch: bool, epoch: int | None = None
    ) -> StopReason | None:
        """Why the fit must stop now, or None to go on (a failed background checkpoint save raises here)."""
        if state.raise_failed_save is not None:
            state.raise_failed_save()
        if self.epoch_length == 0 and not within_epoch:  # limit_train_batches=0 or an empty loader (Lightning's)
            return StopReason.NO_TRAINING_BATCHES
        if self.max_steps is not None and state.global_step >= self.max_steps:
            return StopReason.FAST_DEV_RUN if self.fast_dev_run else StopReason.MAX_STEPS
        if self.max_time_s is not None and elapsed_s >= self.max_time_s:
            return StopReason.MAX_TIME
        if state.should_stop and state.stop_reason is StopReason.SIGNAL:
            # A signal does not wait for min_steps/min_epochs, only for the end of an accumulation window.
            return StopReason.SIGNAL if not within_epoch or self.at_step_boundary(state) else None
        if state.should_stop:
            if self.can_stop_early(state):
                return state.stop_reason or StopReason.REQUESTED
            self._note_minimum_not_met(state)
        epochs = self.max_epochs
        if not within_epoch and epoch is not None and epochs is not None and epoch >= epochs + state.extra_epochs:
            return StopReason.FAST_DEV_RUN if self.fast_dev_run else StopReason.MAX_EPOCHS
        return None

    def finished(self, state: LoopState, elapsed_s: float, epoch: int) -> bool:
        """Whether the fit ends before ``epoch`` starts; the reason, when there is one, goes to ``state``."""
        reason = self.stop_reason(state, elapsed_s, within_epoch=False, epoch=epoch)
        state.stop_reason = reason or state.stop_reason
        return reason is not None

    def at_step_boundary(self, state: LoopState) -> bool:
        """Whether the batches done so far end an accumulation window (the optimizers just stepped)."""
        done = state.batches_done
        return self.accumulate == 1 or done % self.accumulate == 0 or done == self.epoch_length

    def _note_minimum_not_met(self, state: LoopState) -> None:
        """Lightning's INFO line, once per fit: a requested stop waits for ``min_epochs``/``min_steps``."""
        if state.min_wait_noted or not is_rank_zero():
            return
        state.min_wait_noted = True
        logging.getLogger("accelplug.trainer").info(
            f"Trainer was signaled to stop but the required `min_epochs={self.min_epochs_given!r}` or "
            f"`min_steps={self.min_steps_given!r}` has not been met. Training will continue..."
        )

    def can_stop_early(self, state: LoopState) -> bool:
        """A requested stop waits until ``min_steps`` and ``min_epochs`` are met (as in Lightning)."""
        return state.global_step >= self.min_steps and state.current_epoch + (1 if state.epoch_done else 0) >= (
            self.min_epochs
        )

    def check_progress(self, state: LoopState, epoch: int, steps_before: int) -> None:
        """An epoch that ran batches but took no optimizer step, with no epoch limit, would loop forever."""
        if self.max_epochs is None and state.global_step == steps_before and state.epoch_done:
            raise MisconfigurationException(
                f"epoch {epoch} ran its batches but took no optimizer step, and with max_epochs=None/-1 fit() "
                "would never reach max_steps. Manual optimization must call optimizer.step() (self.optimizers()); "
                "or set max_epochs."
            )

    def validates_in(self, epoch: int) -> bool:
        """Whether ``check_val_every_n_epoch`` lets ``epoch`` validate at all (:func:`validates_in_epoch`)."""
        return validates_in_epoch(self.check_val_every_n_epoch, epoch)

    def validate_at_epoch_end(self, epoch: int) -> bool:
        return self.val_every is None and self.val_every_s is None and self.validates_in(epoch)

    def explain_empty_epoch(self, epoch: int, *, loader: Any = None) -> str:
        """A loader without a length that yielded nothing, with no epoch limit: empty epochs that could never end (a
        loader known to be empty never gets here: :meth:`stop_reason` ends the fit first, as in Lightning)."""
        what = f"a {type(loader).__name__}" if loader is not None else "the training data"
        return (
            f"{what} yielded no batches in epoch {epoch} and max_epochs is unlimited, so fit() would run empty "
            "epochs forever (an empty dataset, or a generator that is already used up?). Pass a DataLoader over a "
            "non-empty dataset, or set max_epochs."
        )


def _val_every(
    interval: float | int | datetime.timedelta | None, length: int | None, every_n_epoch: int | None
) -> int | None:
    """Validate after every this many training batches: of the epoch, or counted across epochs when
    ``check_val_every_n_epoch`` is None (Lightning's ``total_batch_idx``); None: at each epoch's end (or by time)."""
    if interval is None or isinstance(interval, datetime.timedelta):
        return None
    if isinstance(interval, int):
        if every_n_epoch is not None and length is not None and interval > length:
            raise MisconfigurationException(
                f"val_check_interval={interval} must be less than or equal to the number of the training batches "
                f"({length}), since it counts the batches of each epoch; with check_val_every_n_epoch=None it counts "
                "batches across epochs instead. To turn validation off, set limit_val_batches=0."
            )
        return interval
    if length is None:
        if interval == 1.0:  # the whole epoch: validate at its end, however long it turns out (Lightning's)
            return None
        raise MisconfigurationException(
            f"val_check_interval={interval} is a fraction of an epoch, but the training data has no length "
            "(an IterableDataset): `Trainer(val_check_interval)` must be time based, `1.0` or an int (a number of "
            "batches: validation every k training batches)."
        )
    return max(1, int(length * interval)) if interval < 1.0 else None
