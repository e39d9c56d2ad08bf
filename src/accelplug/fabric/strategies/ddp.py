"""``lightning.fabric.strategies.ddp``'s path (imports only)."""

from __future__ import annotations

from ...selection import FORK_STRATEGIES as _DDP_FORK_ALIASES
from ...strategies.ddp import DDPStrategy

__all__ = ["_DDP_FORK_ALIASES", "DDPStrategy"]
