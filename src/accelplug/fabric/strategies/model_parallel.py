"""``lightning.fabric.strategies.model_parallel``'s path (imports only)."""

from __future__ import annotations

from ...strategies.model_parallel import ModelParallelStrategy

__all__ = ["ModelParallelStrategy"]
