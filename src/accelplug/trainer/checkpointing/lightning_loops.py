"""The ``loops`` and ``pytorch-lightning_version`` keys of a checkpoint, so Lightning 2.6 can load and resume it,
and the way back: accelplug's ``loop`` record read from a file Lightning wrote.

accelplug resumes from its own ``loop`` record; Lightning reads its loops' progress counters instead, and refuses
a file without a version. :func:`lightning_loops` writes those counters as Lightning's loops hold them at the same
point of a fit (after it, in ``on_train_epoch_end``, in a validation at an epoch's end or inside it, in
``on_train_batch_end``), from the loop state alone. Only what Lightning's restart logic reads is derived; the
evaluation loops' counters, which only say how far an interrupted evaluation got, are written as a fresh loop's.

:func:`loop_from_lightning` reads the same counters back (from a file in Lightning 2.6's layout: older ones are
upgraded first, :mod:`accelplug.checkpoint.migration`). Lightning records no random-number state, so a resume from
its file continues with the generators as they are, skipping the batches the epoch had consumed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...checkpoint.migration import LIGHTNING_VERSION

if TYPE_CHECKING:
    from ..state import LoopState

__all__ = ["LIGHTNING_VERSION", "lightning_loops", "loop_from_lightning"]


def _progress(ready: int, started: int, processed: int, completed: int) -> dict[str, int]:
    return {"ready": ready, "completed": completed, "started": started, "processed": processed}


def _batch_progress(total: dict[str, int], current: dict[str, int], is_last_batch: bool) -> dict[str, Any]:
    return {"total": total, "current": current, "is_last_batch": is_last_batch}


def _fresh_eval() -> dict[str, Any]:
    zero = _progress(0, 0, 0, 0)
    return {"state_dict": {}, "batch_progress": _batch_progress(dict(zero), dict(zero), False)}


def _steps(total: int, current: int) -> dict[str, Any]:
    return {"total": {"ready": total, "completed": total}, "current": {"ready": current, "completed": current}}


def lightning_loops(state: LoopState, *, automatic: bool, validating: bool) -> dict[str, Any]:
    """Lightning's ``checkpoint["loops"]`` for a fit standing where ``state`` stands (``validating``: a validation
    inside the fit is running, as when ``ModelCheckpoint`` saves on validation end)."""
    epoch, done = state.current_epoch, state.batches_done
    if state.epoch_left:  # after the epoch (or the fit): Lightning counted it completed
        epochs = _progress(epoch + 1, epoch + 1, epoch + 1, epoch + 1)
    elif state.epoch_done and not validating:  # the epoch-end hooks: processed, not yet completed
        epochs = _progress(epoch + 1, epoch + 1, epoch + 1, epoch)
    else:  # inside the epoch, or the validation Lightning runs within its last batch
        epochs = _progress(epoch + 1, epoch + 1, epoch, epoch)
    # in on_train_batch_end (a batch that stepped, its batch-end work not done) Lightning has not completed it yet
    in_batch_end = bool(state.stepped_in_batch) and not validating and not state.epoch_done
    completed = done - 1 if in_batch_end and done else done
    current = _progress(done, done, done, completed)
    before = state.batches_in_past_epochs
    total = _progress(before + done, before + done, before + done, before + completed)
    is_last = state.epoch_done or state.epoch_left or (state.is_last_batch and done > 0)
    zero_steps = _steps(0, 0)
    in_epoch = state.global_step - state.epoch_first_step
    optimizer_steps = _steps(state.global_step, in_epoch) if automatic else zero_steps
    zero_grad = {part: {**counts, "started": counts["ready"]} for part, counts in optimizer_steps.items()}
    fit_loop = {
        "state_dict": {},
        "epoch_loop.state_dict": {"_batches_that_stepped": state.log_step},
        "epoch_loop.batch_progress": _batch_progress(total, current, is_last),
        "epoch_loop.scheduler_progress": _steps(state.scheduler_steps, state.scheduler_steps_in_epoch),
        "epoch_loop.automatic_optimization.state_dict": {},
        "epoch_loop.automatic_optimization.optim_progress": {
            "optimizer": {"step": optimizer_steps, "zero_grad": zero_grad}
        },
        "epoch_loop.manual_optimization.state_dict": {},
        "epoch_loop.manual_optimization.optim_step_progress": zero_steps
        if automatic
        else _steps(state.global_step, in_epoch),
        "epoch_loop.val_loop.state_dict": {},
        "epoch_loop.val_loop.batch_progress": _fresh_eval()["batch_progress"],
        "epoch_progress": {"total": dict(epochs), "current": dict(epochs)},
    }
    predict = _fresh_eval()
    predict["batch_progress"].pop("is_last_batch")
    return {"fit_loop": fit_loop, "validate_loop": _fresh_eval(), "test_loop": _fresh_eval(), "predict_loop": predict}


def _epoch_position(epochs: dict[str, int]) -> tuple[int, bool, bool]:
    """(the epoch a fit stands in, whether its training batches are done, whether the loop left it) from
    Lightning's ``epoch_progress``."""
    started, processed, completed = epochs["started"], epochs["processed"], epochs["completed"]
    if processed > completed:  # in the epoch-end hooks
        return completed, True, False
    # Lightning counts the epochs processed here (a fit's start sets ``completed`` to them), so a file upgraded
    # from before 1.6, whose counters only carry ``completed``, starts from epoch 0, as in Lightning
    if started > processed or processed == 0:  # inside the epoch, or before the first
        return processed, False, False
    return processed - 1, True, True  # after an epoch


