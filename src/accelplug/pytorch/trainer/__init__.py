"""``lightning.pytorch.trainer``'s path: the Trainer and ``seed_everything``."""

from __future__ import annotations

from ...seed import seed_everything
from ...trainer import Trainer

__all__ = ["Trainer", "seed_everything"]
