"""``lightning.pytorch.core.optimizer``'s path: ``accelplug.core.optimizer``, the same objects."""

from __future__ import annotations

from ...core.optimizer import LightningOptimizer, do_nothing_closure

__all__ = ["LightningOptimizer", "do_nothing_closure"]
