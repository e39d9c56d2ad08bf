"""``lightning.pytorch.plugins.precision.deepspeed``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.deepspeed import DeepSpeedPrecision

__all__ = ["DeepSpeedPrecision"]
