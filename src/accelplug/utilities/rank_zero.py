"""``lightning.pytorch.utilities.rank_zero``'s path: the one ``rank_zero_only`` and its companions.

They live in :mod:`accelplug.distributed.rank_zero`.

One ``rank_zero_only`` for the whole process: ``fabric.launch()`` and the Trainer's process setup set its
``rank``, and every decorated function reads it.
"""

from __future__ import annotations

from ..distributed.rank_zero import (
    rank_zero_debug,
    rank_zero_deprecation,
    rank_zero_info,
    rank_zero_only,
    rank_zero_warn,
)

__all__ = [
    "rank_zero_debug",
    "rank_zero_deprecation",
    "rank_zero_info",
    "rank_zero_only",
    "rank_zero_warn",
]
