"""``lightning.pytorch.callbacks.model_summary``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.model_summary import ModelSummary

__all__ = ["ModelSummary"]
