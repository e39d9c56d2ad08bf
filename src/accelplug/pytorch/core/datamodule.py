"""``lightning.pytorch.core.datamodule``'s path: accelplug's ``LightningDataModule``."""

from __future__ import annotations

from ...datamodule import LightningDataModule

__all__ = ["LightningDataModule"]
