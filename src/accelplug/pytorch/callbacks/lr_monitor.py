"""``lightning.pytorch.callbacks.lr_monitor``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.monitors import LearningRateMonitor

__all__ = ["LearningRateMonitor"]
