"""The batch-size search: grow the batch until a trial runs out of memory, in Lightning 2.6's two ways.

``power`` doubles the size after every trial that fits and, at the first that does not, halves it and ends
(or, if none has fitted yet, keeps halving). ``binsearch`` doubles the same way, then bisects between the
last size that fitted and the first that did not, and finally takes ``margin`` off. A trial is a few steps
of the real call (``steps_per_trial``); only an out-of-memory error (:func:`~accelplug.hardware.memory.is_oom_error`)
counts as "does not fit", any other error ends the search. The size is never grown past the data set (a batch
that already holds every sample ends the search) nor past ``max_val``.

The decisions here are Lightning's, step for step, so the same model reaches the same size; running a trial
and rebuilding the loaders is the Trainer's (:mod:`accelplug.trainer._tuning`), behind :class:`Trials`.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from ..callbacks.batch_size_finder import BATCH_SIZE_MODES, check_batch_size_arguments
from ..distributed.rank_zero import is_rank_zero
from ..hardware.memory import garbage_collection_cuda, is_oom_error
from .attributes import lightning_getattr, lightning_setattr

__all__ = ["BATCH_SIZE_MODES", "Trials", "check_batch_size_arguments", "search_batch_size"]

log = logging.getLogger(__name__)


def _info(message: str) -> None:
    """The search's progress, logged at INFO on rank 0 (Lightning logs the same lines)."""
    if is_rank_zero():
        log.info(message)


class Trials(Protocol):
    """What the search needs from the call it tunes."""

    module: Any

    def run_trial(self) -> None:
        """A few steps at the current size from the saved starting point; raises what the steps raised."""

    def reset_loaders(self) -> None:
        """Make the call's loaders again (``*_dataloader()``), so they read the new size."""

    def dataset_length(self) -> int | None:
        """Samples in the call's data set(s), None when unknown (an iterable data set)."""


def _adjust(
    trials: Trials,
    name: str,
    *,
    factor: float = 1.0,
    value: int | None = None,
    desc: str | None = None,
    max_val: int = 8192,
) -> tuple[int, bool]:
    """Set the size to ``value`` (or the current one times ``factor``), capped at ``max_val``; whether it changed.

    A current size that already covers the data set is kept: a larger batch would hold the same samples.
    """
    current = lightning_getattr(trials.module, name)
    length = trials.dataset_length()
    if length is not None and current >= length:
        _info(f"The batch size {current} is greater or equal than the length of your dataset: {length}.")
        return current, False
    new_size = value if value is not None else int(current * factor)
    if new_size > max_val:
        if desc:
            _info(f"Batch size {new_size} exceeds max_val limit {max_val}, capping at {max_val}")
        new_size = max_val
    if desc:
        _info(f"Batch size {current} {desc}, trying batch size {new_size}")
    lightning_setattr(trials.module, name, new_size)
    return new_size, new_size != current


def search_batch_size(
    trials: Trials, mode: str, init_val: int, max_trials: int, name: str, margin: float, max_val: int
) -> int:
    """The largest size that fitted (``binsearch``: less ``margin``); the module's attribute is left at it."""
    size, _ = _adjust(trials, name, value=init_val)
    if mode == "power":
        size = _power(trials, size, name, max_trials, max_val)
    else:
        size = _binsearch(trials, size, name, max_trials, margin, max_val)
    garbage_collection_cuda()
    _info(f"Finished batch size finder, will continue with full run using batch size {size}")
    return size


def _power(trials: Trials, size: int, name: str, max_trials: int, max_val: int) -> int:
    fitted_once = False
    for trial in range(max_trials):
        garbage_collection_cuda()
        if size >= max_val:
            _info(f"Reached the maximum batch size limit of {max_val}. Stopping search.")
            break
        try:
            trials.run_trial()
        except RuntimeError as exc:
            if not is_oom_error(exc):
                raise
            garbage_collection_cuda()
            size, _ = _adjust(trials, name, factor=0.5, desc="failed")
            trials.reset_loaders()
            if fitted_once:
                break
            continue
        if trial + 1 >= max_trials:
            break
        # Lightning caps the doubling at its default max_val here; max_val itself stops the loop above.
        size, changed = _adjust(trials, name, factor=2.0, desc="succeeded")
        if not changed:
            break
        trials.reset_loaders()
        fitted_once = True
    return size


def _binsearch(trials: Trials, size: int, name: str, max_trials: int, margin: float, max_val: int) -> int:
    low, high, count = 1, None, 0
    while True:
        garbage_collection_cuda()
        if size >= max_val:
            _info(f"Reached the maximum batch size limit of {max_val}. Stopping search.")
            break
        try:
            trials.run_trial()
        except RuntimeError as exc:
            if not is_oom_error(exc):
                raise
            garbage_collection_cuda()
            high = size
            size, _ = _adjust(trials, name, value=(high + low) // 2, desc="failed")
            trials.reset_loaders()
            if high - low <= 1:
                break
            continue
        count += 1
        if count >= max_trials:
            break
        low = size
        if high:
            if high - low <= 1:
                break
            size, changed = _adjust(trials, name, value=(high + low) // 2, desc="succeeded", max_val=max_val)
        else:
            size, changed = _adjust(trials, name, factor=2.0, desc="succeeded", max_val=max_val)
        if not changed:
            break
        trials.reset_loaders()
    if margin > 0:
        reduced = max(1, int(size * (1 - margin)))
        if reduced != size:
            _info(f"Applying margin of {margin:.1%}, reducing batch size from {size} to {reduced}")
            size = reduced
            lightning_setattr(trials.module, name, size)
    return size
