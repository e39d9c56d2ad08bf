"""``lightning.pytorch.tuner.batch_size_scaling``'s path: the batch-size search, the same objects."""

from __future__ import annotations

from ...tuner.batch_size_scaling import search_batch_size

__all__ = ["search_batch_size"]
