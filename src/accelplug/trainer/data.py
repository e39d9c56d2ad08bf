"""Getting batches onto the device, and checking that what was passed as data can be trained on.

``make_transfer`` walks tensors nested in tuples, lists and dicts (the shapes a ``collate_fn``
returns). On the CPU with no dtype change it returns the batch untouched, because even a no-op
``Tensor.to`` costs a dispatch per tensor per step. Rebuilding loaders (a sharding sampler, pinned
memory) lives in :mod:`accelplug.loaders`, below the strategies that use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import torch

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


def make_transfer(device: torch.device, float_dtype: torch.dtype | None) -> Callable[[Any], Any]:
    """A function that moves a batch to ``device`` (and floating tensors to ``float_dtype``).

    Copies are ``non_blocking`` on CUDA, where pinned host memory lets them overlap compute; not on
    MPS, whose unified memory gains nothing and where asynchronous copies have given wrong values.
    """
    if device.type == "cpu" and float_dtype is None:
        return _identity
    non_blocking = device.type == "cuda"

    def move(obj: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            if float_dtype is not None and obj.is_floating_point():
                return obj.to(device=device, dtype=float_dtype, non_blocking=non_blocking)
            return obj.to(device, non_blocking=non_blocking)
        if isinstance(obj, tuple):
            items = [move(x) for x in obj]
            return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
        if isinstance(obj, list):
            return [move(x) for x in obj]
        if isinstance(obj, Mapping):
            return type(obj)({k: move(v) for k, v in obj.items()}) if isinstance(obj, dict) else obj
        return obj

    return move


def _identity(obj: Any) -> Any:
    return obj


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


def batch_size_of(batch: Any) -> int:
    """The leading dimension of the first tensor in ``batch`` (1 when there is none)."""
    if isinstance(batch, torch.Tensor):
        return int(batch.shape[0]) if batch.dim() else 1
    if isinstance(batch, (tuple, list)):
        for item in batch:
            return batch_size_of(item)
    if isinstance(batch, Mapping):
        for item in batch.values():
            return batch_size_of(item)
    return 1


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
