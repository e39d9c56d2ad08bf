"""``lightning.pytorch.trainer.trainer``'s path: accelplug's ``Trainer``."""

from __future__ import annotations

from ...trainer import Trainer

__all__ = ["Trainer"]
