"""Rebuilding a user's ``DataLoader`` with one setting changed: a sharding sampler.

Kept below the Trainer and the strategies (both use it). A rebuilt loader copies every setting of
the user's and changes only the sampler (DDP), so what the user chose (workers, collate_fn, generator,
``pin_memory``...) survives. ``pin_memory`` stays the user's, as in Lightning 2.6: a dataset that already
holds CUDA tensors cannot be pinned, and pinning is the user's call.
"""

from __future__ import annotations

import warnings
from typing import Any, Protocol

import torch
from torch.utils.data import BatchSampler, DataLoader, IterableDataset, RandomSampler, Sampler, SequentialSampler

from ..distributed.rank_zero import rank_zero_warn
from ..errors import MisconfigurationException
from ..hardware.capabilities import capabilities

__all__ = [
    "Sharding",
    "prepare_loader",
    "rebuild_loader",
    "sequential_for_overfit",
    "unpin_where_unsupported",
    "with_distributed_sampler",
]


class Sharding(Protocol):
    """What :func:`prepare_loader` asks of a strategy (a Protocol, so this module never imports one)."""

    @property
    def is_distributed(self) -> bool: ...

    @property
    def global_rank(self) -> int: ...

    def prepare_dataloader(self, loader: Any, *, shuffle_seed: int, shuffle: bool | None = None) -> Any: ...

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


def unpin_where_unsupported(loader: Any, device: torch.device) -> Any:
    """``loader`` without ``pin_memory`` when the user asked for pinning but batches go to an out-of-tree device
    whose runtime cannot pin host memory (no pinned allocator): its loader's pinning thread would raise on the first
    batch. :mod:`accelplug.hardware.capabilities` finds that on the first try. Every other loader is left as given
    (Lightning 2.6 never changes ``pin_memory``)."""
    pins = isinstance(loader, DataLoader) and loader.pin_memory
    if not pins or device.type in ("cpu", "cuda", "mps") or isinstance(loader.dataset, IterableDataset):
        return loader
    return loader if capabilities(device.type).pins_memory() else rebuild_loader(loader, pin_memory=False)


def with_distributed_sampler(loader: Any, world_size: int, rank: int, seed: int, *, shuffle: bool | None = None) -> Any:
    """``loader`` with a distributed sampler, so that each rank sees its own share of every epoch (Lightning's rule).

    ``shuffle=None`` shuffles the shares when the loader shuffled (Fabric, evaluation); the Trainer passes
    True for training, as Lightning shuffles every training loader it shards. A ``RandomSampler`` or
    ``SequentialSampler`` becomes a ``DistributedSampler`` over the dataset; a custom sampler keeps its
    order inside a :class:`~.samplers.DistributedSamplerWrapper`; a batch sampler is rebuilt around the
    new sampler (its class called with ``(sampler, batch_size=..., drop_last=...)``). An iterable dataset
    and a loader already holding a ``DistributedSampler`` are left alone (they shard themselves), and a
    loader the Trainer cannot rebuild is returned with a warning.
    """
    from torch.utils.data.distributed import DistributedSampler

    from .samplers import DistributedSamplerWrapper

    if not isinstance(loader, DataLoader):
        warnings.warn(
            f"a {type(loader).__name__} is not a torch DataLoader, so accelplug cannot shard it across "
            f"{world_size} processes; every rank will see all of its batches.",
            stacklevel=3,
        )
        return loader
    # As Lightning: the loader's sampler decides, also under a batch sampler (where the DataLoader made it
    # sequential); the batch sampler is then made again around the distributed one.
    inner = loader.sampler
    if isinstance(inner, DistributedSampler) or isinstance(loader.dataset, IterableDataset):
        return loader
    options: dict[str, Any] = {
        "num_replicas": world_size,
        "rank": rank,
        "seed": seed,
        "shuffle": isinstance(inner, RandomSampler) if shuffle is None else shuffle,
    }
    sampler: Sampler[Any]
    if isinstance(inner, (RandomSampler, SequentialSampler)):
        sampler = DistributedSampler(loader.dataset, **options)  # type: ignore[arg-type]
    else:
        sampler = DistributedSamplerWrapper(inner, **options)
    if loader.batch_size is not None:
        return rebuild_loader(loader, sampler=sampler)
    return rebuild_loader(loader, batch_sampler=_rebuilt_batch_sampler(loader.batch_sampler, sampler))


