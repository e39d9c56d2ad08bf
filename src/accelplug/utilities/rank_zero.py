"""``lightning.pytorch.utilities.rank_zero``'s path: Fabric's rank-zero helpers, the same objects.

One ``rank_zero_only`` for the whole process: ``fabric.launch()`` and the Trainer's process setup set its
``rank``, and every decorated function reads it.
"""

from __future__ import annotations

import logging
from typing import Any

from ..fabric.utilities.rank_zero import (
    is_rank_zero,
    rank_zero_deprecation,
    rank_zero_info,
    rank_zero_only,
    rank_zero_warn,
)

__all__ = ["rank_zero_debug", "rank_zero_deprecation", "rank_zero_info", "rank_zero_only", "rank_zero_warn"]

_log = logging.getLogger(__name__)


def rank_zero_debug(*args: Any, stacklevel: int = 4, **kwargs: Any) -> None:
    """Log at DEBUG level on the global-zero process only (Lightning's ``rank_zero_debug``)."""
    if is_rank_zero():
        _log.debug(*args, stacklevel=stacklevel, **kwargs)
