"""``lightning.pytorch.tuner.lr_finder``'s path: the range test's result object and schedules, the same objects."""

from __future__ import annotations

from ...tuner.lr_finder import _ExponentialLR, _LinearLR, _LRCallback, _LRFinder

__all__ = ["_ExponentialLR", "_LRCallback", "_LRFinder", "_LinearLR"]
