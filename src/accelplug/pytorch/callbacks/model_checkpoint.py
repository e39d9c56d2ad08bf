"""``lightning.pytorch.callbacks.model_checkpoint``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.model_checkpoint import ModelCheckpoint

__all__ = ["ModelCheckpoint"]
