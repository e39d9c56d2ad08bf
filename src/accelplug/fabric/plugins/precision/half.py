"""``lightning.fabric.plugins.precision.half``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.half import HalfPrecision

__all__ = ["HalfPrecision"]
