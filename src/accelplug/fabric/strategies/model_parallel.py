"""``lightning.fabric.strategies.model_parallel``'s path (imports only)."""

from __future__ import annotations

from ...strategies.model_parallel import FabricModelParallelStrategy as ModelParallelStrategy

__all__ = ["ModelParallelStrategy"]
