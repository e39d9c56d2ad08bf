"""``lightning.fabric.accelerators.mps``'s path (imports only)."""

from __future__ import annotations

from ...accelerators.mps import MPSAccelerator

__all__ = ["MPSAccelerator"]
