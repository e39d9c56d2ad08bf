"""Resuming a fit exactly where a checkpoint left it, mid-epoch included.

Where each epoch's iterator is made (Lightning's places: before ``on_train_start`` for a fit's first epoch, after
``on_train_epoch_start`` for the others) the random-number state is recorded; a checkpoint stores it, how many
batches of the epoch were consumed, and the state at saving time. On resume the epoch-start state is
put back before the loader's iterator is created (so a shuffling sampler draws the same order), the
consumed batches are skipped, and then the saving-time state is restored: the remaining steps see
exactly what the uninterrupted run saw (a shuffle drawn at the first batch, as a loader without workers draws it,
also sees what the epoch-start hooks drew: their draws are not replayed). A checkpoint written while an epoch's end
was being handled (by ``on_train_epoch_end``) also records whether the plateau schedulers had stepped yet.

A training iterable that keeps its own position (``state_dict``/``load_state_dict``: torchdata's
``StatefulDataLoader``, a user's own) is resumed as Lightning resumes it: the checkpoint keeps its state (in
``loops``), the resumed fit gives it back before the iterator is made, and nothing is skipped (the iterable goes on
from where it stood). A mid-epoch resume whose loaders are not all stateful gets Lightning's warning.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...data.combined_loader import load_loader_states, resumable
from ...distributed.rank_zero import rank_zero_warn
from ...errors import PossibleUserWarning
from ..checkpointing.format import restore_rng_state

if TYPE_CHECKING:
    from ...accelerator import Accelerator
    from ..state import LoopState
    from .optimization import Optimization

__all__ = ["epoch_batches", "loader_position", "resume_position", "sanity_check_on_resume"]


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


def sanity_check_on_resume(checkpoint: dict[str, Any] | None, max_steps: int | None) -> bool:
    """Whether a fit runs its sanity check, as Lightning decides: always when it starts afresh; on a resume only
    when the checkpoint's epoch had processed its training batches (a file written by the epoch-end hooks or after)
    and the fit counts epochs (``max_steps`` -1). A fit resumed inside an epoch, or one bounded by steps, goes on
    without it, so the restored validation state is left as it was."""
    if checkpoint is None:
        return True
    if max_steps is not None and max_steps != -1:
        return False
    current = checkpoint.get("loops", {}).get("fit_loop", {}).get("epoch_progress", {}).get("current")
    if not isinstance(current, dict) or not {"ready", "started", "processed"} <= current.keys():
        return bool(checkpoint.get("loop", {}).get("epoch_done"))  # no Lightning counters: accelplug's record
    return int(current["ready"]) == int(current["started"]) == int(current["processed"])


def loader_position(
    checkpoint: dict[str, Any] | None, loader: Any, skip: int, *, length: int | None, accumulate: int, global_step: int
) -> int:
    """The batches of the resumed epoch still to skip, once the loader's stateful iterables have their saved
    states back (then none: they go on from where they stood, as in Lightning); warns, as Lightning does, when a
    fit resumed inside an epoch has loaders that do not keep their position."""
    if checkpoint is None:
        return skip
    states = checkpoint.get("loops", {}).get("fit_loop", {}).get("state_dict", {}).get("combined_loader")
    if states:
        load_loader_states(loader, states)
        skip = 0
    steps_per_epoch = math.ceil(length / accumulate) if length else 0
    if steps_per_epoch and global_step % steps_per_epoch and not resumable(loader):
        rank_zero_warn(
            "You're resuming from a checkpoint that ended before the epoch ended and your dataloader is not "
            "resumable: the batches the epoch consumed are skipped, which continues the interrupted run exactly only "
            "if the loader gives the same batches in the same order again. Save at an epoch's end, or make the "
            "dataloader resumable by giving it `state_dict` / `load_state_dict` methods.",
            category=PossibleUserWarning,
        )
    return skip


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
    fetch a batch for nothing); nor ahead of the step that uses it (Lightning's fetcher, too, fetches ahead only
    to find a stream's end): a stateful loader saved after a step then stands after that step's batch.
    A loader of unknown length is read one batch ahead (Lightning's order, which matters for streams that
    read the model's state).
    """
    iterator = iter(loader)
    for _ in range(skip):
        next(iterator, None)
    if saved_rng is not None:
        restore_rng_state(saved_rng, accelerator)
    batches: Iterator[tuple[int, Any]] = enumerate(iterator, start=skip)
    if length is not None:
        yield from _counted(itertools.islice(batches, max(length - skip, 0)), length - 1, state)
        return
    # One batch is fetched ahead, as Lightning's fetcher does: a stream whose items depend on the
    # model (an RL agent acting in the environment) then sees the same model state in both; and so
    # ``trainer.is_last_batch`` (in ``state``) is known before the batch's hooks run.
    upcoming = next(batches, None)
    while upcoming is not None:
        current, upcoming = upcoming, next(batches, None)
        if state is not None:
            state.is_last_batch = upcoming is None
        yield current


def _counted(batches: Iterator[tuple[int, Any]], last: int, state: LoopState | None) -> Iterator[tuple[int, Any]]:
    """The batches of an epoch of known length, none fetched before its step asks for it; ``is_last_batch`` from
    the index."""
    if state is None:
        yield from batches
        return
    for batch_idx, batch in batches:
        state.is_last_batch = batch_idx == last
        yield batch_idx, batch
