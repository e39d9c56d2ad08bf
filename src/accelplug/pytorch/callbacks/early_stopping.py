"""``lightning.pytorch.callbacks.early_stopping``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.early_stopping import EarlyStopping, EarlyStoppingReason, log

__all__ = ["EarlyStopping", "EarlyStoppingReason", "log"]
