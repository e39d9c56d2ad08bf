"""``lightning.fabric.plugins.precision.xla``'s path (imports only)."""

from __future__ import annotations

from ....backends import XLAPrecision

__all__ = ["XLAPrecision"]
