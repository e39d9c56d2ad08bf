"""Rebuilding a user's ``DataLoader`` with one setting changed: a sharding sampler.

Kept below the Trainer and the strategies (both use it). A rebuilt loader copies every setting of
the user's and changes only the sampler (DDP), so what the user chose (workers, collate_fn, generator,
``pin_memory``...) survives. ``pin_memory`` stays the user's, as in Lightning 2.6: a dataset that already
holds CUDA tensors cannot be pinned, and pinning is the user's call.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import torch
from torch.utils.data import BatchSampler, DataLoader, IterableDataset, RandomSampler, Sampler, SequentialSampler

from ..distributed.rank_zero import rank_zero_warn
from ..errors import MisconfigurationException, PossibleUserWarning
from ..hardware.capabilities import capabilities
from ._made_with import made_with

__all__ = [
    "Sharding",
    "for_prediction",
    "prepare_loader",
    "rebuild_loader",
    "rebuilt_batch_sampler",
    "sequential_for_overfit",
    "unpin_where_unsupported",
    "warn_padded_evaluation",
    "with_distributed_sampler",
]


class Sharding(Protocol):
    """What :func:`prepare_loader` asks of a strategy (a Protocol, so this module never imports one)."""

    @property
    def is_distributed(self) -> bool: ...

    @property
    def global_rank(self) -> int: ...

    def prepare_dataloader(
        self, loader: Any, *, shuffle_seed: int, shuffle: bool | None = None, unrepeated: bool = False
    ) -> Any: ...

    def process_dataloader(self, loader: Any) -> Any: ...


def rebuild_loader(loader: DataLoader[Any], **changes: Any) -> DataLoader[Any]:
    """A new loader of the user's class with the user's settings, except ``changes``."""
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
    if type(loader) is DataLoader:
        return DataLoader(**kwargs)
    return _rebuilt_subclass(loader, kwargs, set(changes))


class _UninjectableLoader(MisconfigurationException, TypeError):
    """A loader class whose constructor cannot take the new sampler: the ``TypeError`` Lightning raises too."""


def _rebuilt_subclass(loader: DataLoader[Any], settings: dict[str, Any], changed: set[str]) -> DataLoader[Any]:
    """A ``DataLoader`` subclass made again by its own constructor, so its behaviour survives the rebuild.

    As Lightning does for a loader it did not see created: each constructor parameter is read from the
    instance attribute of that name (the new settings win), and the ``DataLoader`` settings travel through
    ``**kwargs`` when the constructor takes them (``dataset`` only when it names it: a subclass without that
    parameter makes its own). A required parameter with no attribute of its name cannot be recovered.
    """
    cls = type(loader)
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    named = {p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    arguments: dict[str, Any] = {}
    missing: list[str] = []
    given = made_with(loader) or {}  # what its constructor got, when made in a *_dataloader() method
    for parameter in parameters:
        if parameter.name not in named:
            continue
        if parameter.name in settings:
            arguments[parameter.name] = settings[parameter.name]
        elif hasattr(loader, parameter.name):
            arguments[parameter.name] = getattr(loader, parameter.name)
        elif parameter.name in given:
            arguments[parameter.name] = given[parameter.name]
        elif parameter.default is parameter.empty:
            missing.append(parameter.name)
    if missing:
        raise MisconfigurationException(
            f"Trying to inject custom `Sampler` into the `{cls.__name__}` instance. This would fail as some of the "
            f"`__init__` arguments are not available as instance attributes. The missing attributes are {missing}: "
            f"accelplug makes the loader again by calling {cls.__name__}(...) with each argument read from the "
            f"attribute of its name. Store them in `__init__` (`self.{missing[0]} = {missing[0]}`), or pass "
            "use_distributed_sampler=False and shard the data yourself."
        )
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        for name, value in settings.items():
            if name != "dataset" or "dataset" in named:
                arguments.setdefault(name, value)
    unreachable = sorted(name for name in changed if name not in arguments and settings[name] is not None)
    if unreachable:  # its constructor would drop the new sampler without a word
        raise _UninjectableLoader(
            f"Trying to inject parameters into the `{cls.__name__}` instance. This would fail as it doesn't expose "
            f"all its attributes in the `__init__` signature. The missing arguments are {unreachable}: add them "
            f"(or `**kwargs` passed on to DataLoader) to {cls.__name__}.__init__, or pass "
            "use_distributed_sampler=False and shard the data yourself."
        )
    return cls(**arguments)


def unpin_where_unsupported(loader: Any, device: torch.device) -> Any:
    """``loader`` without ``pin_memory`` when the user asked for pinning but batches go to an out-of-tree device
    whose runtime cannot pin host memory (no pinned allocator): its loader's pinning thread would raise on the first
    batch. :mod:`accelplug.hardware.capabilities` finds that on the first try. Every other loader is left as given
    (Lightning 2.6 never changes ``pin_memory``)."""
    pins = isinstance(loader, DataLoader) and loader.pin_memory
    if not pins or device.type in ("cpu", "cuda", "mps") or isinstance(loader.dataset, IterableDataset):
        return loader
    return loader if capabilities(device.type).pins_memory() else rebuild_loader(loader, pin_memory=False)


def with_distributed_sampler(
    loader: Any,
    world_size: int,
    rank: int,
    seed: int,
    *,
    shuffle: bool | None = None,
    unrepeated: bool = False,
) -> Any:
    """``loader`` with a distributed sampler, so that each rank sees its own share of every epoch (Lightning's rule).

    ``shuffle=None`` shuffles the shares when the loader shuffled (Fabric, evaluation); the Trainer passes
    True for training, as Lightning shuffles every training loader it shards. A ``RandomSampler`` or
    ``SequentialSampler`` becomes a ``DistributedSampler`` over the dataset; a custom sampler keeps its
    order inside a :class:`~.samplers.DistributedSamplerWrapper`; a batch sampler is rebuilt around the
    new sampler (its class called with ``(sampler, batch_size=..., drop_last=...)``). An iterable dataset
    and a loader already holding a ``DistributedSampler`` are left alone (they shard themselves), and a
    loader the Trainer cannot rebuild is returned with a warning.

    ``unrepeated=True`` (prediction) shares the loader's own sampler out without padding, whatever its kind
    (:class:`~.samplers.UnrepeatedDistributedSamplerWrapper`): every sample goes to exactly one process, so the
    shares may differ by one; a batch sampler made again around it keeps every batch (``drop_last=False``).
    """
    from torch.utils.data.distributed import DistributedSampler

    from .samplers import DistributedSamplerWrapper, UnrepeatedDistributedSamplerWrapper

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
    if unrepeated:
        sampler = UnrepeatedDistributedSamplerWrapper(inner, **options)
    elif isinstance(inner, (RandomSampler, SequentialSampler)):
        sampler = DistributedSampler(loader.dataset, **options)  # type: ignore[arg-type]
    else:
        sampler = DistributedSamplerWrapper(inner, **options)
    if loader.batch_size is not None:
        return rebuild_loader(loader, sampler=sampler)
    batches = rebuilt_batch_sampler(loader.batch_sampler, sampler, predicting=unrepeated)
    return rebuild_loader(loader, batch_sampler=batches)


def rebuilt_batch_sampler(
    batch_sampler: Any, sampler: Sampler[Any] | Iterable[Any], *, predicting: bool = False
) -> Any:
    """The user's batch sampler, made again around ``sampler`` (its class, its batch size and drop_last).

    ``predicting=True`` makes it with ``drop_last=False``, so that every sample is predicted, as Lightning does; a
    batch sampler without ``batch_size`` and ``drop_last`` attributes is then kept as it is, with a warning (a
    prediction should not fail for it), where another stage refuses it.
    """
    cls = type(batch_sampler)
    if cls is BatchSampler:
        drop_last = False if predicting else batch_sampler.drop_last
        return BatchSampler(sampler, batch_sampler.batch_size, drop_last)
    missing = [name for name in ("batch_size", "drop_last") if not hasattr(batch_sampler, name)]
    if missing and predicting:
        rank_zero_warn(
            f"You are using a custom batch sampler `{cls.__qualname__}` for prediction: accelplug cannot make it "
            f"again with drop_last=False (it has no {' or '.join(missing)} attribute), so it is used as it is and "
            "may leave samples unpredicted. Make sure it yields every index.",
            category=PossibleUserWarning,
        )
        return batch_sampler
    try:
        if missing:
            raise TypeError(f"it has no {' or '.join(missing)} attribute")
        drop_last = False if predicting else batch_sampler.drop_last
        return cls(sampler, batch_size=batch_sampler.batch_size, drop_last=drop_last)
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


def for_prediction(loader: Any, *, batch_sampler_rebuilt: bool = False) -> Any:
    """``loader`` made again for prediction, as Lightning makes every prediction loader: its batches keep every
    sample (``drop_last=False``) and an :class:`~.batch_indices.IndexRecordingBatchSampler` records which dataset
    indices each batch held (a ``BasePredictionWriter``'s ``batch_indices``).

    The sampler stays the loader's (``batch_size`` given) or, under a batch sampler of the user's, the loader's
    ``sampler`` is put in a new one of its class (``batch_sampler_rebuilt``: the distributed sampler already was).
    An iterable dataset, ``batch_size=None`` without a batch sampler, or not a ``DataLoader``: left as it is (no
    indices to record, as in Lightning).
    """
    from .batch_indices import IndexRecordingBatchSampler

    if not isinstance(loader, DataLoader) or isinstance(loader.dataset, IterableDataset):
        return loader
    batches = loader.batch_sampler
    if batches is None or isinstance(batches, IndexRecordingBatchSampler):
        return loader
    if loader.batch_size is not None:
        batches = BatchSampler(loader.sampler, loader.batch_size, drop_last=False)
    elif not batch_sampler_rebuilt:
        batches = rebuilt_batch_sampler(batches, loader.sampler, predicting=True)
    recorder = IndexRecordingBatchSampler(batches)
    return rebuild_loader(loader, batch_sampler=recorder, batch_size=1, sampler=None, drop_last=False)


def is_shuffled(loader: Any) -> bool:
    """Whether ``loader`` draws its samples in random order: its sampler (under a batch sampler, the batch sampler's
    own) is a ``RandomSampler``. An iterable dataset, a loader without a sampler, or any other sampler: no."""
    if isinstance(getattr(loader, "dataset", None), IterableDataset) or not hasattr(loader, "sampler"):
        return False
    batches = getattr(loader, "batch_sampler", None)
    sampler = loader.sampler if batches is None else getattr(batches, "sampler", batches)
    return isinstance(sampler, RandomSampler)


def warn_shuffled_evaluation(loaders: Sequence[Any], prefix: str) -> None:
    """Lightning's advice for a validation, test or prediction loader that shuffles (``prefix``: ``val``, ``test``,
    ``predict``): the order changes nothing in the metrics, but it makes runs harder to compare."""
    if any(is_shuffled(loader) for loader in loaders):
        rank_zero_warn(
            f"Your `{prefix}_dataloader`'s sampler has shuffling enabled, it is strongly recommended that you turn "
            "shuffling off for val/test dataloaders.",
            category=PossibleUserWarning,
        )


def warn_padded_evaluation(given: Sequence[Any], prepared: Sequence[Any], call: str) -> None:
    """Lightning's advice when a standalone ``validate``/``test`` call shared its loaders out with a padded
    ``DistributedSampler``: some samples are then evaluated twice, so the metrics are slightly off."""
    from torch.utils.data.distributed import DistributedSampler

    for raw, ready in zip(given, prepared, strict=True):
        sampler = getattr(ready, "sampler", None)
        sampler = getattr(getattr(ready, "batch_sampler", None), "sampler", sampler)
        if not isinstance(sampler, DistributedSampler) or sampler is getattr(raw, "sampler", None):
            continue
        if sampler.num_replicas > 1:
            rank_zero_warn(
                f"Using `DistributedSampler` with the dataloaders. During `trainer.{call}()`, it is recommended to "
                "use `Trainer(devices=1, num_nodes=1)` so that each sample is evaluated exactly once: the "
                f"DistributedSampler pads the {sampler.num_replicas} processes' shares to one length by repeating "
                "samples when the dataset does not divide evenly.",
                category=PossibleUserWarning,
            )
            return


def prepare_loader(
    loader: Any,
    device: torch.device,
    strategy: Sharding,
    *,
    shuffle: bool = True,
    train: bool = False,
    predict: bool = False,
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

    ``predict=True`` is Lightning's prediction rule: the loader's own sampler keeps its order (a shuffled loader
    predicts in shuffled order); under DDP it is shared out without padding, each sample to one process
    (:class:`~.samplers.UnrepeatedDistributedSamplerWrapper`); and the batch sampler is made again with
    ``drop_last=False`` and records each batch's dataset indices (:func:`for_prediction`).
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
                predict=predict,
                distributed_sampler=distributed_sampler,
                seed=seed,
            )
            for inner in loader.flattened
        ]
        return TrainingBatches(loader)
    if not shuffle and _map_style_batched(loader):
        loader = rebuild_loader(loader, sampler=SequentialSampler(loader.dataset))  # type: ignore[arg-type]
    loader = unpin_where_unsupported(loader, device)
    sharded = strategy.is_distributed and distributed_sampler
    if sharded:
        from .samplers import sampler_seed

        shard_shuffle = (True if train else None) if shuffle else False
        chosen_seed = sampler_seed() if seed is None else seed
        # ``unrepeated`` is passed for prediction only: a strategy of another package need not know the keyword
        extra = {"unrepeated": True} if predict else {}
        loader = strategy.prepare_dataloader(loader, shuffle_seed=chosen_seed, shuffle=shard_shuffle, **extra)
    if predict:
        loader = for_prediction(loader, batch_sampler_rebuilt=sharded)
    loader = strategy.process_dataloader(loader)
    from .workers import add_worker_seeding

    return add_worker_seeding(loader, strategy.global_rank)
