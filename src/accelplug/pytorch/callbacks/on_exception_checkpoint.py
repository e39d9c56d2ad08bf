"""``lightning.pytorch.callbacks.on_exception_checkpoint``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.on_exception_checkpoint import OnExceptionCheckpoint

__all__ = ["OnExceptionCheckpoint"]
