"""``lightning.pytorch.callbacks.progress.progress_bar``'s path (imports only)."""

from __future__ import annotations

from ....callbacks.progress import ProgressBar, get_standard_metrics

__all__ = ["ProgressBar", "get_standard_metrics"]
