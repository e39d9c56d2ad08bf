"""``lightning.fabric.plugins.precision.bitsandbytes``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.quantized import BitsandbytesPrecision

__all__ = ["BitsandbytesPrecision"]
