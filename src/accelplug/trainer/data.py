"""The loop's side of data: the batch-transfer hooks, and checking that what was passed can be trained on.

Moving a batch (:mod:`accelplug.batches`) and rebuilding loaders (:mod:`accelplug.loaders`) live below
the Trainer, because the module base and the strategies use them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..batches import batch_size_of, make_transfer
from ..errors import MisconfigurationException
from ..loaders import pin_for_cuda, with_distributed_sampler

if TYPE_CHECKING:
    from .run import Run

__all__ = [
    "batch_size_of",
    "check_loader",
    "make_transfer",
    "pin_for_cuda",
    "transfer_batch",
    "with_distributed_sampler",
]


def transfer_batch(run: Run, batch: Any, dataloader_idx: int = 0) -> Any:
    """Lightning's three batch-transfer hooks around moving the batch to the run's device.

    ``on_before_batch_transfer`` and ``on_after_batch_transfer`` may return a new batch;
    ``transfer_batch_to_device``, when the module defines it, replaces the Trainer's own move.
    """
    hooks = run.hooks
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


def check_loader(loader: Any, what: str) -> Any:
    """``loader`` if it can be iterated once per epoch; a clear error for what cannot.

    A generator or iterator would be empty from the second epoch on, a ``Dataset`` would yield
    unbatched samples, and a number or None is a mistake in the call: each is refused with what to
    pass instead, rather than training on the wrong data without a word.
    """
    from collections.abc import Iterable, Iterator

    from torch.utils.data import DataLoader, Dataset

    if isinstance(loader, DataLoader):
        return loader
    if isinstance(loader, Dataset):
        raise MisconfigurationException(
            f"{what} got a {type(loader).__name__} (a Dataset), which yields single samples; wrap it in a "
            f"DataLoader with a batch size: DataLoader({type(loader).__name__.lower()}, batch_size=32, shuffle=True)."
        )
    if isinstance(loader, Iterator):
        raise MisconfigurationException(
            f"{what} got a {type(loader).__name__} (a one-shot iterator or generator): it would be empty from the "
            "second epoch on. Pass a DataLoader, or a list of batches, which can be iterated once per epoch."
        )
    if isinstance(loader, (str, bytes, Mapping)) or not isinstance(loader, Iterable):
        raise MisconfigurationException(
            f"{what}={_short(loader)} is not a data loader: expected a torch DataLoader (or another re-iterable of "
            "batches, such as a list)."
        )
    return loader


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
