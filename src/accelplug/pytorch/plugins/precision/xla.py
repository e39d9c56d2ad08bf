"""``lightning.pytorch.plugins.precision.xla``'s path (imports only)."""

from __future__ import annotations

from ....backends import XLAPrecision, XLAPrecisionPlugin

__all__ = ["XLAPrecision", "XLAPrecisionPlugin"]
