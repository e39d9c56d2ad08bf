"""``lightning.pytorch.plugins.precision.double``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.deprecated import DoublePrecisionPlugin, LightningDoublePrecisionModule
from ....precision.lightning.half import DoublePrecision

__all__ = ["DoublePrecision", "DoublePrecisionPlugin", "LightningDoublePrecisionModule"]
