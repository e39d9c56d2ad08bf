"""``lightning.pytorch.callbacks.lr_finder``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.lr_finder import LearningRateFinder

__all__ = ["LearningRateFinder"]
