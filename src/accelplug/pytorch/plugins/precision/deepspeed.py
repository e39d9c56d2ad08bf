"""``lightning.pytorch.plugins.precision.deepspeed``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.deepspeed import DeepSpeedPrecision
from ....precision.lightning.deprecated import DeepSpeedPrecisionPlugin

__all__ = ["DeepSpeedPrecision", "DeepSpeedPrecisionPlugin"]
