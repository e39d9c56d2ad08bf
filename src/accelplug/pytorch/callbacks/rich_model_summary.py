"""``lightning.pytorch.callbacks.rich_model_summary``'s path (imports only)."""

from __future__ import annotations

from ..._optional import _RICH_AVAILABLE as _RICH_AVAILABLE
from ...callbacks.model_summary import RichModelSummary

__all__ = ["RichModelSummary"]
