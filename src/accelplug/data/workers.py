"""A DataLoader's worker processes: seeded as Lightning seeds them after ``seed_everything(seed, workers=True)``,
and stopped when a Trainer call ends (:func:`shutdown_workers`).

torch gives worker ``i`` the seed ``base + i`` for torch only; Python's ``random`` and numpy would repeat
the same draws in every worker and every process. Lightning then installs its ``pl_worker_init_function``,
which derives each worker's seeds from (base seed, worker id, global rank). The function here derives the
same seeds with the same published arithmetic (the MurmurHash3 64-bit finalizer, then Knuth's MMIX linear
congruential generator; numpy's ``SeedSequence`` for numpy), so augmentations drawn in workers match a
Lightning run draw for draw.
"""

from __future__ import annotations

import functools
import inspect
import multiprocessing
import os
import random
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch
from torch.utils.data import DataLoader

from ..errors import MisconfigurationException

__all__ = [
    "add_worker_seeding",
    "release_iterators",
    "shutdown_workers",
    "suggested_max_num_workers",
    "warn_spawned_workers",
    "worker_init_function",
    "worker_seeds",
]

_MASK = (1 << 64) - 1
SEED_WORKERS_ENV = "PL_SEED_WORKERS"


def warn_spawned_workers(loaders: Iterable[Any], name: str) -> None:
    """Lightning's advice for a loader whose workers start by ``spawn`` (``ddp_spawn``, a ``"spawn"`` context):
    each epoch pays the start of fresh interpreters unless ``persistent_workers=True`` keeps them. ``name``: the
    hook the loaders stand for (``train_dataloader``...); a ``CombinedLoader`` is looked into."""
    from ..distributed.rank_zero import rank_zero_warn

    for given in loaders:
        inner = getattr(given, "flattened", None)
        for loader in inner if isinstance(inner, list) else [given]:
            if not isinstance(loader, DataLoader) or loader.num_workers == 0 or loader.persistent_workers:
                continue
            context = loader.multiprocessing_context
            # not get_start_method(): without allow_none it would fix the process's start method as a side effect
            method = (
                context.get_start_method()
                if context is not None
                else multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
            )
            if method == "spawn":
                rank_zero_warn(
                    f"Consider setting `persistent_workers=True` in '{name}' to speed up the dataloader worker "
                    f"initialization: its {loader.num_workers} worker(s) start as new interpreters (spawn) at every "
                    "epoch otherwise."
                )


def worker_seeds(base_seed: int, worker_id: int, global_rank: int, count: int) -> list[int]:
    """``count`` 64-bit seeds for one worker of one process, all bits mixed even for small inputs."""
    mixed = (base_seed << 32) | (worker_id << 16) | global_rank  # wider than 64 bits until the first multiply
    for multiplier in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):  # MurmurHash3's fmix64
        mixed ^= mixed >> 33
        mixed = (mixed * multiplier) & _MASK
    mixed ^= mixed >> 33
    seeds = []
    for _ in range(count):
        mixed = (mixed * 6364136223846793005 + 1) & _MASK  # Knuth's MMIX LCG
        seeds.append(mixed)
    return seeds


def worker_init_function(worker_id: int, rank: int = 0) -> None:
    """Seed torch, ``random`` and numpy (when loaded) in a DataLoader worker from its id and the process's rank."""
    base_seed = torch.initial_seed() - worker_id  # torch seeded this worker with base + worker_id
    first, second, third, _ = worker_seeds(base_seed, worker_id, rank, count=4)
    torch.manual_seed(first)
    random.seed((second << 32) | third)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(numpy.random.SeedSequence([base_seed, worker_id, rank]).generate_state(4))


def add_worker_seeding(loader: Any, rank: int) -> Any:
    """Give ``loader`` the worker seeding, when ``seed_everything(..., workers=True)`` asked and it has none."""
    if os.environ.get(SEED_WORKERS_ENV) != "1" or not isinstance(loader, DataLoader):
        return loader
    if loader.worker_init_fn is None:
        loader.worker_init_fn = functools.partial(worker_init_function, rank=rank)
    return loader