def _rebuilt_batch_sampler(batch_sampler: Any, sampler: Sampler[Any]) -> Any:
    """The user's batch sampler, made again around ``sampler`` (its class, its batch size and drop_last)."""
    cls = type(batch_sampler)
    if cls is BatchSampler:
        return BatchSampler(sampler, batch_sampler.batch_size, batch_sampler.drop_last)
    missing = [name for name in ("batch_size", "drop_last") if not hasattr(batch_sampler, name)]
    try:
        if missing:
            raise TypeError(f"it has no {' or '.join(missing)} attribute")
        return cls(sampler, batch_size=batch_sampler.batch_size, drop_last=batch_sampler.drop_last)
    except TypeError as exc:
        raise MisconfigurationException(
            f"the DataLoader's batch_sampler, a {cls.__name__}, cannot be made again around a distributed sampler "
            f"({exc}): accelplug calls {cls.__name__}(sampler, batch_size=..., drop_last=...) so that each process "
            "gets its share. Give it that signature, or shard it yourself and pass use_distributed_sampler=False."
        ) from exc


def _map_style_batched(loader: Any) -> bool:
    """A ``DataLoader`` whose sampler can be replaced: a map-style dataset, batched by ``batch_size``."""
    return (
        isinstance(loader, DataLoader)
        and loader.batch_size is not None
        and not isinstance(loader.dataset, IterableDataset)
    )


def sequential_for_overfit(loaders: list[Any], prefix: str) -> list[Any]:
    """``loaders`` reading their datasets in order, for ``overfit_batches`` (the same first batches every epoch).

    As Lightning: when every loader (inside a ``CombinedLoader`` too) already samples sequentially they are left as
    they are; otherwise a warning says shuffling is turned off, and each ``DataLoader`` with a batch size is made
    again with a ``SequentialSampler``.
    """
    from .combined_loader import CombinedLoader

    def inner(loader: Any) -> list[Any]:
        return list(loader.flattened) if isinstance(loader, CombinedLoader) else [loader]

    every = [one for loader in loaders for one in inner(loader) if _map_style_batched(one)]
    if all(isinstance(one.sampler, SequentialSampler) for one in every):
        return loaders
    rank_zero_warn(
        f"You requested to overfit but enabled {prefix} dataloader shuffling. We are turning off the {prefix} "
        "dataloader shuffling for you (overfit_batches takes the same first batches every epoch)."
    )

    def sequential(one: Any) -> Any:
        if _map_style_batched(one):
            return rebuild_loader(one, sampler=SequentialSampler(one.dataset))  # type: ignore[arg-type]
        return one

    redone: list[Any] = []
    for loader in loaders:
        if isinstance(loader, CombinedLoader):
            loader.flattened = [sequential(one) for one in loader.flattened]
            redone.append(loader)
        else:
            redone.append(sequential(loader))
    return redone


def prepare_loader(
    loader: Any,
    device: torch.device,
    strategy: Sharding,
    *,
    shuffle: bool = True,
    train: bool = False,
    distributed_sampler: bool,
    seed: int | None,
) -> Any:
    """This process's view of ``loader``: sharded across processes when distributed, then as the strategy feeds
    its device (``Strategy.process_dataloader``); ``pin_memory`` and every other setting stay the user's.

    ``shuffle=False`` replaces a DataLoader's sampler with a sequential one (prediction keeps the order,
    ``overfit_batches`` takes the same batches every epoch). ``train=True`` shuffles the shards of a training
    loader, as Lightning does whatever its own sampler. ``distributed_sampler=False`` leaves the sampler alone
    under DDP, for loaders that already shard (Lightning's ``use_distributed_sampler``). ``seed`` shuffles the
    shards; None takes ``seed_everything``'s (``PL_GLOBAL_SEED``), as Lightning. After
    ``seed_everything(..., workers=True)`` a loader without a ``worker_init_fn`` gets Lightning's worker seeding.
    """
    from .combined_loader import CombinedLoader, TrainingBatches

    if isinstance(loader, CombinedLoader):  # fit on several loaders: each one prepared, the batches combined
        loader.flattened = [
            prepare_loader(
                inner,
                device,
                strategy,
                shuffle=shuffle,
                train=train,
                distributed_sampler=distributed_sampler,
                seed=seed,
            )
            for inner in loader.flattened
        ]
        return TrainingBatches(loader)
    if not shuffle and _map_style_batched(loader):
        loader = rebuild_loader(loader, sampler=SequentialSampler(loader.dataset))  # type: ignore[arg-type]
    loader = unpin_where_unsupported(loader, device)
    if strategy.is_distributed and distributed_sampler:
        from .samplers import sampler_seed

        shard_shuffle = (True if train else None) if shuffle else False
        chosen_seed = sampler_seed() if seed is None else seed
        loader = strategy.prepare_dataloader(loader, shuffle_seed=chosen_seed, shuffle=shard_shuffle)
    loader = strategy.process_dataloader(loader)
    from .workers import add_worker_seeding

    return add_worker_seeding(loader, strategy.global_rank)
