"""``lightning.pytorch.core``'s path: the classes a user's script subclasses."""

from __future__ import annotations

from ...core.datamodule import LightningDataModule
from ...core.module import LightningModule

__all__ = ["LightningDataModule", "LightningModule"]
