"""``lightning.fabric.plugins.precision.amp``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.mixed import MixedPrecision

__all__ = ["MixedPrecision"]
