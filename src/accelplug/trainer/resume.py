"""Resuming a fit exactly where a checkpoint left it, mid-epoch included.

At the start of each epoch the random-number state is recorded; a checkpoint stores it, how many
batches of the epoch were consumed, and the state at saving time. On resume the epoch-start state is
put back before the loader's iterator is created (so a shuffling sampler draws the same order), the
consumed batches are skipped, and then the saving-time state is restored: the remaining steps see
exactly what the uninterrupted run saw. A checkpoint written while an epoch's end was being handled
(by ``on_train_epoch_end``) also records whether the plateau schedulers had stepped yet.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .checkpoint import restore_rng_state

if TYPE_CHECKING:
    from .optimization import Optimization
    from .state import LoopState

__all__ = ["epoch_batches", "resume_position"]


def resume_position(
    state: LoopState, checkpoint: dict[str, Any] | None, opt: Optimization
) -> tuple[int, int, dict[str, Any] | None]:
    """(epoch to run, batches of it to skip, RNG state to restore after skipping)."""
    if checkpoint is None:
        return state.current_epoch, 0, None
    loop = checkpoint["loop"]
    if loop["epoch_done"]:
        restore_rng_state(checkpoint["rng"])
        if not loop.get("epoch_schedulers_done", True):
            opt.step_schedulers("epoch", state.current_epoch + 1, state.callback_metrics, plateau=True)
        return state.current_epoch + 1, 0, None
    restore_rng_state(checkpoint["epoch_start_rng"])
    return state.current_epoch, int(loop["batches_done"]), checkpoint["rng"]


def epoch_batches(
    loader: Any, skip: int, saved_rng: dict[str, Any] | None, limit: int | None
) -> Iterator[tuple[int, Any]]:
    """``(batch_idx, batch)`` of one epoch after the first ``skip`` (a resume), up to ``limit`` batches."""
    iterator = iter(loader)
    for _ in range(skip):
        next(iterator, None)
    if saved_rng is not None:
        restore_rng_state(saved_rng)
    if limit is None:
        yield from enumerate(iterator, start=skip)
        return
    for batch_idx, batch in enumerate(iterator, start=skip):
        if batch_idx >= limit:
            return
        yield batch_idx, batch
