"""``lightning.pytorch.accelerators.xla``'s path (imports only)."""

from __future__ import annotations

from ...backends import XLAAccelerator

__all__ = ["XLAAccelerator"]
