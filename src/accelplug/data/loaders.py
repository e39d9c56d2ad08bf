"""Rebuilding a user's ``DataLoader`` with one setting changed: a sharding sampler, pinned memory.

Kept below the Trainer and the strategies (both use it). A rebuilt loader copies every setting of
the user's and changes only the sampler (DDP) or ``pin_memory`` (CUDA), so what the user chose
(workers, collate_fn, generator...) survives.
"""

from __future__ import annotations

import warnings
from typing import Any, Protocol

import torch
from torch.utils.data import DataLoader, IterableDataset, RandomSampler, Sampler, SequentialSampler

from ..errors import MisconfigurationException

__all__ = ["Sharding", "pin_for_cuda", "prepare_loader", "rebuild_loader", "with_distributed_sampler"]


class Sharding(Protocol):
    """What :func:`prepare_loader` asks of a strategy (a Protocol, so this module never imports one)."""

    @property
    def is_distributed(self) -> bool: ...

    def prepare_dataloader(self, loader: Any, *, shuffle_seed: int) -> Any: ...

    def process_dataloader(self, loader: Any) -> Any: ...


def rebuild_loader(loader: DataLoader[Any], **changes: Any) -> DataLoader[Any]:
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
    return rebuild_loader(loader, pin_memory=True)


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
    return rebuild_loader(loader, sampler=sampler)


def prepare_loader(
    loader: Any, device: torch.device, strategy: Sharding, *, shuffle: bool = True, distributed_sampler: bool, seed: int
) -> Any:
    """This process's view of ``loader``: pinned for CUDA, sharded across processes when distributed, then
    as the strategy feeds its device (``Strategy.process_dataloader``).

    ``shuffle=False`` replaces a DataLoader's sampler with a sequential one (prediction keeps the order,
    ``overfit_batches`` takes the same batches every epoch). ``distributed_sampler=False`` leaves the
    sampler alone under DDP, for loaders that already shard (Lightning's ``use_distributed_sampler``).
    """
    if not shuffle and isinstance(loader, DataLoader) and loader.batch_size is not None:
        loader = rebuild_loader(loader, sampler=SequentialSampler(loader.dataset))  # type: ignore[arg-type]
    loader = pin_for_cuda(loader, device)
    if strategy.is_distributed and distributed_sampler:
        loader = strategy.prepare_dataloader(loader, shuffle_seed=seed)
    return strategy.process_dataloader(loader)
