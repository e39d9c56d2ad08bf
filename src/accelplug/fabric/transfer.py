"""Moving what a loop handles to the device: tensors nested in tuples, lists and dicts, and objects with ``.to``.

``fabric.to_device`` and the dataloader wrapper use it. Unlike the Trainer's batch transfer it also moves
any object that has a ``to(device)`` method (a tokenizer's ``BatchEncoding``), as Lightning's
``move_data_to_device`` does; modules are moved by ``to_device`` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ..hardware.runtime import copies_may_overlap

__all__ = ["move_to", "to_tensors"]


def move_to(obj: Any, device: torch.device) -> Any:
    """``obj`` with every tensor (and ``.to``-able object) in it on ``device``; copies overlap compute on CUDA."""
    if isinstance(obj, torch.Tensor):
        if obj.device == device:
            return obj
        return obj.to(device, non_blocking=copies_may_overlap(device))
    if isinstance(obj, tuple):
        items = [move_to(x, device) for x in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, list):
        return [move_to(x, device) for x in obj]
    if isinstance(obj, Mapping):
        moved = {k: move_to(v, device) for k, v in obj.items()}
        try:
            return type(obj)(moved)  # type: ignore[call-arg]
        except TypeError:  # a mapping type with another constructor
            return moved
    to = getattr(obj, "to", None)
    if callable(to) and not isinstance(obj, (torch.nn.Module, type)):
        return to(device)
    return obj


def to_tensors(obj: Any, device: torch.device) -> Any:
    """Numbers in ``obj`` as tensors on ``device`` (what the collectives accept), tensors moved there."""
    if isinstance(obj, bool):
        return torch.tensor(obj, device=device)
    if isinstance(obj, (int, float)):
        return torch.tensor(obj, device=device)
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple):
        items = [to_tensors(x, device) for x in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, list):
        return [to_tensors(x, device) for x in obj]
    if isinstance(obj, dict):
        return type(obj)({k: to_tensors(v, device) for k, v in obj.items()})
    numpy = type(obj).__module__ == "numpy"
    return torch.as_tensor(obj, device=device) if numpy else obj
