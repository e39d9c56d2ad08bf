"""``lightning.pytorch.tuner``'s path: accelplug's ``Tuner``, the same object."""

from __future__ import annotations

from ...tuner import Tuner

__all__ = ["Tuner"]
