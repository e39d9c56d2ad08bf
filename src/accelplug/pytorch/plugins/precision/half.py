"""``lightning.pytorch.plugins.precision.half``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.deprecated import HalfPrecisionPlugin
from ....precision.lightning.half import HalfPrecision

__all__ = ["HalfPrecision", "HalfPrecisionPlugin"]
