"""``lightning.fabric.plugins.precision.fsdp``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.fsdp import FSDPPrecision

__all__ = ["FSDPPrecision"]
