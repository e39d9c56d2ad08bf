"""``lightning.fabric.utilities.rank_zero``'s path (imports only)."""

from __future__ import annotations

from ...distributed.rank_zero import (
    is_rank_zero,
    rank_zero_debug,
    rank_zero_deprecation,
    rank_zero_info,
    rank_zero_only,
    rank_zero_warn,
    set_rank,
)
from ...errors import LightningDeprecationWarning

__all__ = [
    "LightningDeprecationWarning",
    "is_rank_zero",
    "rank_zero_debug",
    "rank_zero_deprecation",
    "rank_zero_info",
    "rank_zero_only",
    "rank_zero_warn",
    "set_rank",
]