def _cpus_available() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def suggested_max_num_workers(local_world_size: int) -> int:
    """An upper bound for ``DataLoader(num_workers=...)``: this machine's usable CPUs shared among its processes,
    one left for each main process, and never below 1."""
    if isinstance(local_world_size, bool) or not isinstance(local_world_size, int) or local_world_size < 1:
        raise MisconfigurationException(
            f"suggested_max_num_workers(local_world_size={local_world_size!r}): `local_world_size` should be >= 1, "
            "an int: the number of processes on this machine."
        )
    return max(1, _cpus_available() // local_world_size - 1)


def shutdown_workers(loaders: Any) -> None:
    """Stop the worker processes of every ``DataLoader`` in ``loaders`` (nested in lists, tuples, dicts and combined
    loaders), as Lightning does when a fit, validate, test or predict call ends, also one that failed.

    ``persistent_workers=True`` keeps a loader's workers alive between its epochs, held by its ``_iterator``; once the
    call is over nothing iterates it again, and the processes (with their copies of the dataset) would otherwise live
    until the loader is garbage collected. The loader forgets its iterator, so a later call starts fresh workers.
    """
    from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

    def stop(item: Any) -> Iterable[Any]:
        if isinstance(item, DataLoader):
            iterator = getattr(item, "_iterator", None)
            if isinstance(iterator, _MultiProcessingDataLoaderIter):
                iterator._shutdown_workers()
            item._iterator = None
            return ()
        if isinstance(item, Mapping):
            return item.values()
        if isinstance(item, (list, tuple)):
            return item
        # a CombinedLoader (its loaders in ``flattened``) or the fit's batches around one (``combined``)
        combined = getattr(item, "combined", None)
        return [*(getattr(item, "flattened", None) or []), *([] if combined is None else [combined])]

    _visit_once([loaders], stop)


def release_iterators(held: dict[Any, Any]) -> None:
    """Drop the loops' running iterators (``Run.iterators``, emptied here) and stop the worker processes of those
    that someone else still holds (the Trainer calls it after a failed call; after one that went through, dropping
    the run's reference ends them).

    Dropping the loop's reference is not enough when a call failed in the middle of an epoch: the exception's
    traceback keeps the loop's frames, and with them the epoch's iterator and its workers, alive for as long as the
    caller keeps the exception (a notebook keeps the last one). Lightning's teardown ends them; so does this: a
    generator around an iterator (a profiler's timed fetches) is closed, which lets go of the iterator it holds, a
    combined loader's pass is walked into, and once the references are dropped a ``DataLoader`` iterator that still
    lives stops its workers. One that died with its last reference stopped them itself, once, as in Lightning.
    """
    import weakref

    from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

    from .combined_loader import CombinedLoader, TrainingBatches

    found: list[weakref.ref[_MultiProcessingDataLoaderIter]] = []

    def release(item: Any) -> Iterable[Any]:
        if isinstance(item, _MultiProcessingDataLoaderIter):
            found.append(weakref.ref(item))
            return ()
        if inspect.isgenerator(item):
            frame = item.gi_frame
            # what it holds, read before closing it drops them (others may hold them too)
            inner = list(frame.f_locals.values()) if frame is not None else []
            item.close()
            return inner
        parts = getattr(item, "iterators", None)  # a combined loader's pass
        inner = list(parts) if isinstance(parts, list) else []
        # a CombinedLoader (its own iterator, its pass in ``_iterator``) and the fit's batches around one
        if isinstance(item, (CombinedLoader, TrainingBatches)):
            inner += [getattr(item, "_iterator", None), getattr(item, "combined", None)]
        return inner

    _visit_once(list(held.values()), release)
    held.clear()
    for ref in found:
        iterator = ref()
        if iterator is not None and not getattr(iterator, "_shutdown", False):
            iterator._shutdown_workers()


def _visit_once(roots: Iterable[Any], visit: Callable[[Any], Iterable[Any]]) -> None:
    """Call ``visit`` once on each object reachable from ``roots`` (by identity: a loader met twice is stopped once);
    ``visit`` acts on an object and returns the objects it holds, which are visited in turn."""
    pending, seen = list(roots), set()
    while pending:
        item = pending.pop()
        if id(item) not in seen:
            seen.add(id(item))
            pending.extend(visit(item))
