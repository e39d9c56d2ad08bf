"""``lightning.pytorch.utilities.enums``'s path: Lightning's string enums (:mod:`accelplug.trainer.options.enums`)."""

from __future__ import annotations

from ..trainer.options.enums import (
    GradClipAlgorithmType,
    LightningEnum,
)

__all__ = [
    "GradClipAlgorithmType",
    "LightningEnum",
]
