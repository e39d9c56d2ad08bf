"""``lightning.pytorch.strategies.deepspeed``'s path (imports only)."""

from __future__ import annotations

from ...backends import DeepSpeedStrategy

__all__ = ["DeepSpeedStrategy"]
