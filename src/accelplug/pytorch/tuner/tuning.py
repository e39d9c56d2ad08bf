"""``lightning.pytorch.tuner.tuning``'s path: accelplug's ``Tuner``, the same object."""

from __future__ import annotations

from ...tuner.tuning import Tuner

__all__ = ["Tuner"]
