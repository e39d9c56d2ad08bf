"""``lightning.pytorch.core``'s path: the classes a user's script subclasses."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...core.datamodule import LightningDataModule
from ...core.module import LightningModule

__all__ = ["LightningDataModule", "LightningModule"]

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
