"""``lightning.fabric.loggers.tensorboard``'s path (imports only): Lightning Fabric's ``TensorBoardLogger``."""

from __future__ import annotations

from ...loggers.tensorboard import FabricTensorBoardLogger as TensorBoardLogger

__all__ = ["TensorBoardLogger"]
