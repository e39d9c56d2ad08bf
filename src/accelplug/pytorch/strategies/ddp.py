"""``lightning.pytorch.strategies.ddp``'s path (imports only)."""

from __future__ import annotations

from ...strategies.ddp import DDP_FORK_NAMES as _DDP_FORK_ALIASES
from ...strategies.ddp import DDPStrategy

__all__ = ["_DDP_FORK_ALIASES", "DDPStrategy"]
