"""``lightning.pytorch.plugins.precision.fsdp``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.deprecated import FSDPMixedPrecisionPlugin, FSDPPrecisionPlugin
from ....precision.lightning.fsdp import FSDPPrecision

__all__ = ["FSDPMixedPrecisionPlugin", "FSDPPrecision", "FSDPPrecisionPlugin"]
