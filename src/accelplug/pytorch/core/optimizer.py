"""``lightning.pytorch.core.optimizer``'s path (imports only)."""

from __future__ import annotations

from ...core.optimizer import LightningOptimizer, do_nothing_closure

__all__ = ["LightningOptimizer", "do_nothing_closure"]
