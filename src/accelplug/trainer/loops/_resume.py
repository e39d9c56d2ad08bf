"""Resuming a fit exactly where a checkpoint left it, mid-epoch included.

Where each epoch's iterator is made (Lightning's places: before ``on_train_start`` for a fit's first epoch, after
``on_train_epoch_start`` for the others) the random-number state is recorded; a checkpoint stores it, how many
batches of the epoch were consumed, and the state at saving time. On resume the epoch-start state is
put back before the loader's iterator is created (so a shuffling sampler draws the same order), the
consumed batches are skipped, and then the saving-time state is restored: the remaining steps see
exactly what the uninterrupted run saw (a shuffle drawn at the first batch, as a loader without workers draws it,
also sees what the epoch-start hooks drew: their draws are not replayed). A checkpoint written while an epoch's end
was being handled (by ``on_train_epoch_end``) also records whether the plateau schedulers had stepped yet.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..checkpointing.format import restore_rng_state

if TYPE_CHECKING:
    from ...accelerator import Accelerator
    from ..state import LoopState
    from .optimization import Optimization

__all__ = ["epoch_batches", "resume_position"]


def resume_position(
    state: LoopState, checkpoint: dict[str, Any] | None, opt: Optimization
) -> tuple[int, int, dict[str, Any] | None]:
    """(epoch to run, batches of it to skip, RNG state to restore after skipping)."""
    if checkpoint is None:  # a fresh Trainer, or a later fit of one: the epoch after the one it left
        return state.epoch, 0, None
    accelerator = opt.strategy.accelerator
    loop, saved_rng = checkpoint["loop"], checkpoint.get("rng")
    state.epoch_left = bool(loop["epoch_done"])
    if saved_rng is None:  # a file Lightning wrote records no generators: go on from where its counters stand
        return (
            (state.current_epoch + 1, 0, None)
            if loop["epoch_done"]
            else (state.current_epoch, state.batches_done, None)
        )
    if loop["epoch_done"]:
        restore_rng_state(saved_rng, accelerator)
        if not loop.get("epoch_schedulers_done", True):
            opt.step_schedulers("epoch", state.current_epoch + 1, state.callback_metrics, plateau=True)
        return state.current_epoch + 1, 0, None
    if checkpoint.get("epoch_start_rng") is None:  # saved before the first epoch began (a signal at once)
        restore_rng_state(saved_rng, accelerator)
        return state.current_epoch, 0, None
    restore_rng_state(checkpoint["epoch_start_rng"], accelerator)
    return state.current_epoch, int(loop["batches_done"]), checkpoint["rng"]


def epoch_batches(
    loader: Any,
    skip: int,
    saved_rng: dict[str, Any] | None,
    length: int | None,
    accelerator: Accelerator | None = None,
    state: LoopState | None = None,
) -> Iterator[tuple[int, Any]]:
    """``(batch_idx, batch)`` of one epoch after the first ``skip`` (a resume), ``length`` batches in all.

    When the length is known the loader is not asked for a batch past it: a shuffling sampler draws its
    next permutation only when asked, so an extra request would change every later epoch's order (and
    fetch a batch for nothing). Batches are fetched one ahead of the step that uses them (Lightning's
    order, which matters for streams that read the model's state).
    """
    iterator = iter(loader)
    for _ in range(skip):
        next(iterator, None)
    if saved_rng is not None:
        restore_rng_state(saved_rng, accelerator)
    batches: Iterator[tuple[int, Any]] = enumerate(iterator, start=skip)
    if length is not None:
        batches = itertools.islice(batches, max(length - skip, 0))
    # One batch is fetched ahead, as Lightning's fetcher does: a stream whose items depend on the
    # model (an RL agent acting in the environment) then sees the same model state in both; and so
    # ``trainer.is_last_batch`` (in ``state``) is known before the batch's hooks run.
    upcoming = next(batches, None)
    while upcoming is not None:
        current, upcoming = upcoming, next(batches, None)
        if state is not None:
            state.is_last_batch = upcoming is None
        yield current
