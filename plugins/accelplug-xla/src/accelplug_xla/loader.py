"""Feeding an XLA device: batches uploaded by torch_xla's background threads, the step marked per batch.

:class:`DeviceFeed` is what the ``single_xla`` strategy gives the loops in place of each loader. Each
epoch it puts torch_xla's ``ParallelLoader`` (the machinery behind ``MpDeviceLoader``) between the
loader and the device and, as ``MpDeviceLoader`` does, marks the step before handing out each batch
(so evaluation and prediction, which have no optimizer step, also run one graph per batch). What it
adds, each something the loops rely on:

- **The same random draws as without it.** ``ParallelLoader`` iterates the loader in a thread of its
  own, so the draws a shuffling loader makes when an epoch starts (the ``DataLoader``'s base seed,
  the sampler's permutation) would come from torch's generator at a moment that races with the
  training thread, and a resumed run could shuffle differently. The feed starts the loader's
  iterator and takes its first batch on the calling thread, so those draws happen exactly where they
  happen without XLA; the background threads only read on. Its marks leave the device's generator
  alone (:func:`~accelplug_xla.runtime.mark_step`), so prefetching a batch or skipping batches on a
  resume does not change the random numbers of later steps.
- **No silent short epoch.** An exception raised by the loader in the background thread would only
  end the epoch early there (with a traceback on stderr); the feed hands it to the training thread,
  which raises it where the batch was expected.
- **Threads that end.** An epoch left early (``limit_train_batches``, ``max_steps``, a stop) leaves
  the threads waiting to upload batches nobody takes; the feed closes them when the next epoch starts
  and when the run ends (:meth:`DeviceFeed.close`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import torch

from . import runtime

__all__ = ["DeviceFeed"]

_END = object()


class _Source:
    """One epoch of a loader whose first batch was already taken: read by torch_xla's loader thread."""

    def __init__(self, first: Any, rest: Iterator[Any]) -> None:
        self._first = first
        self._rest = rest
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[Any]:
        yield self._first
        try:
            yield from self._rest
        except Exception as exc:  # handed to the training thread by DeviceFeed
            self.error = exc


class DeviceFeed:
    """A loader whose batches arrive on ``device`` (an XLA device), uploaded in the background."""

    def __init__(self, loader: Any, device: torch.device) -> None:
        self.loader = loader
        self.device = device
        self._parallel: list[Any] = []
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.loader)

    @property
    def sampler(self) -> Any:
        """The wrapped loader's sampler (``Strategy.set_epoch`` tells a per-epoch shuffler the epoch)."""
        return getattr(self.loader, "sampler", None)

    def __iter__(self) -> Iterator[Any]:
        self.close()  # the previous epoch's threads, if it ended early
        batches = iter(self.loader)
        first = next(batches, _END)  # the loader's epoch-start draws, on this thread
        if first is _END:
            return iter(())
        source = _Source(first, batches)
        parallel = runtime.parallel_loader(source, self.device)
        with self._lock:
            self._parallel.append(parallel)
        return self._batches(parallel, source)

    def _batches(self, parallel: Any, source: _Source) -> Iterator[Any]:
        while True:
            runtime.mark_step(self.device)  # the graph of what came before this batch
            batch = parallel.next_item(self.device)
            if batch is None:
                break
            yield batch
        error = source.error or runtime.upload_error(parallel)
        if error is not None:
            raise error

    def close(self) -> None:
        """Stop the background threads of epochs that were left before their end."""
        with self._lock:
            parallel, self._parallel = self._parallel, []
        for loader in parallel:
            loader.close()
