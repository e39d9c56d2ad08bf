"""Moving a batch to a device, and telling its size: shared by the Trainer, the module base and bench.

``make_transfer`` walks tensors nested in tuples, lists and dicts (the shapes a ``collate_fn``
returns). On the CPU with no dtype change it returns the batch untouched, because even a no-op
``Tensor.to`` costs a dispatch per tensor per step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import torch

from ..errors import MisconfigurationException
from ..hardware.runtime import copies_may_overlap

__all__ = [
    "CONVERSION_DTYPES",
    "batch_size_of",
    "convert_tensors_to_scalars",
    "convert_to_tensors",
    "make_transfer",
    "move_data_to_device",
    "recursive_detach",
]


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
    from lightning_utilities.core.apply_func import apply_to_collection  # loaded when first moving

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


def _from_numpy(value: Any, device: torch.device | str | int) -> torch.Tensor:
    return torch.from_numpy(value).to(_as_device(device))


def _conversions() -> list[tuple[Any, Callable[..., torch.Tensor]]]:
    found: list[tuple[Any, Callable[..., torch.Tensor]]] = [
        # a bool becomes uint8: NCCL has no bool type
        (bool, functools.partial(torch.tensor, dtype=torch.uint8)),
        (int, functools.partial(torch.tensor, dtype=torch.int)),
        (float, functools.partial(torch.tensor, dtype=torch.float)),
    ]
    try:
        import numpy
    except ImportError:  # without numpy there are no arrays to convert
        return found
    return [*found, (numpy.ndarray, _from_numpy)]


#: Python scalars (and numpy arrays) ``convert_to_tensors`` turns into tensors, each with its conversion.
CONVERSION_DTYPES: list[tuple[Any, Callable[..., torch.Tensor]]] = _conversions()


def convert_to_tensors(data: Any, device: torch.device | str | int) -> Any:
    """``data`` with every bool, int, float (and numpy array) made a tensor on ``device``, tensors moved there."""
    from lightning_utilities.core.apply_func import apply_to_collection

    for kind, conversion in CONVERSION_DTYPES:
        data = apply_to_collection(data, kind, conversion, device=device)
    return move_data_to_device(data, device)


def convert_tensors_to_scalars(data: Any) -> Any:
    """``data`` with every one-element tensor replaced by its Python number; a larger tensor is a ``ValueError``."""
    from lightning_utilities.core.apply_func import apply_to_collection

    def to_item(value: torch.Tensor) -> Any:
        if value.numel() != 1:
            raise ValueError(
                f"The metric `{value}` does not contain a single element, thus it cannot be converted to a scalar."
            )
        return value.item()

    return apply_to_collection(data, torch.Tensor, to_item)


def recursive_detach(in_dict: Any, to_cpu: bool = False) -> Any:
    """``in_dict`` (any nesting of collections) with every tensor detached from its graph, and moved to the CPU
    when ``to_cpu``; everything else as it was."""
    from lightning_utilities.core.apply_func import apply_to_collection

    def detach(tensor: torch.Tensor) -> torch.Tensor:
        detached = tensor.detach()
        return detached.cpu() if to_cpu else detached

    return apply_to_collection(in_dict, torch.Tensor, detach)
