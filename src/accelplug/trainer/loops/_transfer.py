"""Lightning's three batch-transfer hooks around moving a batch to the run's device.

Moving the batch itself (:mod:`accelplug.data.batches`) lives below the Trainer, because the module base
and a custom loop use it too; what is the loop's own is calling the module's hooks around it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._run import Run

__all__ = ["SKIP_REST_OF_EPOCH", "transfer_batch"]

#: What a batch path returns when ``on_train_batch_start`` returned -1 (Lightning: skip the rest of the epoch),
#: the hook that follows the transfer.
SKIP_REST_OF_EPOCH = object()


def transfer_batch(run: Run, batch: Any, dataloader_idx: int = 0) -> Any:
    """Lightning's three batch-transfer hooks around moving the batch to the run's device.

    ``on_before_batch_transfer`` and ``on_after_batch_transfer`` may return a new batch;
    ``transfer_batch_to_device``, when the module defines it, replaces the Trainer's own move.
    """
    hooks = run.hooks
    with hooks.strategy_span("batch_to_device"):  # Lightning's strategy hook holds the three module hooks
        before = hooks.call_module("on_before_batch_transfer", batch, dataloader_idx)
        batch = batch if before is None else before
        custom = hooks.module_hook("transfer_batch_to_device")
        if custom is not None:
            batch = custom(batch, run.device, dataloader_idx)
            if run.precision.param_dtype is not None:
                batch = run.transfer(batch)
        else:
            batch = run.transfer(batch)
        after = hooks.call_module("on_after_batch_transfer", batch, dataloader_idx)
        return batch if after is None else after
