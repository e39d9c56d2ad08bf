"""``lightning.pytorch.plugins.precision.bitsandbytes``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.deprecated import BitsandbytesPrecisionPlugin
from ....precision.lightning.quantized import BitsandbytesPrecision

__all__ = ["BitsandbytesPrecision", "BitsandbytesPrecisionPlugin"]
