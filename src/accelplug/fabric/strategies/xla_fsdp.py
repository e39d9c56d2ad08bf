"""``lightning.fabric.strategies.xla_fsdp``'s path (imports only)."""

from __future__ import annotations

from ...backends import XLAFSDPStrategy

__all__ = ["XLAFSDPStrategy"]
