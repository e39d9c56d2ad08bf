"""``lightning.pytorch.accelerators.cpu``'s path (imports only)."""

from __future__ import annotations

from ...accelerators.cpu import CPUAccelerator

__all__ = ["CPUAccelerator"]
