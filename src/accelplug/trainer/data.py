"""Getting batches onto the device and giving each process its share of the data.

``move_to_device`` walks tensors nested in tuples, lists and dicts (the shapes a ``collate_fn``
returns). On the CPU with no dtype change it returns the batch untouched, because even a no-op
``Tensor.to`` costs a dispatch per tensor per step. ``DataLoader`` rebuilding copies the user's
settings and changes only the sampler (DDP) or ``pin_memory`` (CUDA).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch.utils.data import DataLoader, IterableDataset, RandomSampler, Sampler

from ..errors import MisconfigurationException

__all__ = ["batch_size_of", "make_transfer", "pin_for_cuda", "with_distributed_sampler"]


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


def _rebuild(loader: DataLoader[Any], **changes: Any) -> DataLoader[Any]:
    """A new ``DataLoader`` with the user's settings, except ``changes``."""
    kwargs: dict[str, Any] = {
        "dataset": loader.dataset,
        "num_workers": loader.num_workers,
        "collate_fn": loader.collate_fn,
        "pin_memory": loader.pin_memory,
        "timeout": loader.timeout,
        "worker_init_fn": loader.worker_init_fn,
        "multiprocessing_context": loader.multiprocessing_context,
        "generator": loader.generator,
        "persistent_workers": loader.persistent_workers,
    }
    if loader.num_workers > 0:
        kwargs["prefetch_factor"] = loader.prefetch_factor
    if loader.batch_size is not None:
        # Keep the sampler itself (not the batch sampler around it), so ``loader.sampler`` still
        # answers ``set_epoch`` and tells whether the loader shuffles.
        kwargs.update(sampler=loader.sampler, batch_size=loader.batch_size, drop_last=loader.drop_last)
    else:
        kwargs["batch_sampler"] = loader.batch_sampler
    kwargs.update(changes)
    return DataLoader(**kwargs)


def pin_for_cuda(loader: Any, device: torch.device) -> Any:
    """``loader`` with ``pin_memory=True`` when batches go to a CUDA device, so copies can be async."""
    if device.type != "cuda" or not isinstance(loader, DataLoader) or loader.pin_memory:
        return loader
    if isinstance(loader.dataset, IterableDataset):
        return loader
    return _rebuild(loader, pin_memory=True)


def with_distributed_sampler(loader: Any, world_size: int, rank: int, seed: int) -> Any:
    """``loader`` with a ``DistributedSampler`` so that each rank sees its own share of every epoch.

    A loader that shuffled keeps shuffling (with ``seed`` and the epoch, the same on every rank);
    one that did not keeps its order. Loaders the Trainer cannot rebuild are returned with a warning.
    """
    from torch.utils.data.distributed import DistributedSampler

    if not isinstance(loader, DataLoader):
        warnings.warn(
            f"a {type(loader).__name__} is not a torch DataLoader, so accelplug cannot shard it across "
            f"{world_size} processes; every rank will see all of its batches.",
            stacklevel=3,
        )
        return loader
    if isinstance(loader.sampler, DistributedSampler) or isinstance(loader.dataset, IterableDataset):
        return loader
    if loader.batch_size is None:
        raise MisconfigurationException(
            "this DataLoader uses a custom batch_sampler, which accelplug cannot shard across processes; "
            "pass batch_size= and shuffle= instead, or give it a sampler that shards by rank itself."
        )
    shuffle = isinstance(loader.sampler, RandomSampler)
    sampler: Sampler[int] = DistributedSampler(
        loader.dataset,  # type: ignore[arg-type]
        num_replicas=world_size,
        rank=rank,
        shuffle=shuffle,
        seed=seed,
        drop_last=loader.drop_last,
    )
    return _rebuild(loader, sampler=sampler)
