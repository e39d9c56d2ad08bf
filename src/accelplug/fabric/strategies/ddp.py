"""``lightning.fabric.strategies.ddp``'s path (imports only)."""

from __future__ import annotations

from ...strategies.ddp import DDPStrategy

__all__ = ["DDPStrategy"]
