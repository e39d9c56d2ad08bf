"""``lightning.fabric.plugins.precision.double``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.half import DoublePrecision

__all__ = ["DoublePrecision"]
