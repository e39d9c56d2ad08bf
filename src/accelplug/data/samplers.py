"""Sharing a loader's samples out over processes, as Lightning does under DDP.

A loader's own ``RandomSampler`` or ``SequentialSampler`` is replaced by torch's ``DistributedSampler``
over the dataset; any other sampler (weighted, bucketing by length...) keeps deciding the order and is
wrapped by :class:`DistributedSamplerWrapper`, which hands each process every ``world_size``-th index
of that order. Shuffling uses one seed on every process (``seed_everything``'s, ``PL_GLOBAL_SEED``, 0
without one) and the epoch, so the ranks' shares never overlap and a resumed run sees the same order.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sized
from typing import Any

import torch
from torch.utils.data import Sampler
from torch.utils.data.distributed import DistributedSampler

from ..errors import MisconfigurationException

__all__ = [
    "DistributedSamplerWrapper",
    "UnrepeatedDistributedSampler",
    "UnrepeatedDistributedSamplerWrapper",
    "sampler_seed",
]

SEED_ENV = "PL_GLOBAL_SEED"


def sampler_seed() -> int:
    """The shuffling seed a distributed sampler gets: ``seed_everything``'s (``PL_GLOBAL_SEED``), else 0."""
    raw = os.environ.get(SEED_ENV, "").strip() or "0"
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise MisconfigurationException(
            f"environment variable {SEED_ENV}={raw!r} is not a seed (a non-negative integer); it is set by "
            "seed_everything(seed)."
        )
    return value


class _SamplerWithoutLength(MisconfigurationException, TypeError):
    """A custom sampler to share out over processes has no length (Lightning raises a ``TypeError``)."""


class _FewerSamplesThanProcesses(MisconfigurationException, AssertionError):
    """An unrepeated share would leave a process without a sample (Lightning asserts it)."""


class _WrappedOrder(DistributedSampler[Any]):
    """What both wrappers share: the wrapped sampler's indices at the positions the distributed sampler below
    chose for this process, and the epoch passed on to the wrapped sampler."""

    sampler: Any

    def __iter__(self) -> Iterator[Any]:
        order = list(self.sampler)  # type: ignore[call-overload]
        for position in super().__iter__():
            yield order[position]

    def set_epoch(self, epoch: int) -> None:
        """The epoch for this wrapper's shuffle and, when it has a ``set_epoch`` method, for the wrapped sampler's
        own order too (a sampler that reshuffles per epoch would otherwise repeat its first order forever)."""
        super().set_epoch(epoch)
        forward = getattr(self.sampler, "set_epoch", None)
        if callable(forward):
            forward(epoch)


class DistributedSamplerWrapper(_WrappedOrder):
    """A custom sampler's order shared out over processes (Lightning's ``DistributedSamplerWrapper``).

    Each epoch the wrapped sampler is iterated once, in full, on every process (so a random sampler must
    be seeded the same everywhere, as ``seed_everything`` does); the positions of that order are then
    shared out exactly as ``DistributedSampler`` shares a dataset's: padded to a multiple of the number
    of processes (or cut, ``drop_last=True``), shuffled with the seed and epoch when ``shuffle=True``.
    """

    def __init__(self, sampler: Sampler[Any] | Any, *args: Any, **kwargs: Any) -> None:
        if not isinstance(sampler, Sized) or len(sampler) == float("inf"):
            raise _SamplerWithoutLength(
                "You seem to have configured a sampler in your DataLoader which does not provide a finite "
                f"`__len__` method: a {type(sampler).__name__} has no length, so its indices cannot be shared out "
                "over processes; give it a __len__, or pass use_distributed_sampler=False and shard the data "
                "yourself."
            )
        self.sampler = sampler
        super().__init__(range(len(sampler)), *args, **kwargs)  # type: ignore[arg-type]


class UnrepeatedDistributedSampler(DistributedSampler[Any]):
    """Each process gets every ``num_replicas``-th index of the dataset, and no index twice (Lightning's
    ``UnrepeatedDistributedSampler``, which its Trainer puts under a prediction loader).

    torch's ``DistributedSampler`` pads the shares to one length by repeating indices, so a prediction gathered from
    every process would hold some samples twice; here the shares differ in length by at most one instead. The order
    is the dataset's, or with ``shuffle=True`` a permutation drawn from the epoch alone, as Lightning draws it (its
    ``seed`` is not used). Every process gets at least one sample (or none has any): a process without a batch
    would leave the others waiting for it in DDP's first synchronisation.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        dataset = args[0] if args else kwargs.get("dataset")  # torch's parameters, passed on as given
        if not isinstance(dataset, Sized):  # before torch's constructor, which takes its length
            raise TypeError(
                f"The given dataset must implement the `__len__` method: a {type(dataset).__name__} has no "
                "length, so it cannot be shared out over processes without repeating samples."
            )
        super().__init__(*args, **kwargs)
        self.total_size = len(dataset)
        self.num_samples = len(range(self.rank, self.total_size, self.num_replicas))
        if self.num_samples == 0 and self.total_size > 0:
            raise _FewerSamplesThanProcesses(
                f"a dataset of {self.total_size} samples cannot give each of {self.num_replicas} processes one "
                f"(process {self.rank} would have none, and the others would wait for it); use at most "
                f"{self.total_size} processes or a larger dataset."
            )

    def __iter__(self) -> Iterator[Any]:
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(self.epoch)
            order = torch.randperm(self.total_size, generator=generator).tolist()
        else:
            order = list(range(self.total_size))
        return iter(order[self.rank :: self.num_replicas])


class UnrepeatedDistributedSamplerWrapper(_WrappedOrder, UnrepeatedDistributedSampler):
    """A custom sampler's order shared out over processes without repeating an index (Lightning's
    ``UnrepeatedDistributedSamplerWrapper``): the wrapped sampler is iterated once per epoch on every process and
    its positions are shared out as :class:`UnrepeatedDistributedSampler` shares a dataset's."""

    def __init__(self, sampler: Sampler[Any] | Any, *args: Any, **kwargs: Any) -> None:
        if not isinstance(sampler, Sized):
            raise _SamplerWithoutLength(
                f"a {type(sampler).__name__} has no `__len__`, so its indices cannot be shared out over processes"
            )
        self.sampler = sampler
        super().__init__(range(len(sampler)), *args, **kwargs)
