"""Steps that fetch their own batches: ``training_step(self, dataloader_iter)`` and its evaluation siblings.

Lightning lets a step method name a ``dataloader_iter`` parameter instead of ``batch, batch_idx``: the loop then
hands the step an iterator over the stage's ``(batch, batch_idx, dataloader_idx)`` triples and the step pulls as
many as it wants (to overlap a transfer with compute, or to build a micro-batch pipeline). The loop no longer
moves the batches (no transfer hooks: the step moves what it fetched) and cannot know the batch of a step
before the step has run, so the batch hooks get the last batch fetched so far (``None`` and index 0 before the
first) and the epoch ends when the iterator is exhausted, after however many steps that took.

:func:`takes_dataloader_iter` tells such a step; :class:`DataloaderIter` is the iterator the step receives;
:func:`iterator_steps` is the epoch's walk, one item per step rather than per batch.
"""

from __future__ import annotations

import inspect
import itertools
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import PossibleUserWarning

__all__ = [
    "DataloaderIter",
    "chained",
    "iterator_steps",
    "single_loader",
    "takes_dataloader_iter",
    "warn_dataloader_iter",
]

_PARAMETER = "dataloader_iter"


def takes_dataloader_iter(method: Any) -> bool:
    """Whether ``method`` names a ``dataloader_iter`` parameter itself (``**kwargs`` alone does not count)."""
    if not callable(method):
        return False
    try:
        parameters = inspect.signature(inspect.unwrap(method)).parameters
    except (TypeError, ValueError):
        return False
    return _PARAMETER in parameters


def warn_dataloader_iter(step_name: str) -> None:
    """Once per stage run, as Lightning warns: the loop cannot give hooks the index of a batch the step fetches."""
    warnings.warn(
        f"`{step_name}` takes `dataloader_iter`: it fetches its own batches, which the Trainer does not move to "
        "the device, and the batch hooks see the last batch fetched so far (their `batch_idx` is that batch's, "
        "which need not count the steps; gradient accumulation counts steps). This step signature is "
        "experimental in Lightning and may change.",
        PossibleUserWarning,
        stacklevel=2,
    )


class DataloaderIter(Iterator[tuple[Any, int, int]]):
    """What a ``dataloader_iter`` step receives: ``next()`` gives ``(batch, batch_idx, dataloader_idx)``.

    ``done`` is True once the stage's batches are all fetched (known in advance when the loaders have a length,
    else when the loaders ran dry), ``fetched`` counts the batches taken this epoch and ``length`` is how many
    the epoch has (None: unknown). ``batch``, ``batch_idx`` and ``dataloader_idx`` are the last batch fetched:
    what the loop passes to the batch hooks.
    """

    def __init__(self, triples: Iterable[tuple[Any, int, int]], length: int | None) -> None:
        self._source = iter(triples)
        self.length = length
        self.fetched = 0
        self.done = length == 0
        self.batch: Any = None
        self.batch_idx = 0
        self.dataloader_idx = 0

    def __iter__(self) -> DataloaderIter:
        return self

    def __next__(self) -> tuple[Any, int, int]:
        if self.done:
            raise StopIteration
        try:
            triple = next(self._source)
        except StopIteration:
            self.done = True
            raise
        self.fetched += 1
        if self.length is not None and self.fetched >= self.length:
            self.done = True
        self.batch, self.batch_idx, self.dataloader_idx = triple
        return triple


def single_loader(loader: Iterable[Any], length: int | None, dataloader_idx: int = 0) -> Iterator[tuple[Any, int, int]]:
    """One loader's batches as ``(batch, batch_idx, dataloader_idx)``, at most ``length`` of them."""
    batches: Iterator[Any] = iter(loader)
    if length is not None:
        batches = itertools.islice(batches, length)
    for batch_idx, batch in enumerate(batches):
        yield batch, batch_idx, dataloader_idx


def chained(loaders: Iterable[tuple[Iterable[Any], int | None]]) -> Iterator[tuple[Any, int, int]]:
    """Several loaders one after the other (evaluation's order), each at most its length."""
    for dataloader_idx, (loader, length) in enumerate(loaders):
        yield from single_loader(loader, length, dataloader_idx)


def iterator_steps(source: DataloaderIter, first: int = 0) -> Iterator[tuple[int, DataloaderIter]]:
    """``(step_idx, source)`` for each step of an epoch, until ``source`` is exhausted."""
    step = first
    while not source.done:
        yield step, source
        step += 1
