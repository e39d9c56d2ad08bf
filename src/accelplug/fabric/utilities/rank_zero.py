"""``lightning.fabric.utilities.rank_zero``'s path: the one ``rank_zero_only`` and its companions.

They live in :mod:`accelplug.distributed.rank_zero`.
"""

from __future__ import annotations

from ...distributed.rank_zero import (
    is_rank_zero,
    rank_zero_deprecation,
    rank_zero_info,
    rank_zero_only,
    rank_zero_warn,
    set_rank,
)

__all__ = [
    "is_rank_zero",
    "rank_zero_deprecation",
    "rank_zero_info",
    "rank_zero_only",
    "rank_zero_warn",
    "set_rank",
]
