"""``lightning.pytorch.core.datamodule``'s path: accelplug's ``LightningDataModule``."""

from __future__ import annotations

from ...core.datamodule import LightningDataModule

__all__ = ["LightningDataModule"]