def loop_from_lightning(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """accelplug's ``loop`` record for a checkpoint in Lightning 2.6's layout (``loops`` and ``global_step``)."""
    fit_loop = checkpoint.get("loops", {}).get("fit_loop", {})
    global_step = int(checkpoint.get("global_step", 0))
    if "epoch_progress" not in fit_loop:  # no loop record: where the top-level keys say
        epoch = int(checkpoint.get("epoch", 0))
        return {"epoch": epoch, "global_step": global_step, "batches_done": 0, "epoch_done": False}
    epoch, epoch_done, left = _epoch_position(fit_loop["epoch_progress"]["current"])
    batches = fit_loop["epoch_loop.batch_progress"]
    done, total = int(batches["current"]["processed"]), int(batches["total"]["processed"])
    automatic = fit_loop["epoch_loop.automatic_optimization.optim_progress"]["optimizer"]["step"]["current"]
    manual = fit_loop["epoch_loop.manual_optimization.optim_step_progress"]["current"]
    steps_in_epoch = int(automatic["completed"]) or int(manual["completed"])
    logged = int(fit_loop["epoch_loop.state_dict"].get("_batches_that_stepped", global_step))
    in_batch_end = done > int(batches["current"]["completed"])  # saved by on_train_batch_end: not yet counted
    stepped_in_epoch = steps_in_epoch if int(automatic["completed"]) else done
    schedulers = fit_loop.get("epoch_loop.scheduler_progress", {})
    return {
        "epoch": epoch,
        "global_step": global_step,
        "scheduler_steps": int(schedulers.get("total", {}).get("completed", 0)),
        "scheduler_steps_in_epoch": int(schedulers.get("current", {}).get("completed", 0)),
        "batches_stepped": logged + (1 if in_batch_end else 0),
        "batches_done": done,
        "batches_in_past_epochs": total - done,
        "epoch_first_step": global_step - steps_in_epoch,
        "epoch_done": epoch_done,
        "total_batches": total,
        # the loggers' steps before this epoch: its own are added to them once the loop leaves it
        "batches_that_stepped": logged - (0 if left else stepped_in_epoch - (1 if in_batch_end else 0)),
    }
