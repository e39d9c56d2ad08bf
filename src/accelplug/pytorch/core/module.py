"""``lightning.pytorch.core.module``'s path: accelplug's ``LightningModule``."""

from __future__ import annotations

from ...core.module import LightningModule

__all__ = ["LightningModule"]
