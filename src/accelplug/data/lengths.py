"""How long a loader is, and how many samples a batch holds: Lightning's public helpers for both.

``sized_len`` asks ``len()`` and takes a loader without one (an iterable dataset, a generator) as None rather than
an error; ``has_len`` and ``has_len_all_ranks`` also warn, as Lightning does, about a loader of length 0 and about
an ``IterableDataset`` that declares a length (with several workers each may yield the whole dataset).
``extract_batch_size`` is the size ``self.log`` assumes for a batch: the first dimension of the first tensor found
in it, walking sequences, mappings and dataclasses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeAlias

import torch
from torch.utils.data import IterableDataset

from ..distributed.rank_zero import rank_zero_warn
from ..errors import MisconfigurationException

__all__ = [
    "BType",
    "extract_batch_size",
    "has_iterable_dataset",
    "has_len",
    "has_len_all_ranks",
    "sized_len",
    "warn_iterable_datasets_with_len",
]

#: What a batch may be: tensors, strings, and mappings or iterables of them.
BType: TypeAlias = torch.Tensor | str | Mapping[Any, "BType"] | Iterable["BType"]

_ITERABLE_WITH_LEN = (
    "Your `IterableDataset` has `__len__` defined. In combination with multi-process data loading (when "
    "num_workers > 1), `__len__` could be inaccurate if each worker is not configured independently to avoid "
    "having duplicate data."
)
_NO_BATCH_SIZE = (
    "We could not infer the batch_size from the batch. Either simplify its structure or provide the batch_size as "
    "`self.log(..., batch_size=batch_size)`."
)


def has_iterable_dataset(dataloader: object) -> bool:
    """Whether ``dataloader`` reads an ``IterableDataset``."""
    return isinstance(getattr(dataloader, "dataset", None), IterableDataset)


def sized_len(dataloader: object) -> int | None:
    """``len(dataloader)``, or None when it has no length (or says it cannot tell)."""
    try:
        return len(dataloader)  # type: ignore[arg-type]
    except (TypeError, NotImplementedError):
        return None


def has_len(dataloader: object) -> bool:
    """Whether ``dataloader`` has a length; warns when it is 0, or when an iterable dataset declares one."""
    length = sized_len(dataloader)
    if length == 0:
        rank_zero_warn(f"`{type(dataloader).__name__}` returned 0 length. Please make sure this was your intention.")
    if length is not None and has_iterable_dataset(dataloader):
        rank_zero_warn(_ITERABLE_WITH_LEN)
    return length is not None


def warn_iterable_datasets_with_len(loader: object) -> None:
    """Lightning's warning, given where a stage sets up its data, for each loader (a combined loader's too) whose
    ``IterableDataset`` declares a length: with several workers, each may yield the whole dataset."""
    combined = getattr(loader, "combined", loader)  # the Trainer's view of a CombinedLoader
    for one in getattr(combined, "flattened", [loader]):
        if has_iterable_dataset(one) and sized_len(one) is not None:
            rank_zero_warn(_ITERABLE_WITH_LEN)


def _total(strategy: Any, length: int) -> int:
    """``length`` summed over the processes of ``strategy``'s run (this process's alone outside one)."""
    reduce = getattr(strategy, "reduce", None)
    if callable(reduce):
        device = getattr(strategy, "root_device", torch.device("cpu"))
        return int(reduce(torch.tensor(length, device=device), reduce_op="sum"))
    reduce_sum = getattr(strategy, "reduce_sum", None)
    if callable(reduce_sum) and getattr(strategy, "world_size", 1) > 1:
        return int(reduce_sum(torch.tensor(float(length))).item())
    return length


def has_len_all_ranks(
    dataloader: object, strategy: Any, allow_zero_length_dataloader_with_multiple_devices: bool = False
) -> bool:
    """Whether ``dataloader`` has a length, checked against every process of the run: a length of 0 everywhere
    is warned about; 0 here but not elsewhere is an error unless ``allow_zero_length...`` (then a warning)."""
    local = sized_len(dataloader)
    if local is None:
        return False
    total = _total(strategy, local)
    name = type(dataloader).__name__
    if total == 0:
        rank_zero_warn(f"Total length of `{name}` across ranks is zero. Please make sure this was your intention.")
    if total > 0 and local == 0:
        if not allow_zero_length_dataloader_with_multiple_devices:
            raise RuntimeError(
                f"`{name}` within local rank has zero length. Please make sure that it returns at least 1 batch."
            )
        rank_zero_warn(
            f"Total length of `{name}` across ranks is zero, but local rank has zero length. Please be cautious of "
            "uneven batch length."
        )
    if has_iterable_dataset(dataloader):
        rank_zero_warn(_ITERABLE_WITH_LEN)
    return True


def _sizes(batch: Any) -> Iterator[int | None]:
    """The first dimension of every tensor in ``batch`` (1 for a scalar), None for a leaf that is no tensor."""
    if isinstance(batch, torch.Tensor):
        yield 1 if batch.ndim == 0 else int(batch.size(0))
    elif isinstance(batch, Mapping):
        for value in batch.values():
            yield from _sizes(value)
    elif isinstance(batch, Iterable) and not isinstance(batch, str):
        for item in batch:
            yield from _sizes(item)
    elif dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        for field in dataclasses.fields(batch):
            yield from _sizes(getattr(batch, field.name))
    else:
        yield None


def extract_batch_size(batch: BType) -> int:
    """The batch size ``self.log`` assumes: the first size found; warns when a later tensor disagrees; a
    ``MisconfigurationException`` when the batch holds no tensor to read it from."""
    found: int | None = None
    try:
        for size in _sizes(batch):
            if found is None:
                found = size
            elif size != found:
                rank_zero_warn(
                    "Trying to infer the `batch_size` from an ambiguous collection. The batch size we found is "
                    f"{found}. To avoid any miscalculations, use `self.log(..., batch_size=batch_size)`."
                )
                break
    except RecursionError:
        raise RecursionError(_NO_BATCH_SIZE) from None
    if found is None:
        raise MisconfigurationException(_NO_BATCH_SIZE)
    return found
