"""``lightning.pytorch.callbacks.batch_size_finder``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.batch_size_finder import BatchSizeFinder

__all__ = ["BatchSizeFinder"]
