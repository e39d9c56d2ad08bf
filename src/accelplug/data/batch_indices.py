"""Which dataset indices each batch of a loader held, for prediction writers (Lightning's ``batch_indices``).

A prediction ``DataLoader``'s batch sampler is wrapped in :class:`IndexRecordingBatchSampler`
(:func:`accelplug.data.loaders.for_prediction`, as Lightning wraps every prediction loader's), which keeps every
list of indices it hands out; the prediction loop reads entry ``batch_idx`` (workers may fetch ahead, so the list
can be longer than the batches seen so far) and gives it to the prediction writers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["IndexRecordingBatchSampler"]


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
