"""``lightning.fabric.plugins.precision.deepspeed``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.deepspeed import FabricDeepSpeedPrecision as DeepSpeedPrecision

__all__ = ["DeepSpeedPrecision"]
