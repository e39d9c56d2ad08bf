"""``lightning.pytorch.callbacks.checkpoint``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.base import Checkpoint

__all__ = ["Checkpoint"]
