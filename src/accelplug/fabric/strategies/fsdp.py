"""``lightning.fabric.strategies.fsdp``'s path (imports only)."""

from __future__ import annotations

from ...strategies.fsdp import FabricFSDPStrategy as FSDPStrategy

__all__ = ["FSDPStrategy"]
