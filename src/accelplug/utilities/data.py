"""Moving and inspecting the things a batch and a data loader are made of."""

from __future__ import annotations

import os
import pickle
from typing import Any

import torch
from lightning_utilities.core.apply_func import apply_to_collection

from ..errors import MisconfigurationException

__all__ = ["apply_to_collection", "is_picklable", "move_data_to_device", "suggested_max_num_workers"]


def _as_device(device: torch.device | str | int) -> torch.device:
    if isinstance(device, torch.device):
        return device
    if isinstance(device, bool) or not isinstance(device, (str, int)):
        raise MisconfigurationException(
            f"move_data_to_device(device={device!r}): expected a torch.device, a device string such as 'cpu' "
            "or 'cuda:0', or a device index."
        )
    try:
        return torch.device(device)
    except RuntimeError as error:
        raise MisconfigurationException(f"move_data_to_device(device={device!r}): {error}") from None


def move_data_to_device(batch: Any, device: torch.device | str | int) -> Any:
    """``batch`` with every object that has a ``.to`` method (tensors first) moved to ``device``.

    Walks lists, tuples, named tuples, mappings and dataclasses as Lightning does (``apply_to_collection``);
    anything else is returned as it is. On CUDA the copy does not block, so it overlaps compute.
    """
    target = _as_device(device)
    non_blocking = target.type in ("cuda", "xpu")

    def move(data: Any) -> Any:
        if isinstance(data, torch.Tensor):
            return data.to(target, non_blocking=non_blocking)
        moved = data.to(target)
        return data if moved is None else moved  # an in-place ``.to`` (a user's data class) returns None

    return apply_to_collection(batch, dtype=_Transferable, function=move)


class _TransferableMeta(type):
    def __instancecheck__(cls, instance: object) -> bool:
        to = getattr(instance, "to", None)
        return callable(to) and not isinstance(instance, (type, torch.nn.Module))


class _Transferable(metaclass=_TransferableMeta):
    """Matches any object with a callable ``.to`` (modules excluded: moving one is the strategy's work)."""


def is_picklable(obj: object) -> bool:
    """Whether ``pickle`` can write ``obj`` (what hparams and spawned processes need)."""
    try:
        pickle.dumps(obj)
    except (pickle.PickleError, AttributeError, RuntimeError, TypeError):
        return False
    return True


def _cpus_available() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def suggested_max_num_workers(local_world_size: int) -> int:
    """An upper bound for ``DataLoader(num_workers=...)``: this machine's usable CPUs shared among its processes,
    one left for each main process, and never below 1."""
    if isinstance(local_world_size, bool) or not isinstance(local_world_size, int) or local_world_size < 1:
        raise MisconfigurationException(
            f"suggested_max_num_workers(local_world_size={local_world_size!r}): expected an int >= 1, the number "
            "of processes on this machine."
        )
    return max(1, _cpus_available() // local_world_size - 1)
