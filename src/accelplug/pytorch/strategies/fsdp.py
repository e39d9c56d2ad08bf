"""``lightning.pytorch.strategies.fsdp``'s path (imports only)."""

from __future__ import annotations

from ...strategies.fsdp import FSDPStrategy

__all__ = ["FSDPStrategy"]
