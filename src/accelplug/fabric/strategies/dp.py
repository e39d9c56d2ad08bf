"""``lightning.fabric.strategies.dp``'s path (imports only)."""

from __future__ import annotations

from ...strategies.data_parallel import DataParallelStrategy

__all__ = ["DataParallelStrategy"]
