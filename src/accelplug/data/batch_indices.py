"""Which dataset indices each batch of a loader held, for prediction writers (Lightning's ``batch_indices``).

A ``DataLoader``'s batch sampler is wrapped in :class:`IndexRecordingBatchSampler`, which keeps every list of
indices it hands out; the prediction loop reads entry ``batch_idx`` (workers may fetch ahead, so the list can be
longer than the batches seen so far). Only the prediction loop uses it, and only when a writer asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch.utils.data import DataLoader, IterableDataset

from .loaders import rebuild_loader

__all__ = ["IndexRecordingBatchSampler", "record_batch_indices"]


class IndexRecordingBatchSampler:
    """A batch sampler that remembers the indices of every batch of the current pass (``seen_batch_indices``)."""

    def __init__(self, batch_sampler: Any) -> None:
        self._batch_sampler = batch_sampler
        self.seen_batch_indices: list[list[int]] = []

    def __iter__(self) -> Iterator[list[int]]:
        self.seen_batch_indices = []
        for batch in self._batch_sampler:
            self.seen_batch_indices.append(batch)
            yield batch

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def __getattr__(self, name: str) -> Any:  # batch_size, drop_last, sampler: the wrapped sampler's
        if name == "_batch_sampler":
            raise AttributeError(name)
        return getattr(self._batch_sampler, name)


def record_batch_indices(loader: Any) -> tuple[Any, IndexRecordingBatchSampler | None]:
    """``loader`` rebuilt around a recording batch sampler, and the recorder; ``(loader, None)`` for what has no
    batch sampler (an iterable dataset, ``batch_size=None``, or not a ``DataLoader``), as Lightning cannot tell
    the indices there either."""
    if not isinstance(loader, DataLoader) or isinstance(loader.dataset, IterableDataset):
        return loader, None
    if loader.batch_sampler is None:
        return loader, None
    recorder = IndexRecordingBatchSampler(loader.batch_sampler)
    rebuilt = rebuild_loader(loader, batch_sampler=recorder, batch_size=1, sampler=None, drop_last=False)
    return rebuilt, recorder
