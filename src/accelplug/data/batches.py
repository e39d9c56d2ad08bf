"""Moving a batch to a device, and telling its size: shared by the Trainer, the module base and bench.

``make_transfer`` walks tensors nested in tuples, lists and dicts (the shapes a ``collate_fn``
returns). On the CPU with no dtype change it returns the batch untouched, because even a no-op
``Tensor.to`` costs a dispatch per tensor per step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from ..device_runtime import copies_may_overlap

__all__ = ["batch_size_of", "make_transfer"]


def make_transfer(device: torch.device, float_dtype: torch.dtype | None) -> Callable[[Any], Any]:
    """A function that moves a batch to ``device`` (and floating tensors to ``float_dtype``).

    Copies are ``non_blocking`` on accelerators with their own memory (CUDA, XPU, a PrivateUse1 backend),
    where pinned host memory lets them overlap compute; not on MPS, whose unified memory gains nothing and
    where asynchronous copies have given wrong values.
    """
    if device.type == "cpu" and float_dtype is None:
        return _identity
    non_blocking = copies_may_overlap(device)

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
